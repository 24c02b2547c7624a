"""Turn a plan's result into the small structures pages, the PDF and the compare view show.

One place decides what the headline figures are, so the result page, the compare table and
the PDF report never disagree about which numbers matter or how they are labelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

# (label, path in the plan, unit)
HEADLINES: list[tuple[str, str, str]] = [
    ("System", "cluster.system", ""),
    ("GPUs", "cluster.gpus", "GPUs"),
    ("Time to train", "training.days", "days"),
    ("Ideal time to train", "training.days_ideal", "days"),
    ("MFU", "training.mfu", "%"),
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
    ("This job on a shared cluster", "costs.onprem.job_usd_shared", "USD"),
    ("Cheapest option for this job", "costs.comparison.cheapest.job_usd", "USD"),
]


# Stored as fractions (0.41), shown as percentages (41 %).
PERCENT_PATHS = {"training.mfu"}


def _shown(path: str, value: Any) -> Any:
    return value * 100 if path in PERCENT_PATHS and isinstance(value, int | float) else value


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
            figures.append(Figure(label, path, _shown(path, value), unit, explain.get(path)))
    return figures


def comparison_table(results: list[dict | None]) -> list[dict[str, Any]]:
    """Rows of {label, unit, values[...]} for every headline figure any of the plans has."""
    rows = []
    for label, path, unit in HEADLINES:
        values = [_shown(path, lookup(result or {}, path)) for result in results]
        if any(value is not None for value in values):
            rows.append({"label": label, "path": path, "unit": unit, "values": values})
    return rows


@dataclass(frozen=True)
class BomGroup:
    category: str
    lines: list[dict]
    subtotal_usd: Decimal | None


def _line_total(line: dict) -> Decimal | None:
    if line.get("extended_price_usd") not in (None, ""):
        return Decimal(str(line["extended_price_usd"]))
    if line.get("unit_price_usd") not in (None, ""):
        return Decimal(str(line["unit_price_usd"])) * Decimal(str(line.get("quantity", 0)))
    return None


def bom_summary(lines: list[dict] | None) -> dict[str, Any]:
    """BOM lines grouped by category (in first-seen order) with Decimal subtotals and a total.

    A group or the total is None when any of its lines is unpriced: a partial sum shown as a
    total would understate the build.
    """
    groups: dict[str, list[dict]] = {}
    for line in lines or []:
        groups.setdefault(str(line.get("category") or "other"), []).append(line)
    result = []
    for category, members in groups.items():
        totals = [_line_total(line) for line in members]
        subtotal = sum(totals, Decimal(0)) if all(t is not None for t in totals) else None
        result.append(BomGroup(category, members, subtotal))
    subtotals = [group.subtotal_usd for group in result]
    total = sum(subtotals, Decimal(0)) if result and all(s is not None for s in subtotals) else None
    return {"groups": result, "total_usd": total, "line_count": sum(len(g.lines) for g in result)}


def rack_units_of(item_id: str) -> tuple[int, str]:
    """(rack units, kind) of a system or part id, from the catalog (for rack elevations)."""
    from engine import load_catalog

    catalog = load_catalog()
    if item_id in catalog.systems:
        return catalog.systems[item_id].rack_units, "system"
    part = catalog.parts.parts.get(item_id)
    return (part.rack_units, part.kind) if part else (0, "other")


def plan_diagrams(result: dict | None) -> dict[str, str]:
    """The plan's SVG diagrams (topology, racks) that its data supports, as SVG text."""
    from .outputs.svg.racks import racks_svg
    from .outputs.svg.topology import topology_svg

    diagrams = {}
    if result and result.get("fabric"):
        diagrams["topology"] = topology_svg(result)
    if result and (result.get("racks") or {}).get("layout"):
        diagrams["racks"] = racks_svg(result, rack_units_of)
    return diagrams


def report_context(plan: Any) -> dict[str, Any]:
    """What the PDF report shows (shared by the web and API downloads)."""
    result = plan.result or {}
    return {
        "plan": plan,
        "result": result,
        "headlines": headline_figures(result),
        "bom": bom_summary(result.get("bom")),
        "diagrams": list(plan_diagrams(result).values()),
    }


def record_table(records: list[dict] | None) -> dict:
    """Rows of dicts -> one header (the union of keys, first-seen order) and aligned rows."""
    records = records or []
    # Nested structures (search statistics, frontiers) have their own views; the table keeps scalars.
    columns = list(dict.fromkeys(
        key for record in records for key, value in record.items() if not isinstance(value, dict | list)
    ))
    return {"columns": columns, "rows": [[record.get(key) for key in columns] for record in records]}
