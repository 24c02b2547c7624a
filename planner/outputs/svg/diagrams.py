"""Which diagrams a plan gets, laid out for the page or for the PDF.

The page and the downloads get one drawing per kind at the diagram card's width; the PDF gets the same drawings
laid out for the A4 text column (so they print at their own size, text 7.5 pt or larger), with the rack
elevations split into drawings a page can hold. The floor plan is drawn when the plan has more than
`FLOOR_MIN_RACKS` racks: a handful of racks is already plain from the elevations.
"""

from __future__ import annotations

from planner.outputs.plan_view import PlanView

from .base import PAGE_WIDTH_PX, PRINT_HEIGHT_PX, PRINT_WIDTH_PX
from .floor import floor_svg
from .racks import racks_svg, racks_svg_pages
from .topology import topology_svg

__all__ = ["page_diagrams", "print_diagrams"]

FLOOR_MIN_RACKS = 9


def _has_floor(view: PlanView) -> bool:
    return view.racks is not None and len(view.racks.racks) >= FLOOR_MIN_RACKS


def page_diagrams(view: PlanView, width_px: float = PAGE_WIDTH_PX) -> dict[str, str]:
    """{kind: SVG text} for the kinds the plan's data supports: topology, racks, floor."""
    diagrams = {}
    if view.topology is not None:
        diagrams["topology"] = topology_svg(view.topology, width_px)
    if view.racks is not None:
        diagrams["racks"] = racks_svg(view.racks, width_px)
        if _has_floor(view):
            diagrams["floor"] = floor_svg(view.racks, width_px)
    return diagrams


def print_diagrams(view: PlanView) -> list[str]:
    """The same drawings for the PDF, in order, each no wider than the A4 column and no taller than a page."""
    out = []
    if view.topology is not None:
        out.append(topology_svg(view.topology, PRINT_WIDTH_PX))
    if view.racks is not None:
        if _has_floor(view):
            out.append(floor_svg(view.racks, PRINT_WIDTH_PX))
        out.extend(racks_svg_pages(view.racks, PRINT_WIDTH_PX, PRINT_HEIGHT_PX))
    return out
