"""The figures a plan leads with (`HEADLINES`: label, attribute path in the typed plan, unit) and how a stored
fraction is shown (`shown`: MFU 0.41 -> 41 %). The page, the compare table and the PDF read the same list; split
from `planner/outputs/plan_view.py`, which still exports `HEADLINES`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["HEADLINES", "PERCENT_PATHS", "layout_text", "shown"]

# (label, attribute path in the typed plan, unit): the figures a plan leads with, in the page, the compare table and
# the PDF. The path is also the figure's key in `explain` and its element id on the page.
HEADLINES: list[tuple[str, str, str]] = [
    ("System", "cluster.system", ""),
    ("GPUs", "cluster.gpus", "GPUs"),
    ("Parallel layout", "training.parallelism", ""),
    ("Time to train (expected whole run, p50)", "training.days", "days"),
    ("Whole-run range (p10 - p90)", "training.days_range", "days"),
    ("GPU-hours (whole run, p50)", "training.gpu_hours", "GPU-hours"),
    ("Steady-state time to train", "training.days_ideal", "days"),
    ("Steady-state throughput", "training.tokens_per_s", "tokens/s"),
    ("MFU (steady state)", "training.mfu", "%"),
    ("Step time (steady state)", "training.step_time_s", "s"),
    ("Memory per GPU", "training.memory_per_gpu_gib", "GiB"),
    ("Replicas", "inference.replicas", ""),
    ("Time to first token", "inference.ttft_ms", "ms"),
    ("Time per output token", "inference.tpot_ms", "ms"),
    ("Fleet throughput", "inference.tokens_per_s", "tok/s"),
    ("Compute racks", "cluster.racks", ""),
    ("IT power (racks + optics in cables)", "power.it_kw", "kW"),
    ("Facility power", "power.facility_kw", "kW"),
    ("Cooling", "cooling.method", ""),
    ("Capex (BOM total)", "costs.onprem.capex_usd", "USD"),
    ("TCO over the horizon (capex + running costs, nominal)", "costs.onprem.tco_usd", "USD"),
    ("NPV of owning over the horizon", "costs.onprem.finance.npv_usd", "USD"),
    ("Job cost on the owned cluster (capital charge + running costs)", "costs.onprem.job_usd_shared", "USD"),
    ("Job cost if bought for this job alone (less resale)", "costs.onprem.job_usd", "USD"),
    ("Cheapest option for this job", "costs.comparison.cheapest.job_usd", "USD"),
]
# Stored as fractions (0.41), shown as percentages (41 %).
PERCENT_PATHS = {"training.mfu"}


def shown(path: str, value: Any) -> Any:
    """A stored fraction as the percentage a reader expects (MFU 0.41 -> 41); the training layout in words; any
    other value unchanged."""
    if path == "training.parallelism" and value is not None:
        return layout_text(value)
    return value * 100 if path in PERCENT_PATHS and isinstance(value, int | float) else value


def layout_text(p: Any) -> str:
    """A training layout as practitioners write it: "TP 2 · PP 1 · DP 64 · micro-batch 1 · ZeRO-3 · no recompute ·
    63 layers' activations in host memory" (degrees of 1 beyond TP, PP and DP left out; context parallelism with
    its exchange method, "CP 4 (ring)"; uneven pipeline stages named by their end stages)."""
    parts = [f"TP {p.tp}", f"PP {p.pp}", f"DP {p.dp}"]
    if p.cp > 1:
        cp_comm = getattr(p, "cp_comm", None)
        windowed = getattr(p, "cp_comm_windowed", None)
        how = cp_comm.replace("_", "-") if cp_comm else ""
        if windowed and windowed != cp_comm:
            how += f"; windowed layers {windowed.replace('_', '-')}"
        parts.append(f"CP {p.cp}" + (f" ({how})" if how else ""))
    if p.ep > 1:
        parts.append(f"EP {p.ep}")
    if p.ep > 1 and p.tp > 1 and getattr(p, "etp", None) == 1:
        parts.append("experts folded over TP")
    if p.ep > 1 and getattr(p, "ep_overlap", None):
        parts.append("expert all-to-alls overlapped")
    if p.interleave > 1:
        parts.append(f"{p.interleave} virtual stages")
    layers = tuple(p.stage_layers)
    if len(layers) > 1 and len(set(layers)) > 1:
        parts.append(f"stages of {min(layers)}-{max(layers)} layers (first {layers[0]}, last {layers[-1]})")
    parts += [f"micro-batch {p.micro_batch}", f"ZeRO-{p.zero_stage}"]
    parts.append("no recompute" if p.recompute == "none" else f"{p.recompute} recompute")
    if p.offload != "none":
        parts.append("optimizer state in host memory" + (" with gradients" if p.offload != "optimizer" else ""))
    if p.activation_offload_layers:
        parts.append(f"{p.activation_offload_layers} layers' activations in host memory")
    return " · ".join(parts)
