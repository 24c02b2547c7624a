"""The figures a plan leads with (`HEADLINES`: label, attribute path in the typed plan, unit) and how a stored
fraction is shown (`shown`: MFU 0.41 -> 41 %). The page, the compare table and the PDF read the same list; split
from `planner/outputs/plan_view.py`, which still exports `HEADLINES`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["HEADLINES", "PERCENT_PATHS", "shown"]

# (label, attribute path in the typed plan, unit): the figures a plan leads with, in the page, the compare table and
# the PDF. The path is also the figure's key in `explain` and its element id on the page.
HEADLINES: list[tuple[str, str, str]] = [
    ("System", "cluster.system", ""),
    ("GPUs", "cluster.gpus", "GPUs"),
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
    """A stored fraction as the percentage a reader expects (MFU 0.41 -> 41); any other value unchanged."""
    return value * 100 if path in PERCENT_PATHS and isinstance(value, int | float) else value
