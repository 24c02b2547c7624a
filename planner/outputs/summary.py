"""Answer first: the summary band at the top of the plan page and the PDF's first page.

What a reader needs before anything else: what to buy, how long it takes, what it draws, what it costs, build or
rent, and what could make the answer wrong. Everything here is read from the stored result (the verdict sentence
is the engine's own, word for word, so page, PDF and API say the same thing); values are formatted once, with the
rules of `formatting`, so the page and the PDF show identical text.

Why the racks figure counts every rack: the rack elevations draw compute, network and management racks, and a
headline that counted only the compute racks ("Racks 13" beside 25 racks drawn) read as a contradiction. Why IT
power and the racks' kW differ: the optics in the cables draw power that no rack carries, so the band names both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .formatting import catalog_name, money, number, power, words
from .stored_plan import lookup
from .view_models import KeyFigure, SummaryBand

if TYPE_CHECKING:
    from .plan_view import PlanView

__all__ = ["snapshot_label", "summary_band", "system_name"]

MAX_RISKS = 5
# A parenthesis holding a file path (a fixture folder, a temporary directory) says nothing to a reader.
_PATH_IN_PARENS = re.compile(r"\s*\([^()]*[/\\][^()]*\)")


def summary_band(view: PlanView) -> SummaryBand:
    """The verdict, four to six headline figures (with ranges where the plan has them) and the top risks."""
    result = view.result
    costs = view.costs
    verdict = costs.verdict if costs else None
    figures = [
        f
        for f in (
            _gpus(view),
            _time(view),
            _power(view),
            _racks(view),
            _capex(view),
            _cheapest(view),
        )
        if f is not None
    ]
    return SummaryBand(
        choice=verdict.choice if verdict else None,
        sentence=verdict.sentence if verdict else None,
        figures=tuple(figures),
        risks=tuple(_risks(view))[:MAX_RISKS] if result else (),
    )


def system_name(view: PlanView) -> str | None:
    """The chosen system as its maker names it ("NVIDIA DGX B200"), from the racked devices, else the catalog."""
    result = view.result
    if result is None or result.cluster is None:
        return None
    racks = result.racks
    for rack in racks.layout if racks else ():
        for item in rack.items:
            if item.kind == "system" and item.label:
                return item.label
    return catalog_name(result.cluster.system)


def snapshot_label(snapshot: Mapping[str, Any] | None) -> str | None:
    """The price snapshot as a reader needs it: what the prices are, where from, and the date they were read."""
    if not snapshot:
        return None
    source = _PATH_IN_PARENS.sub("", str(snapshot.get("source") or "")).strip()
    source = source.replace("AWS recorded responses", "AWS price lists (recorded)")
    date = str(snapshot.get("fetched_at") or "")[:10]
    text = f"Cloud prices: {source}" if source else "Cloud prices"
    return f"{text}, read {date}" if date else text


def _gpus(view: PlanView) -> KeyFigure | None:
    cluster = view.result.cluster if view.result else None
    if cluster is None:
        return None
    note = f"{cluster.systems:,} x {system_name(view)}"
    if cluster.hot_spares is not None and cluster.hot_spares.systems:  # elastic recovery's spares
        note += f" ({cluster.hot_spares.systems:,} of them hot spares)"
    if cluster.job_gpus and cluster.job_gpus != cluster.gpus:
        note += f"; the job uses {cluster.job_gpus:,}"
    return KeyFigure("GPUs", number(cluster.gpus), "GPUs", None, note, "compute")


def _time(view: PlanView) -> KeyFigure | None:
    result = view.result
    training = result.training if result else None
    if training is not None:
        spread = training.days_range
        rng = f"{spread.p10:,.1f} - {spread.p90:,.1f} days (p10 - p90)" if spread else None
        deadline = lookup(result.request, "training.deadline_days")
        note = f"expected whole run; deadline {number(deadline)} days" if deadline else "expected whole run"
        return KeyFigure("Time to train", f"{training.days:,.1f}", "days", rng, note, "compute")
    inference = result.inference if result else None
    if inference is not None:
        value = f"{inference.ttft_ms:,.0f} / {inference.tpot_ms:,.1f}"
        note = f"first token / each output token; {inference.replicas:,} replicas"
        return KeyFigure("Serving latency", value, "ms", None, note, "compute")
    return None


def _power(view: PlanView) -> KeyFigure | None:
    result = view.result
    if result is None or result.power is None:
        return None
    p = result.power
    note = f"IT {power(p.it_kw)} x PUE {p.pue:g}" if getattr(p, "pue", None) else f"IT {power(p.it_kw)}"
    if result.bom is None:  # a rented system: the draw an equivalent build would have, for the energy estimate
        note = f"rented, nothing built on site: what an equivalent build would draw ({note}), for the energy estimate"
    value, unit = power(p.facility_kw).split(" ")
    return KeyFigure("Facility power", value, unit, None, note, "facility")


def _racks(view: PlanView) -> KeyFigure | None:
    result = view.result
    racks = result.racks if result else None
    cluster = result.cluster if result else None
    if racks is None and cluster is None:
        return None
    cooling = words(result.cooling.method) if result.cooling else None
    if racks is not None and racks.total:
        roles = ", ".join(f"{n:,} {role}" for role, n in racks.by_role.items() if n)
        note = roles + (f"; {cooling}" if cooling else "")
        return KeyFigure("Racks", number(racks.total), "racks", None, note, "facility")
    if result.bom is None:  # a rented system: the engine sized an equivalent server's racks for energy only
        note = "rented, nothing built on site: an equivalent server's racks, for the energy estimate"
        return KeyFigure("Racks", number(cluster.racks), "compute racks", None, note, "facility")
    return KeyFigure("Racks", number(cluster.racks), "compute racks", None, cooling, "facility")


def _capex(view: PlanView) -> KeyFigure | None:
    costs = view.costs
    onprem = costs.onprem if costs else None
    if onprem is None or onprem.capex_usd is None:
        return None
    band = onprem.capex_range  # the engine's figure (engine/costing/capex_range.py); absent from older plans
    rng = f"{money(band.low_usd)} - {money(band.high_usd)} by price basis" if band is not None else None
    incomplete = costs.coverage and costs.coverage.unpriced_lines
    note = "a lower bound: some BOM lines have no price" if incomplete else "BOM total, hardware to installation"
    return KeyFigure("Capex to build", money(onprem.capex_usd), "", rng, note, "bom")


def _cheapest(view: PlanView) -> KeyFigure | None:
    costs = view.costs
    verdict = costs.verdict if costs else None
    if verdict is None:
        return None
    option = (
        next((o for o in costs.comparison.options if o.label == verdict.option), None) if costs.comparison else None
    )
    rng = None
    # a range only when its ends differ as shown ("done in 25.8 - 25.8 days" said nothing)
    if option is not None and f"{option.finish_days_p90:,.1f}" != f"{option.finish_days:,.1f}":
        # the second figure is what the deadline judged: spot's interruptions at their p90, or every option's whole
        # run at its p90 when the deadline is to be met at p90
        at_p90 = costs.comparison is not None and costs.comparison.deadline_percentile == "p90"
        spot = option.option == "spot"
        case = (
            ("whole run and spot interruptions, p50 - p90" if spot else "whole run p50 - p90")
            if at_p90
            else "spot interruptions p50 - p90"
        )
        rng = f"done in {option.finish_days:,.1f} - {option.finish_days_p90:,.1f} days ({case})"
    note = f"{verdict.choice}: {verdict.option}"
    return KeyFigure("Cheapest obtainable option", money(verdict.job_usd), "", rng, note, "costs")


def problems_not_in_summary(view: PlanView) -> list[str]:
    """An infeasible plan's problems the summary's risks do not already say, for the card under Compute (it
    repeated them): the first reason the engine gave and any deadline risk are in the summary; the rest are not."""
    shown = set(_risks(view)[:MAX_RISKS]) if view.result else set()
    said = {r.removeprefix("The target cannot be met as asked: ") for r in shown}
    return [p for p in view.problems if p not in said]


def _risks(view: PlanView) -> list[str]:
    """What could make the answer wrong, most serious first: an infeasible target, no obtainable option, deadline
    risk, prices that are old or only assumed, options that cannot compete, unpriced BOM lines."""
    out: list[str] = []
    result = view.result
    if not view.feasible:
        # the view's problems name products and say engine prose in words (PlanView.problems)
        first = view.problems[0] if result.problems else "see below."
        out.append("The target cannot be met as asked: " + first)
    out += [p for p in view.problems if p.startswith("Deadline risk")]
    if batch := _batch_risk(view):
        out.append(batch)
    costs = view.costs
    if costs is None or not costs.available:
        return out
    if costs.verdict is None:
        out.append("No option can be obtained in time: every build and rent option is ruled out (see the options).")
    options = costs.comparison.options if costs.comparison else ()
    excluded = [o for o in options if o.obtainable is False]
    if excluded:
        out.append(
            f"{len(excluded)} of {len(options)} options cannot compete (deadline, fleet size or price "
            "rules); the options table says why for each."
        )
    warnings = costs.price_warnings or ()
    if warnings:
        providers = sorted({w.split(" prices ")[0].split(" assumptions")[0] for w in warnings})
        out.append(
            f"Prices to check: {', '.join(providers)} rows rest on prices older than the staleness limit or on "
            "assumptions, not published prices."
        )
    if view.price_snapshot and view.price_snapshot.get("stale"):
        out.append("The price snapshot is stale: refresh prices before relying on the cloud figures.")
    unpriced = costs.coverage.unpriced_lines if costs.coverage else ()
    # a lower bound of a capex that exists: a rented system's plan has no capex, and its unpriced "line" is the
    # rented system itself
    if unpriced and costs.onprem is not None and costs.onprem.capex_usd is not None:
        out.append(f"Capex is a lower bound: {len(unpriced)} BOM line(s) have no sourced price.")
    return out


def _batch_risk(view: PlanView) -> str | None:
    """A plan that trains on another global batch than the one asked for says so up front: at 100,000 GPUs the
    nearest batch that divides the layout can be many times the request, and every day and dollar assumes it."""
    training = view.result.training if view.result else None
    if training is None or not training.batch_note or not training.global_batch_sequences_requested:
        return None
    asked, used = training.global_batch_sequences_requested, training.global_batch_sequences
    return (
        f"Batch differs from the request: the plan trains on {used:,} sequences per step, not the {asked:,} asked "
        f"({used / asked:.1f} x); its time and cost assume that batch trains as well as the requested one (see Notes)."
    )
