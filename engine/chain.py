"""The chain: workload -> training | inference -> build -> facility, over one system or every catalog system;
then, for the chosen system, physical (storage, fabric, racks and site, BOM, topology) -> explain.

The result is built once, in that order, as a typed `PlanResult` (engine/result/); nothing edits it afterwards
(costing returns its own parts, see `engine.result.with_costs`). Stages that did not run are absent from the
plan rather than estimated, and `not_modelled` names them. A candidate system's pass and its sizing live in
`engine/candidate.py`, the choice among candidates and its rule in `engine/choice.py`; this module runs the stages
in order and assembles the chosen plan's sections.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.assumptions.registry import KV_BYTES_BY_PRECISION, Assumptions
from engine.candidate import ChainCandidate, cloud_sizings, size_within
from engine.catalog.hardware import Catalog
from engine.choice import choose_buildable, selection_block
from engine.costing.inputs import CostInputs
from engine.envelope.plan import run_capacity
from engine.envelope.workload import EnvelopeCaps, plan_envelope, spares_problem
from engine.explain.physical import physical_explain
from engine.explain.sizing import build_explain, facility_explain, inference_explain, training_explain
from engine.physical.build import PhysicalBuild, fabric_problems
from engine.physical.cluster import build_cluster
from engine.physical.facility import size_facility
from engine.physical.spares import spares_for
from engine.request.spec import PlanRequest
from engine.result import assemble
from engine.result.envelope import EnvelopeSummary
from engine.result.plan import POWER_SYSTEMS_ONLY_NOTE, RENTED_NOTE, PlanResult, not_modelled
from engine.search.selection import SelectionPrices
from engine.search.serving import InferenceResult
from engine.search.shared import SearchMemo
from engine.search.training import TrainingResult
from engine.workload.model import Workload, analyse_model

__all__ = ["ENGINE_VERSION", "STAGES", "SelectionPrices", "run_plan"]

ENGINE_VERSION = "0.1"
STAGES = ["workload", "training", "inference", "build", "facility", "done"]
_PERCENT = {"workload": 10, "training": 60, "inference": 60, "build": 75, "facility": 90, "done": 100}

Progress = Callable[[str, int], None]


def _assumptions(request: PlanRequest) -> Assumptions:
    defaults: dict[str, float] = {}
    if request.inference is not None:
        defaults["kv_cache_bytes_per_element"] = KV_BYTES_BY_PRECISION[request.inference.precision]
    return Assumptions(overrides=dict(request.assumptions), request_defaults=defaults)


def run_plan(
    request: PlanRequest,
    catalog: Catalog,
    progress: Progress | None = None,
    prices: SelectionPrices | None = None,
    cost_inputs: CostInputs | None = None,
) -> PlanResult:
    """Run the chain and return the typed plan (`engine.result.to_json` gives its JSON). Infeasible targets give
    feasible=false with the binding limit per system in `problems`.

    `prices` (optional plain data) makes the auto choice cost-aware (engine/search/selection.py); without it the
    choice is by energy. `cost_inputs` (the costing's price inputs) let an envelope's capex limit be checked.
    A capacity request (the largest cluster inside an envelope) takes its own path, `engine/envelope/plan.py`.
    """

    def report(stage: str) -> None:
        if progress is not None:
            progress(stage, _PERCENT[stage])

    a = _assumptions(request)
    if request.workload == "capacity":
        meta: dict[str, object] = {"engine_version": ENGINE_VERSION, "catalog_version": catalog.version}
        return run_capacity(request, catalog, a, cost_inputs, meta, report)
    work = analyse_model(request.model)
    report("workload")

    system_ids = catalog.auto_systems() if request.hardware.system == "auto" else [request.hardware.system]
    cands = [ChainCandidate(catalog.systems[i], catalog.gpu_of(catalog.systems[i])) for i in system_ids]
    memo = SearchMemo()  # systems with equal search inputs share one search's answers, within this plan
    caps = EnvelopeCaps(request, catalog, a, cost_inputs, work.params) if request.envelope is not None else None
    for cand in cands:
        size_within(request, work, cand, a, catalog, memo, caps)
    report(request.workload)

    _build(request, cands, a, catalog, caps)
    report("build")

    for cand in cands:
        if not cand.problems and cand.build is not None:
            cand.facility = size_facility(cand.build, cand.system, request.hardware.cooling, request.site, a)
    chosen, physical = choose_buildable(request, work, cands, prices, catalog, a)
    selection, selection_explain = selection_block(request, cands, chosen, prices)
    rented = cloud_sizings(request, work, a, catalog, set(system_ids), memo) if chosen is not None else ()
    report("facility")

    sections = _chosen_sections(request, work, cands, chosen, physical)
    envelope = _envelope(request, caps, catalog, chosen, physical)
    explain = {**selection_explain, **_explain(request, work, chosen, physical, a)}
    if caps is not None and chosen is not None:
        explain.update(caps.explain(chosen.system))
    result = PlanResult(
        name=request.name,
        workload=request.workload,
        feasible=chosen is not None,
        problems=tuple(_problems(cands)) if chosen is None else (),
        engine_version=ENGINE_VERSION,
        catalog_version=catalog.version,
        request=request.to_dict(),
        model=assemble.model_summary(work, training=request.training is not None),
        selection=selection,
        candidates=tuple(c.summary(c is chosen, prices) for c in cands),
        not_modelled=not_modelled(physical=physical is not None, priced=False),
        notes=_notes(chosen, physical),
        explain=assemble.explain_entries(explain),
        assumptions=assemble.assumptions_report(a),
        cloud_sizings=rented,
        envelope=envelope,
        **sections,
    )
    report("done")
    return result


def _build(
    request: PlanRequest, cands: list[ChainCandidate], a: Assumptions, catalog: Catalog, caps: EnvelopeCaps | None
) -> None:
    """The build stage of every candidate sized without a problem: its cluster with spares for its goodput (none
    for serving or rented systems), then the problems of its compute fabric and of an envelope's spares."""
    for cand in cands:
        if cand.problems:
            continue
        assert cand.sizing is not None
        goodput = cand.sizing.goodput if isinstance(cand.sizing, TrainingResult) else None  # serving: no spares
        spares = spares_for(goodput, cand.system.rented, a)
        cand.build, problems = build_cluster(
            cand.system, cand.sizing.gpus, request.hardware, a, catalog.parts, spares=spares
        )
        cand.problems.extend(problems)
        if cand.build is not None:  # never a cluster without a network: no compute fabric, no plan
            cand.problems.extend(fabric_problems(request, cand.system, cand.build, cand.sizing, catalog, a))
            if too_big := spares_problem(request, caps, cand.system, cand.build):
                cand.problems.append(too_big)


def _envelope(
    request: PlanRequest,
    caps: EnvelopeCaps | None,
    catalog: Catalog,
    chosen: ChainCandidate | None,
    physical: PhysicalBuild | None,
) -> EnvelopeSummary | None:
    if caps is None:
        return None
    if chosen is not None and not chosen.system.rented:
        caps.cap(chosen.system)  # the chosen system's largest cluster and binding limit, for the section
    built = None
    if chosen is not None and chosen.build is not None and chosen.facility is not None:
        facility = physical.site.facility if physical is not None else chosen.facility
        built = (chosen.build, physical, facility)
    return plan_envelope(request, caps.found, catalog, chosen.system.id if chosen is not None else None, built)


def _notes(chosen: ChainCandidate | None, physical: PhysicalBuild | None) -> tuple[str, ...]:
    """Plan-level notes: what the power figure leaves out, or that a rented plan builds nothing."""
    if chosen is not None and chosen.system.rented and chosen.build is not None:
        instances = chosen.build.systems
        return (RENTED_NOTE.format(instances=f"{instances:,}", instance_type=chosen.system.cloud_instance_type),)
    return (POWER_SYSTEMS_ONLY_NOTE,) if physical is None else tuple(physical.problems)


def _chosen_sections(
    request: PlanRequest,
    work: Workload,
    cands: list[ChainCandidate],
    chosen: ChainCandidate | None,
    physical: PhysicalBuild | None,
) -> dict[str, object]:
    """The chosen system's sections, each from the one stage that computes it (none when nothing is feasible)."""
    if chosen is None:
        return {}
    assert chosen.build is not None and chosen.facility is not None
    out: dict[str, object] = {}
    if isinstance(chosen.sizing, TrainingResult):
        frontiers = {
            c.system.id: c.sizing.frontier
            for c in cands
            if isinstance(c.sizing, TrainingResult) and c.sizing.feasible and c.sizing.frontier
        }
        out["training"] = assemble.training_summary(chosen.sizing, frontiers)
    elif isinstance(chosen.sizing, InferenceResult):
        out["inference"] = assemble.inference_summary(chosen.sizing)
    out["cluster"] = assemble.cluster_summary(chosen.build, physical)
    if physical is None:
        out["power"] = chosen.facility.power_summary()
        out["cooling"] = chosen.facility.cooling_summary()
        return out
    parts = physical.parts()
    out.update(
        fabric=parts.fabric,
        storage=parts.storage,
        power=parts.power,
        cooling=parts.cooling,
        racks=parts.racks,
        bom=parts.bom,
        topology=parts.topology,
        plant=parts.plant,
    )
    return out


def _explain(
    request: PlanRequest, work: Workload, chosen: ChainCandidate | None, physical: PhysicalBuild | None, a: Assumptions
) -> dict[str, dict[str, object]]:
    """The explain stage, last: one entry per headline figure of the chosen plan, from the final stage outputs
    (the facility figures from the rack layout's facility when there is one)."""
    if chosen is None:
        return {}
    assert chosen.build is not None and chosen.facility is not None
    out: dict[str, dict[str, object]] = {}
    if isinstance(chosen.sizing, TrainingResult):
        assert request.training is not None
        out.update(training_explain(chosen.sizing, work, request.training, chosen.gpu))
    elif isinstance(chosen.sizing, InferenceResult):
        assert request.inference is not None
        out.update(inference_explain(chosen.sizing, work, request.inference, chosen.gpu))
    out.update(build_explain(chosen.build, chosen.system))
    facility = physical.site.facility if physical is not None else chosen.facility
    out.update(facility_explain(facility, chosen.build, chosen.system))
    if physical is not None:
        out.update(physical_explain(physical, chosen.system, chosen.build, a))
    return out


def _problems(cands: list[ChainCandidate]) -> list[str]:
    if len(cands) == 1:
        return [f"{cands[0].system.id}: {p}" for p in cands[0].problems]
    out = ["No catalog system satisfies the request; the binding limit per system follows."]
    out.extend(f"{c.system.id}: {' '.join(c.problems)}" for c in cands)
    return out
