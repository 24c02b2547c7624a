"""The chain: workload -> training | inference -> build -> facility, over one system or every catalog system;
then, for the chosen system, physical (storage, fabric, racks and site, BOM, topology) -> explain.

The result is built once, in that order, as a typed `PlanResult` (engine/result/); nothing edits it afterwards
(costing returns its own parts, see `engine.result.with_costs`). Stages that did not run are absent from the
plan rather than estimated, and `not_modelled` names them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from engine.assumptions.registry import KV_BYTES_BY_PRECISION, Assumptions
from engine.catalog.hardware import Catalog, Gpu, System
from engine.costing.inputs import CostInputs
from engine.envelope.plan import run_capacity
from engine.envelope.workload import EnvelopeCaps, plan_envelope, size_within_envelope, spares_problem
from engine.explain.physical import physical_explain
from engine.explain.sizing import build_explain, facility_explain, inference_explain, training_explain
from engine.physical.build import PhysicalBuild, fabric_problems, physical_for_plan
from engine.physical.cluster import ClusterBuild, build_cluster
from engine.physical.fabric.campus_links import MEDIUM_PROBLEM
from engine.physical.facility import FacilityResult, size_facility
from engine.physical.spares import spares_for
from engine.request.spec import DEFAULT_GLOBAL_BATCH_TOKENS, PlanRequest
from engine.result import assemble
from engine.result.envelope import EnvelopeSummary
from engine.result.plan import POWER_SYSTEMS_ONLY_NOTE, RENTED_NOTE, PlanResult, not_modelled
from engine.result.sizing import Candidate, Selection
from engine.search.selection import SelectionPrices, inference_selection_usd, training_selection_usd
from engine.search.serving import InferenceResult, size_inference
from engine.search.shared import SearchMemo
from engine.search.training import TrainingResult, size_training
from engine.workload.model import Workload, analyse_model

__all__ = ["ENGINE_VERSION", "STAGES", "SelectionPrices", "run_plan"]

ENGINE_VERSION = "0.1"
STAGES = ["workload", "training", "inference", "build", "facility", "done"]
_PERCENT = {"workload": 10, "training": 60, "inference": 60, "build": 75, "facility": 90, "done": 100}

Progress = Callable[[str, int], None]


@dataclass
class _Candidate:
    """One system's pass through the chain; stops at the first stage that reports a problem."""

    system: System
    gpu: Gpu
    sizing: TrainingResult | InferenceResult | None = None
    build: ClusterBuild | None = None
    facility: FacilityResult | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def feasible(self) -> bool:
        return not self.problems and self.facility is not None

    def energy_mwh(self) -> float | None:
        if isinstance(self.sizing, TrainingResult) and self.facility is not None:
            return self.facility.it_kw * self.sizing.days * 24.0 / 1000.0
        return None

    def score(self) -> tuple[float, int, str]:
        """Selection key without prices: training = IT energy for the job, inference = IT kW."""
        assert self.facility is not None and self.build is not None
        primary = self.energy_mwh() if isinstance(self.sizing, TrainingResult) else self.facility.it_kw
        return (primary or 0.0, self.build.gpus, self.system.id)

    def selection_usd(self, prices: SelectionPrices) -> float | None:
        """Estimated on-prem cost of this job on this system (engine/search/selection.py); None without a price."""
        price = prices.system_usd.get(self.system.id)
        if not self.feasible or price is None:
            return None
        assert self.facility is not None and self.build is not None
        kw, usd_kwh = self.facility.facility_kw, prices.electricity_usd_per_kwh
        if isinstance(self.sizing, TrainingResult):
            return training_selection_usd(self.build.systems, price, kw, self.sizing.days, usd_kwh)
        return inference_selection_usd(self.build.systems, price, kw, prices.utilization, prices.years, usd_kwh)

    def summary(self, chosen: bool, prices: SelectionPrices | None = None) -> Candidate:
        """The candidates-table row; `it_kw` is the ranked power (GPU systems only, = `systems_kw`)."""
        sz, fac, build = self.sizing, self.facility, self.build
        training = isinstance(sz, TrainingResult) and sz.layout is not None
        serving = isinstance(sz, InferenceResult) and sz.shape is not None
        capacity = serving and sz.shape.capacity is not None  # type: ignore[union-attr]
        usd = self.selection_usd(prices) if prices is not None else None
        return Candidate(
            system=self.system.id,
            gpu=self.gpu.id,
            feasible=self.feasible,
            chosen=chosen,
            reason=None if self.feasible else " ".join(self.problems),
            gpus=sz.gpus if training or serving else None,  # type: ignore[union-attr]
            days=sz.days if training else None,  # type: ignore[union-attr]
            days_ideal=sz.days_ideal if training else None,  # type: ignore[union-attr]
            mfu=sz.mfu if training else None,  # type: ignore[union-attr]
            search=sz.search.as_dict() if isinstance(sz, TrainingResult) and sz.search is not None else None,
            replicas=sz.replicas if serving else None,  # type: ignore[union-attr]
            gpus_per_replica=sz.shape.gpus if serving else None,  # type: ignore[union-attr]
            tokens_per_s_per_gpu=(
                sz.shape.capacity.tokens_per_s / sz.shape.gpus if capacity else None  # type: ignore[union-attr]
            ),
            limit=sz.limit if isinstance(sz, InferenceResult) else None,
            closest=dict(sz.closest) if isinstance(sz, InferenceResult) else None,
            it_kw=fac.it_kw if fac is not None else None,
            systems_kw=fac.power.systems_kw if fac is not None else None,
            it_energy_mwh=self.energy_mwh(),
            systems=build.systems if prices is not None and build is not None and fac is not None else None,
            facility_kw=fac.facility_kw if prices is not None and build is not None and fac is not None else None,
            selection_usd=None if usd is None else round(usd, 2),
            serving=isinstance(sz, InferenceResult),
            priced=prices is not None,
        )


def _assumptions(request: PlanRequest) -> Assumptions:
    defaults: dict[str, float] = {}
    if request.inference is not None:
        defaults["kv_cache_bytes_per_element"] = KV_BYTES_BY_PRECISION[request.inference.precision]
    return Assumptions(overrides=dict(request.assumptions), request_defaults=defaults)


def _size(
    request: PlanRequest,
    work: Workload,
    cand: _Candidate,
    a: Assumptions,
    catalog: Catalog,
    memo: SearchMemo,
    frontier: bool = True,
) -> None:
    """Size the candidate's job; `frontier=False` skips the training frontier (read only for plan candidates);
    `memo` is the plan's shared search answers (`search/shared.py`)."""
    if request.training is not None:
        preset = catalog.models.get(request.model.preset or "")
        extra = (preset.extra or {}) if preset is not None else {}
        ramp = extra.get("batch_ramp")
        cand.sizing = size_training(
            work, request.training, cand.system, cand.gpu, a, batch_ramp=ramp, frontier=frontier, memo=memo
        )
        cand.sizing.batch_source = _batch_source(request.training.global_batch_tokens, extra)
    else:
        assert request.inference is not None
        cand.sizing = size_inference(work, request.inference, cand.system, cand.gpu, a)
    if not cand.sizing.feasible:
        cand.problems.extend(cand.sizing.problems)


def _batch_source(batch_tokens: int, preset_extra: Mapping[str, Any]) -> str:
    """Where the plan's global batch comes from, for its explain entry: the preset's publication when the request
    left the batch at the published one, the planner default when the model has none, else the request."""
    published = preset_extra.get("global_batch_tokens")
    said = str(preset_extra.get("batch_source") or "")
    if published and int(published) == batch_tokens:
        return f"the model's published batch: {said}" if said else "the model's published batch"
    if not published and batch_tokens == DEFAULT_GLOBAL_BATCH_TOKENS:
        return (said + "; " if said else "") + (
            "the planner default of 4,194,304 tokens is the batch Llama 2 trained with at every size (Touvron et "
            "al., 'Llama 2: Open Foundation and Fine-Tuned Chat Models', arXiv 2307.09288, 2023-07-18, section 2.2)"
        )
    return "the global batch given in the request (tokens)"


def _unpriced(cands: list[_Candidate], prices: SelectionPrices | None) -> list[str]:
    """Feasible candidates without a system price (any one of them sends the choice back to the energy rule)."""
    if prices is None:
        return []
    return [c.system.id for c in cands if c.feasible and c.system.id not in prices.system_usd]


def _select(cands: list[_Candidate], prices: SelectionPrices | None) -> _Candidate | None:
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


def _selection(
    request: PlanRequest, cands: list[_Candidate], chosen: _Candidate | None, prices: SelectionPrices | None
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
    cands = [_Candidate(catalog.systems[i], catalog.gpu_of(catalog.systems[i])) for i in system_ids]
    memo = SearchMemo()  # systems with equal search inputs share one search's answers, within this plan
    caps = EnvelopeCaps(request, catalog, a, cost_inputs, work.params) if request.envelope is not None else None
    for cand in cands:
        _size_within(request, work, cand, a, catalog, memo, caps)
    report(request.workload)

    for cand in cands:
        if not cand.problems:
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
    report("build")

    for cand in cands:
        if not cand.problems and cand.build is not None:
            cand.facility = size_facility(cand.build, cand.system, request.hardware.cooling, request.site, a)
    chosen, physical = _choose_buildable(request, work, cands, prices, catalog, a)
    selection, selection_explain = _selection(request, cands, chosen, prices)
    rented = _cloud_sizings(request, work, a, catalog, set(system_ids), memo) if chosen is not None else ()
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


def _size_within(
    request: PlanRequest,
    work: Workload,
    cand: _Candidate,
    a: Assumptions,
    catalog: Catalog,
    memo: SearchMemo,
    caps: EnvelopeCaps | None,
) -> None:
    """Size the candidate inside the request's envelope, if any (engine/envelope/workload.py decides the cap)."""

    def size(req: PlanRequest, assumptions: Assumptions) -> None:
        _size(req, work, cand, assumptions, catalog, memo)

    if caps is None:
        size(request, a)
    else:
        size_within_envelope(request, cand, a, caps, size)


def _envelope(
    request: PlanRequest,
    caps: EnvelopeCaps | None,
    catalog: Catalog,
    chosen: _Candidate | None,
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


def _cloud_sizings(
    request: PlanRequest, work: Workload, a: Assumptions, catalog: Catalog, exclude: set[str], memo: SearchMemo
) -> tuple[Candidate, ...]:
    """The job sized on every rented system (a cloud instance type planned as a system) with the same search as
    the candidates: the GPUs that meet the deadline, or the days at the request's GPU count; for serving, the
    replicas that meet the rate within the SLOs. Costing prices each instance type for this work, not for the
    chosen system's GPU count. Systems already sized as candidates are not repeated. Only the sizing's summary
    row is kept (costing reads its GPUs, days, power and reason), so no frontier is computed."""
    out = []
    for system_id, system in catalog.systems.items():
        if not system.rented or system_id in exclude:
            continue
        cand = _Candidate(system, catalog.gpu_of(system))
        _size(request, work, cand, a, catalog, memo, frontier=False)
        row = cand.summary(chosen=False)
        feasible = not cand.problems and row.gpus is not None
        systems_kw = (row.gpus or 0) / system.gpus_per_system * system.max_power_kw if feasible else None
        out.append(
            replace(
                row,
                feasible=feasible,
                reason=None if feasible else " ".join(cand.problems),
                systems_kw=systems_kw,
                it_kw=systems_kw,
            )
        )
    return tuple(out)


def _choose_buildable(
    request: PlanRequest,
    work: Workload,
    cands: list[_Candidate],
    prices: SelectionPrices | None,
    catalog: Catalog,
    a: Assumptions,
) -> tuple[_Candidate | None, PhysicalBuild | None]:
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


def _notes(chosen: _Candidate | None, physical: PhysicalBuild | None) -> tuple[str, ...]:
    """Plan-level notes: what the power figure leaves out, or that a rented plan builds nothing."""
    if chosen is not None and chosen.system.rented and chosen.build is not None:
        instances = chosen.build.systems
        return (RENTED_NOTE.format(instances=f"{instances:,}", instance_type=chosen.system.cloud_instance_type),)
    return (POWER_SYSTEMS_ONLY_NOTE,) if physical is None else tuple(physical.problems)


def _chosen_sections(
    request: PlanRequest,
    work: Workload,
    cands: list[_Candidate],
    chosen: _Candidate | None,
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
    request: PlanRequest, work: Workload, chosen: _Candidate | None, physical: PhysicalBuild | None, a: Assumptions
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


def _problems(cands: list[_Candidate]) -> list[str]:
    if len(cands) == 1:
        return [f"{cands[0].system.id}: {p}" for p in cands[0].problems]
    out = ["No catalog system satisfies the request; the binding limit per system follows."]
    out.extend(f"{c.system.id}: {' '.join(c.problems)}" for c in cands)
    return out
