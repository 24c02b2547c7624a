"""The capacity plan: `{"workload": "capacity", "hardware": {"system": ...}, "envelope": {...}}` -> `PlanResult`.

The largest cluster of the system (or of every owned system with `auto`) inside the envelope, with the usual
sections of the chosen build (cluster, fabric, storage, power, cooling, racks, BOM, topology; costing adds
`costs`) and the `envelope` section. With `auto` the system with the most dense BF16 PFLOPS inside the envelope
is chosen (ties: lower facility power), and every system's largest cluster is listed side by side.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Catalog
from engine.costing.inputs import CostInputs
from engine.envelope.capacity import SystemFit, binding_words, envelope_summary, fit_system, option_row, plan_systems
from engine.explain.envelope import envelope_explain
from engine.explain.physical import physical_explain
from engine.explain.sizing import build_explain, facility_explain
from engine.request.spec import PlanRequest
from engine.result import assemble
from engine.result.plan import POWER_SYSTEMS_ONLY_NOTE, PlanResult, not_modelled
from engine.result.sizing import Candidate, Selection

__all__ = ["CAPACITY_RULE", "run_capacity"]

CAPACITY_RULE = (
    "auto, by compute inside the envelope: the largest cluster of every owned catalog system that fits every limit "
    "is built; the one with the most dense BF16 PFLOPS (GPUs x the GPU's dense BF16 TFLOPS) wins, ties broken by "
    "lower facility power."
)


def _pflops(sf: SystemFit, catalog: Catalog) -> float:
    built = sf.built
    return 0.0 if built is None else built.cluster.gpus * catalog.gpu_of(sf.system).bf16_dense_tflops / 1000.0


def _choose(fits: list[SystemFit], catalog: Catalog) -> SystemFit | None:
    feasible = [sf for sf in fits if sf.built is not None]
    if not feasible:
        return None
    return min(feasible, key=lambda sf: (-_pflops(sf, catalog), sf.built.facility.facility_kw, sf.system.id))  # type: ignore[union-attr]


def _candidate(sf: SystemFit, catalog: Catalog, chosen: bool, limits: dict[str, float]) -> Candidate:
    built = sf.built
    if built is None:
        return Candidate(
            system=sf.system.id, gpu=catalog.gpu_of(sf.system).id, feasible=False, chosen=False,
            reason=f"not even one {sf.system.id} fits the envelope: {binding_words(sf, limits)}",
        )  # fmt: skip
    return Candidate(
        system=sf.system.id,
        gpu=catalog.gpu_of(sf.system).id,
        feasible=True,
        chosen=chosen,
        reason=None,
        gpus=built.cluster.gpus,
        it_kw=built.facility.it_kw,
        systems_kw=built.facility.power.systems_kw,
        systems=built.cluster.systems,
        facility_kw=built.facility.facility_kw,
    )


def run_capacity(
    request: PlanRequest,
    catalog: Catalog,
    a: Assumptions,
    prices: CostInputs | None,
    meta: dict[str, object],
    report: Callable[[str], None],
) -> PlanResult:
    """Plan the largest cluster inside `request.envelope`; `meta` carries the chain's stamps (engine version,
    catalog version). Infeasible when not even one system fits, with the limit that stops it."""
    assert request.envelope is not None
    limits = request.envelope.given()
    fits = [fit_system(request, catalog.systems[s], catalog, a, prices) for s in plan_systems(request, catalog)]
    report("build")
    chosen = _choose(fits, catalog)
    options = tuple(option_row(sf, catalog, limits, sf is chosen) for sf in fits)
    rule = (
        CAPACITY_RULE
        if request.hardware.system == "auto"
        else f"system fixed by the request: {request.hardware.system}"
    )
    sections: dict[str, object] = {}
    explain: dict[str, dict[str, object]] = {}
    notes: tuple[str, ...] = ()
    physical = None
    if chosen is not None:
        built = chosen.built
        assert built is not None and chosen.fit is not None and chosen.fit.best is not None
        physical = built.physical
        sections["cluster"] = assemble.cluster_summary(built.cluster, physical)
        if physical is None:
            sections.update(power=built.facility.power_summary(), cooling=built.facility.cooling_summary())
            notes = (POWER_SYSTEMS_ONLY_NOTE,)
        else:
            p = physical.parts()
            sections.update(fabric=p.fabric, storage=p.storage, power=p.power, cooling=p.cooling, racks=p.racks,
                            bom=p.bom, topology=p.topology, plant=p.plant)  # fmt: skip
            notes = tuple(physical.problems)
        explain.update(build_explain(built.cluster, chosen.system))
        explain.update(facility_explain(built.facility, built.cluster, chosen.system))
        if physical is not None:
            explain.update(physical_explain(physical, chosen.system, built.cluster, a))
        explain.update(envelope_explain(chosen, limits, chosen.system))
        summary = envelope_summary(chosen, limits, dict(chosen.fit.best.measured), options)
    else:
        summary = envelope_summary(fits[0] if len(fits) == 1 else None, limits, {}, options)
    report("facility")
    result = PlanResult(
        name=request.name,
        workload="capacity",
        feasible=chosen is not None,
        problems=() if chosen is not None else tuple(f"{o.system}: {o.reason}" for o in options),
        engine_version=str(meta["engine_version"]),
        catalog_version=str(meta["catalog_version"]),
        request=request.to_dict(),
        model=None,
        selection=Selection(rule=rule, system=chosen.system.id if chosen is not None else None),
        candidates=tuple(_candidate(sf, catalog, sf is chosen, limits) for sf in fits),
        not_modelled=not_modelled(physical=physical is not None, priced=False),
        notes=notes,
        explain=assemble.explain_entries(explain),
        assumptions=assemble.assumptions_report(a),
        envelope=summary,
        **sections,  # type: ignore[arg-type]
    )
    report("done")
    return result
