"""The chain: workload -> training | inference -> build -> facility, over one system or every catalog system.

Stages not modelled yet (fabric, storage, bom, costs) are absent from the plan rather than estimated.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from planner.sizing.assumptions import KV_BYTES_BY_PRECISION, Assumptions
from planner.sizing.build import ClusterBuild, build_cluster
from planner.sizing.catalog import Catalog, Gpu, System
from planner.sizing.explain import build_explain, facility_explain, inference_explain, training_explain
from planner.sizing.facility import FacilityResult, size_facility
from planner.sizing.inference import InferenceResult, size_inference
from planner.sizing.physical import attach_physical
from planner.sizing.request import PlanRequest
from planner.sizing.training import TrainingResult, size_training
from planner.sizing.workload import Workload, analyse_model

__all__ = ["ENGINE_VERSION", "NOT_MODELLED", "STAGES", "run_plan"]

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

    def summary(self, chosen: bool) -> dict[str, object]:
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


def _select(cands: list[_Candidate]) -> _Candidate | None:
    feasible = [c for c in cands if c.feasible]
    return min(feasible, key=lambda c: c.score()) if feasible else None


def _selection_rule(request: PlanRequest) -> str:
    if request.hardware.system != "auto":
        return f"system fixed by the request: {request.hardware.system}"
    if request.training is not None:
        return (
            "auto: every catalog system is sized; the feasible one with the lowest IT energy for the job "
            "(it_kw x days x 24) wins, ties broken by fewer GPUs. Prices are not used yet."
        )
    return (
        "auto: every catalog system is sized; the feasible one with the lowest IT power (it_kw) wins, ties "
        "broken by fewer GPUs. Prices are not used yet."
    )


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


def run_plan(request: PlanRequest, catalog: Catalog, progress: Progress | None = None) -> dict:
    """Run the chain and return the plan as a JSON-ready dict. Infeasible targets give feasible=false."""

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

    chosen = _select(cands)
    plan: dict[str, object] = {
        "name": request.name,
        "workload": request.workload,
        "feasible": chosen is not None,
        "problems": [],
        "engine_version": ENGINE_VERSION,
        "catalog_version": catalog.version,
        "request": request.to_dict(),
        "model": _model_section(work, request),
        "selection": {"rule": _selection_rule(request), "system": chosen.system.id if chosen else None},
        "candidates": [c.summary(c is chosen) for c in cands],
        "not_modelled": list(NOT_MODELLED),
        "notes": [
            "power.it_kw counts GPU systems at maximum rated draw only; network, storage and management "
            "equipment are not included yet."
        ],
    }
    explain: dict[str, object] = {}
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
