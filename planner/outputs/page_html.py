"""The plan page's owner-independent HTML, rendered once per stored result and kept with the charts (page_cache).

For a 16,384-GPU plan, Django's template engine spent about 200 of the page's 300 ms laying out the same long
sections on every view (derivations, assumptions, BOM, systems considered, stage tables, each value through the
formatting filters), and decoding the stored plan for them another 50 ms. None of those sections depends on who
asks or when: they are a function of the stored result, the plan's id (its URLs) and the code and templates that
draw them. So they are rendered here, without a request, from the templates under `templates/planner/page/`, and
kept in the page-parts file whose name carries the result's digest and the code digest (templates included).

What must never be kept: anything of the request or the user (the CSRF token, the user's name, messages), and the
plan's mutable fields (its name, its runs, its parent). The fragment templates are rendered with a context that
holds none of those (no request, so no context processor runs), and the page wraps the fragments that sit inside
a form with the live form tag and its token (plan_detail.html, _whatif.html).
"""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from .charts import PageChart
from .plan_view import PlanView
from .summary import problems_not_in_summary

__all__ = ["FRAGMENTS", "page_html"]

# Fragment name -> template. The page places them in this order, live parts (what-if form, re-plan form) between.
FRAGMENTS: dict[str, str] = {
    "meta": "planner/page/meta.html",
    "lead": "planner/page/lead.html",
    "whatif": "planner/page/whatif_fields.html",
    "middle": "planner/page/middle.html",
    "assumptions_head": "planner/page/assumptions_head.html",
    "assumptions": "planner/page/assumptions.html",
    "tail": "planner/page/tail.html",
}


def _context(plan_pk: int, view: PlanView, charts: dict[str, PageChart], diagrams: dict[str, str], plan_json: str):
    from planner.whatif import whatif_fields

    return {
        "plan": {"pk": plan_pk},  # the id only: a plan's name and runs change without a new result
        "view": view,
        "candidates": view.candidates_table,
        "headlines": view.headlines,
        "charts": charts,
        "diagrams": diagrams,
        "plan_json": plan_json,
        "bom": view.bom,
        "whatif": whatif_fields(view),
        "other_problems": problems_not_in_summary(view) if not view.feasible else [],
    }


def page_html(
    plan_pk: int, view: PlanView, charts: dict[str, PageChart], diagrams: dict[str, str], plan_json: str
) -> dict[str, str]:
    """Every fragment's HTML for this plan result ({} for a plan without a result). A fragment with nothing to
    show (no what-if fields, no assumptions) is left out, so the page can test for it."""
    if not view:
        return {}
    context: dict[str, Any] = _context(plan_pk, view, charts, diagrams, plan_json)
    html = {name: render_to_string(template, context).strip() for name, template in FRAGMENTS.items()}
    if not context["whatif"]:
        html.pop("whatif")
    if not view.assumptions:
        html.pop("assumptions")
        html.pop("assumptions_head")
    return html
