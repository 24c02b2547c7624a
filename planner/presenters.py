"""Turn a plan's result into the small structures pages, the PDF and the compare view show.

One place decides what the headline figures are, so the result page, the compare table and
the PDF report never disagree about which numbers matter or how they are labelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# (label, path in the plan, unit)
HEADLINES: list[tuple[str, str, str]] = [
    ("System", "cluster.system", ""),
    ("GPUs", "cluster.gpus", "GPUs"),
    ("Time to train", "training.days", "days"),
    ("Ideal time to train", "training.days_ideal", "days"),
    ("MFU", "training.mfu", ""),
    ("Step time", "training.step_time_s", "s"),
    ("Memory per GPU", "training.memory_per_gpu_gib", "GiB"),
    ("Replicas", "inference.replicas", ""),
    ("Time to first token", "inference.ttft_ms", "ms"),
    ("Time per output token", "inference.tpot_ms", "ms"),
    ("Fleet throughput", "inference.tokens_per_s", "tok/s"),
    ("Racks", "cluster.racks", ""),
    ("IT power", "power.it_kw", "kW"),
    ("Facility power", "power.facility_kw", "kW"),
    ("Cooling", "cooling.method", ""),
    ("Capex", "costs.onprem.capex_usd", "USD"),
    ("TCO", "costs.onprem.tco_usd", "USD"),
    ("This job on-prem", "costs.onprem.job_usd", "USD"),
]


def lookup(data: Any, path: str) -> Any:
    """`a.b.c` in nested dicts, or None when any step is missing."""
    for key in path.split("."):
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


@dataclass(frozen=True)
class Figure:
    label: str
    path: str
    value: Any
    unit: str
    explain: dict | None


def headline_figures(result: dict | None) -> list[Figure]:
    """The headline figures this plan has (a stage not modelled has none), with their explain entries."""
    if not result:
        return []
    explain = result.get("explain") or {}
    figures = []
    for label, path, unit in HEADLINES:
        value = lookup(result, path)
        if value is not None:
            figures.append(Figure(label, path, value, unit, explain.get(path)))
    return figures


def comparison_table(results: list[dict | None]) -> list[dict[str, Any]]:
    """Rows of {label, unit, values[...]} for every headline figure any of the plans has."""
    rows = []
    for label, path, unit in HEADLINES:
        values = [lookup(result or {}, path) for result in results]
        if any(value is not None for value in values):
            rows.append({"label": label, "path": path, "unit": unit, "values": values})
    return rows
