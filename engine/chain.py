"""The chain: workload -> training | inference -> build -> facility, over one system or every catalog system.

Stages not modelled yet (fabric, storage, bom, costs) are absent from the plan rather than estimated.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.assumptions.registry import KV_BYTES_BY_PRECISION, Assumptions
from engine.catalog.hardware import Catalog, Gpu, System
from engine.explain.sizing import build_explain, facility_explain, inference_explain, training_explain
from engine.physical.build import attach_physical
from engine.physical.cluster import ClusterBuild, build_cluster
from engine.physical.facility import FacilityResult, size_facility
from engine.request.spec import PlanRequest
from engine.search.selection import SelectionPrices, inference_selection_usd, training_selection_usd
from engine.search.serving import InferenceResult, size_inference
from engine.search.training import TrainingResult, size_training
from engine.workload.model import Workload, analyse_model

__all__ = ["ENGINE_VERSION", "NOT_MODELLED", "STAGES", "SelectionPrices", "run_plan"]

ENGINE_VERSION = "0.1"
STAGES = ["workload", "training", "inference", "build", "facility", "done"]
_PERCENT = {"workload": 10, "training": 60, "inference": 60, "build": 75, "facility": 90, "done": 100}
NOT_MODELLED = ["fabric", "storage", "bom", "costs"]

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

    def summary(self, chosen: bool, prices: SelectionPrices | None = None) -> dict[str, object]:
        row: dict[str, object] = {
            "system": self.system.id,
            "gpu": self.gpu.id,
            "feasible": self.feasible,
            "chosen": chosen,
            "reason": None if self.feasible else " ".join(self.problems),
        }
        sz = self.sizing
        if isinstance(sz, TrainingResult) and sz.layout is not None:
            row.update({"gpus": sz.gpus, "days": sz.days, "days_ideal": sz.days_ideal, "mfu": sz.mfu})
        if isinstance(sz, TrainingResult) and sz.search is not None:
            row["search"] = sz.search.as_dict()
        if isinstance(sz, InferenceResult) and sz.shape is not None:
            row.update({"gpus": sz.gpus, "replicas": sz.replicas, "gpus_per_replica": sz.shape.gpus})
            if sz.shape.capacity is not None:
                row["tokens_per_s_per_gpu"] = sz.shape.capacity.tokens_per_s / sz.shape.gpus
        if isinstance(sz, InferenceResult):
            row.update({"limit": sz.limit, "closest": sz.closest})
        if self.facility is not None:
            row["it_kw"] = self.facility.it_kw
            if self.energy_mwh() is not None:
                row["it_energy_mwh"] = self.energy_mwh()
        if prices is not None:
            # The inputs of selection_usd that the row does not already show (PUE differs by cooling method).
            if self.build is not None and self.facility is not None:
                row.update({"systems": self.build.systems, "facility_kw": self.facility.facility_kw})
            usd = self.selection_usd(prices)
            row["selection_usd"] = None if usd is None else round(usd, 2)
        return row


def _assumptions(request: PlanRequest) -> Assumptions:
    defaults: dict[str, float] = {}
    if request.inference is not None:
        defaults["kv_cache_bytes_per_element"] = KV_BYTES_BY_PRECISION[request.inference.precision]
    return Assumptions(overrides=dict(request.assumptions), request_defaults=defaults)


def _model_section(work: Workload, request: PlanRequest) -> dict[str, object]:
    s = work.shape
    section: dict[str, object] = {
        "preset": s.preset,
        "layers": s.layers,
        "hidden": s.hidden,
        "heads": s.heads,
        "kv_heads": s.kv_heads,
        "head_dim": work.head_dim,
        "ffn_hidden": s.ffn_hidden,
        "vocab": s.vocab,
        "seq_len": s.seq_len,
        "ffn_gated": s.ffn_gated,
        "moe": None if s.moe is None else {"experts": s.moe.experts, "active": s.moe.active},
        "params": work.params,
        "params_derived": work.params_derived,
        "active_params": work.active_params,
        "compute_params_active": work.compute_params_active,
    }
    if request.training is not None:
        section["training_flops_per_token"] = work.training_flops_per_token()
    return section


def _size(request: PlanRequest, work: Workload, cand: _Candidate, a: Assumptions) -> None:
    if request.training is not None:
        cand.sizing = size_training(work, request.training, cand.system, cand.gpu, a)
    else:
        assert request.inference is not None
        cand.sizing = size_inference(work, request.inference, cand.system, cand.gpu, a)
    if not cand.sizing.feasible:
        cand.problems.extend(cand.sizing.problems)


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


def _selection(
    request: PlanRequest, cands: list[_Candidate], chosen: _Candidate | None, prices: SelectionPrices | None
) -> tuple[dict[str, object], dict[str, object]]:
    """The plan's `selection` block and, when prices were given for an auto choice, its `explain` entry."""
    unpriced = _unpriced(cands, prices)
    selection: dict[str, object] = {
        "rule": _selection_rule(request, prices, unpriced),
        "system": chosen.system.id if chosen else None,
    }
    if prices is None:
        return selection, {}
    auto = request.hardware.system == "auto"
    basis = "fixed" if not auto else ("energy" if unpriced else "cost")
    selection.update({"basis": basis, "unpriced_systems": unpriced})
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
    source = "; ".join(f"{k}: {prices.sources[k]}" for k in used if k in prices.sources) or "prices passed to run_plan"
    return selection, {"selection.system": {"formula": formula, "inputs": inputs, "source": source}}


def _json_safe(value: object) -> object:
    """Plain JSON types only; a non-finite float here is an engine bug, so fail loudly rather than emit NaN."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("engine produced a non-finite number")
        return float(value)
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def run_plan(
    request: PlanRequest, catalog: Catalog, progress: Progress | None = None, prices: SelectionPrices | None = None
) -> dict:
    """Run the chain and return the plan as a JSON-ready dict. Infeasible targets give feasible=false.

    `prices` (optional plain data) makes the auto choice cost-aware (engine/search/selection.py); without it the
    choice is by energy.
    """

    def report(stage: str) -> None:
        if progress is not None:
            progress(stage, _PERCENT[stage])

    a = _assumptions(request)
    work = analyse_model(request.model)
    report("workload")

    system_ids = sorted(catalog.systems) if request.hardware.system == "auto" else [request.hardware.system]
    cands = [_Candidate(catalog.systems[i], catalog.gpu_of(catalog.systems[i])) for i in system_ids]
    for cand in cands:
        _size(request, work, cand, a)
    report(request.workload)

    for cand in cands:
        if not cand.problems:
            assert cand.sizing is not None
            cand.build, problems = build_cluster(cand.system, cand.sizing.gpus, request.hardware, a, catalog.parts)
            cand.problems.extend(problems)
    report("build")

    for cand in cands:
        if not cand.problems and cand.build is not None:
            cand.facility = size_facility(cand.build, cand.system, request.hardware.cooling, request.site, a)
    report("facility")

    chosen = _select(cands, prices)
    selection, selection_explain = _selection(request, cands, chosen, prices)
    plan: dict[str, object] = {
        "name": request.name,
        "workload": request.workload,
        "feasible": chosen is not None,
        "problems": [],
        "engine_version": ENGINE_VERSION,
        "catalog_version": catalog.version,
        "request": request.to_dict(),
        "model": _model_section(work, request),
        "selection": selection,
        "candidates": [c.summary(c is chosen, prices) for c in cands],
        "not_modelled": list(NOT_MODELLED),
        "notes": [
            "power.it_kw counts GPU systems at maximum rated draw only; network, storage and management "
            "equipment are not included yet."
        ],
    }
    explain: dict[str, object] = dict(selection_explain)
    if chosen is None:
        plan["problems"] = _problems(cands)
    else:
        assert chosen.build is not None and chosen.facility is not None
        if isinstance(chosen.sizing, TrainingResult):
            assert request.training is not None
            plan["training"] = chosen.sizing.as_dict()
            plan["training"]["frontier_by_system"] = {
                c.system.id: c.sizing.frontier
                for c in cands
                if isinstance(c.sizing, TrainingResult) and c.sizing.feasible and c.sizing.frontier
            }
            explain.update(training_explain(chosen.sizing, work, request.training, chosen.gpu))
        elif isinstance(chosen.sizing, InferenceResult):
            assert request.inference is not None
            plan["inference"] = chosen.sizing.as_dict()
            explain.update(inference_explain(chosen.sizing, work, request.inference, chosen.gpu))
        plan["cluster"] = chosen.build.as_dict()
        plan["power"] = chosen.facility.power_dict()
        plan["cooling"] = chosen.facility.cooling_dict()
        explain.update(build_explain(chosen.build, chosen.system))
        explain.update(facility_explain(chosen.facility, chosen.build, chosen.system))
        attach_physical(plan, explain, chosen.system, chosen.build, chosen.sizing, request, work.params, catalog, a)
    plan["explain"] = explain
    plan["assumptions"] = a.report()
    result = _json_safe(plan)
    report("done")
    assert isinstance(result, dict)
    return result


def _problems(cands: list[_Candidate]) -> list[str]:
    if len(cands) == 1:
        return [f"{cands[0].system.id}: {p}" for p in cands[0].problems]
    out = ["No catalog system satisfies the request; the binding limit per system follows."]
    out.extend(f"{c.system.id}: {' '.join(c.problems)}" for c in cands)
    return out
