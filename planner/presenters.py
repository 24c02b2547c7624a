"""Assemble what pages, the PDF and the compare view show, from the plan's stored result.

Every figure comes from `planner.outputs.plan_view`, the one reader of the stored plan (decoded there into the
typed `PlanResult`), so the result page, the compare table and the PDF report never disagree about which numbers
matter, how they are labelled, or what they are: nothing here consults the live catalog or prices.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from planner.adapter import PlanResult

from .outputs.plan_view import HEADLINES, PlanView, lookup, plan_view
from .outputs.view_models import BomView

__all__ = [
    "bom_summary",
    "comparison_table",
    "lookup",
    "plan_diagrams",
    "report_context",
]

Stored = Mapping[str, Any] | PlanResult | PlanView | None


def comparison_table(results: list[Stored]) -> list[dict[str, Any]]:
    """Rows of {label, unit, values[...]} for every headline figure any of the plans has."""
    views = [plan_view(result) for result in results]
    rows = []
    for label, path, unit in HEADLINES:
        values = [view.value(path) for view in views]
        if any(value is not None for value in values):
            rows.append({"label": label, "path": path, "unit": unit, "values": values})
    return rows


def bom_summary(result: Stored) -> BomView:
    """The plan's BOM grouped by category, with the stored extended prices, subtotals and the plan's total."""
    return plan_view(result).bom


def plan_diagrams(result: Stored) -> dict[str, str]:
    """The plan's SVG diagrams (topology, racks, floor) that its data supports, as SVG text for the page."""
    from .outputs.svg.diagrams import page_diagrams

    return page_diagrams(plan_view(result))


def _print_diagrams(view: PlanView) -> list[str]:
    """The same diagrams laid out for the PDF's A4 column (printed at their own size, split to fit pages)."""
    from .outputs.svg.diagrams import print_diagrams

    return print_diagrams(view)


def report_context(plan: Any) -> dict[str, Any]:
    """What the PDF report shows (shared by the web and API downloads)."""
    view = plan_view(plan.result)
    return {
        "plan": plan,
        "view": view,
        # The layout reads as a sentence: it has its own row below the two-column grid of figures.
        "headlines": [f for f in view.headlines if f.path != "training.parallelism"],
        "layout": next((f.value for f in view.headlines if f.path == "training.parallelism"), None),
        "bom": view.bom,
        "diagrams": _print_diagrams(view),
    }
