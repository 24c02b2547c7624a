"""Which candidate system the plan chooses, and the `selection` block that says by what rule.

Why apart from the chain: the rule (lowest estimated on-prem cost when every feasible system is priced, else the
lowest IT energy or power) and its wording for the reader change together, and neither depends on how the
candidates were sized (`engine/candidate.py`).
"""

from __future__ import annotations

from engine.assumptions.registry import Assumptions
from engine.candidate import ChainCandidate
from engine.catalog.hardware import Catalog
from engine.physical.build import PhysicalBuild, physical_for_plan
from engine.physical.fabric.campus_links import MEDIUM_PROBLEM
from engine.request.spec import PlanRequest
from engine.result.sizing import Selection
from engine.search.selection import SelectionPrices
from engine.search.training import TrainingResult
from engine.workload.model import Workload

__all__ = ["choose_buildable", "selection_block"]


def _unpriced(cands: list[ChainCandidate], prices: SelectionPrices | None) -> list[str]:
    """Feasible candidates without a system price (any one of them sends the choice back to the energy rule)."""
    if prices is None:
        return []
    return [c.system.id for c in cands if c.feasible and c.system.id not in prices.system_usd]


def _select(cands: list[ChainCandidate], prices: SelectionPrices | None) -> ChainCandidate | None:
    """Lowest selection_usd when every feasible candidate is priced, else lowest energy (score); fewer GPUs, id."""
    feasible = [c for c in cands if c.feasible]
    if not feasible:
        return None
    if prices is not None and not _unpriced(cands, prices):
        priced = prices
        return min(feasible, key=lambda c: (c.selection_usd(priced) or 0.0, c.score()[1], c.system.id))
    return min(feasible, key=lambda c: c.score())


_COST_TRAINING = "systems x system_usd + it_kw x PUE x days x 24 x electricity_usd_per_kwh"
_COST_INFERENCE = "systems x system_usd + it_kw x PUE x 8760 x utilization x years x electricity_usd_per_kwh"


def _selection_rule(
    request: PlanRequest, prices: SelectionPrices | None = None, unpriced: list[str] | None = None
) -> str:
    if request.hardware.system != "auto":
        return f"system fixed by the request: {request.hardware.system}"
    training = request.training is not None
    if prices is not None and not unpriced:
        within = (
            "each at the smallest GPU count that meets the deadline"
            if training and request.training is not None and request.training.deadline_days is not None
            else "each at its best plan"
        )
        return (
            f"auto, by cost: every catalog system is sized ({within}); the feasible one with the lowest estimated "
            f"on-prem cost of this job wins, selection_usd = {_COST_TRAINING if training else _COST_INFERENCE} "
            "(system prices and electricity from the pricing references with this plan's overrides); ties broken "
            "by fewer GPUs."
        )
    why = (
        "Prices are not used yet."
        if prices is None
        else f"Prices are not used: no system price for {', '.join(unpriced or [])}, so the cost rule cannot rank "
        "every candidate and the energy rule applies."
    )
    if training:
        return (
            "auto: every catalog system is sized; the feasible one with the lowest IT energy for the job "
            f"(it_kw x days x 24) wins, ties broken by fewer GPUs. {why}"
        )
    return (
        "auto: every catalog system is sized; the feasible one with the lowest IT power (it_kw) wins, ties "
        f"broken by fewer GPUs. {why}"
    )


# The selection's price inputs as a reader names them (the explain source lists each with its public source).
_PRICE_INPUT_NAMES = {
    "system_usd": "System prices",
    "pue": "PUE",
    "electricity_usd_per_kwh": "Electricity price",
    "utilization": "Utilisation",
    "years": "Horizon",
}


def selection_block(
    request: PlanRequest, cands: list[ChainCandidate], chosen: ChainCandidate | None, prices: SelectionPrices | None
) -> tuple[Selection, dict[str, dict[str, object]]]:
    """The plan's `selection` block and, when prices were given for an auto choice, its `explain` entry."""
    unpriced = _unpriced(cands, prices)
    rule = _selection_rule(request, prices, unpriced)
    system = chosen.system.id if chosen else None
    if prices is None:
        return Selection(rule=rule, system=system), {}
    auto = request.hardware.system == "auto"
    basis = "fixed" if not auto else ("energy" if unpriced else "cost")
    selection = Selection(rule=rule, system=system, basis=basis, unpriced_systems=tuple(unpriced))
    if not auto or chosen is None:
        return selection, {}
    assert chosen.build is not None and chosen.facility is not None
    training = isinstance(chosen.sizing, TrainingResult)
    ranking = {c.system.id: c.selection_usd(prices) for c in cands if c.feasible}
    inputs: dict[str, object] = {
        "basis": basis,
        "systems": chosen.build.systems,
        "system_usd": prices.system_usd.get(chosen.system.id),
        "it_kw": chosen.facility.it_kw,
        "pue": chosen.facility.pue,
        "electricity_usd_per_kwh": prices.electricity_usd_per_kwh,
    }
    if training:
        assert isinstance(chosen.sizing, TrainingResult)
        inputs["days"] = chosen.sizing.days
    else:
        inputs.update({"utilization": prices.utilization, "years": prices.years})
    inputs["selection_usd_by_system"] = {k: None if v is None else round(v, 2) for k, v in ranking.items()}
    if basis == "cost":
        formula = "min over feasible systems of " + (_COST_TRAINING if training else _COST_INFERENCE)
    else:
        formula = (
            "min over feasible systems of "
            + ("it_kw x days x 24 (IT energy)" if training else "it_kw (IT power)")
            + f"; cost rule not used: no system price for {', '.join(unpriced)}"
        )
        inputs["unpriced_systems"] = unpriced
    used = ("system_usd", "pue", "electricity_usd_per_kwh") + (() if training else ("utilization", "years"))
    source = (
        "; ".join(f"{_PRICE_INPUT_NAMES.get(k, k)}: {prices.sources[k]}" for k in used if k in prices.sources)
        or "the prices given with the request"
    )
    return selection, {"selection.system": {"formula": formula, "inputs": inputs, "source": source}}


def choose_buildable(
    request: PlanRequest,
    work: Workload,
    cands: list[ChainCandidate],
    prices: SelectionPrices | None,
    catalog: Catalog,
    a: Assumptions,
) -> tuple[ChainCandidate | None, PhysicalBuild | None]:
    """The chosen candidate and its physical build. A build with a link no catalog medium spans (a campus run
    longer than every optic's reach) cannot be cabled, so that candidate becomes infeasible with the reason and
    the next one is chosen; only the chosen candidates are laid out, because the campus follows the rack layout."""
    while (chosen := _select(cands, prices)) is not None:
        assert chosen.build is not None
        physical = physical_for_plan(request, chosen.system, chosen.build, chosen.sizing, work.params, catalog, a)
        unspanned = [p for p in (physical.problems if physical is not None else []) if p.startswith(MEDIUM_PROBLEM)]
        if not unspanned:
            return chosen, physical
        chosen.problems.extend(unspanned)
    return None, None
