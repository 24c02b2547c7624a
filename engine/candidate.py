"""One catalog system's pass through the chain (`ChainCandidate`) and the sizing that fills it in.

Why a module of its own: the chain (`engine/chain.py`) sizes the same job on every candidate system and again on
every rented system (`cloud_sizings`); both use the one candidate type and the one sizing call here, so a plan's
candidates table and its cloud rows are read from the same fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Catalog, Gpu, System
from engine.envelope.workload import EnvelopeCaps, size_within_envelope
from engine.physical.cluster import ClusterBuild
from engine.physical.facility import FacilityResult
from engine.request.spec import DEFAULT_GLOBAL_BATCH_TOKENS, PlanRequest
from engine.result.sizing import Candidate
from engine.search.selection import SelectionPrices, inference_selection_usd, training_selection_usd
from engine.search.serving import InferenceResult, size_inference
from engine.search.shared import SearchMemo
from engine.search.training import TrainingResult, size_training
from engine.workload.model import Workload

__all__ = ["ChainCandidate", "cloud_sizings", "size_candidate", "size_within"]


@dataclass
class ChainCandidate:
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
        run = sz.whole_run if training else None  # type: ignore[union-attr]
        return Candidate(
            system=self.system.id,
            gpu=self.gpu.id,
            feasible=self.feasible,
            chosen=chosen,
            reason=None if self.feasible else " ".join(self.problems),
            gpus=sz.gpus if training or serving else None,  # type: ignore[union-attr]
            days=sz.days if training else None,  # type: ignore[union-attr]
            days_p10=run.days_p10 if run is not None else None,
            days_p90=run.days_p90 if run is not None else None,
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


def size_candidate(
    request: PlanRequest,
    work: Workload,
    cand: ChainCandidate,
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


def size_within(
    request: PlanRequest,
    work: Workload,
    cand: ChainCandidate,
    a: Assumptions,
    catalog: Catalog,
    memo: SearchMemo,
    caps: EnvelopeCaps | None,
) -> None:
    """Size the candidate inside the request's envelope, if any (engine/envelope/workload.py decides the cap)."""

    def size(req: PlanRequest, assumptions: Assumptions) -> None:
        size_candidate(req, work, cand, assumptions, catalog, memo)

    if caps is None:
        size(request, a)
    else:
        size_within_envelope(request, cand, a, caps, size)


def cloud_sizings(
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
        cand = ChainCandidate(system, catalog.gpu_of(system))
        size_candidate(request, work, cand, a, catalog, memo, frontier=False)
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
