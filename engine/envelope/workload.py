"""A training or inference request with an `envelope`: the GPU count the search may use is capped, per system, at
the largest cluster that fits every limit, and a target that needs more is infeasible with the binding limit named.

Why a cap on the search rather than a check afterwards: the deadline search picks the smallest GPU count that
meets the deadline, so capping it at the envelope's count leaves every plan it can still find untouched and turns
the rest into "needs more GPUs than fit", with the shortest time the largest fitting cluster achieves (the search's
own closest miss). The cap reaches the search as that system's `max_cluster_gpus` (the search's one size limit;
its inputs key includes it, so shared answers between systems stay correct).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Catalog, System
from engine.costing.inputs import CostInputs
from engine.envelope.capacity import SystemFit, binding_words, envelope_summary, fit_system, option_row
from engine.envelope.probe import Prober, StorageInputs
from engine.envelope.search import breaks
from engine.explain.envelope import envelope_explain
from engine.physical.build import PhysicalBuild
from engine.physical.cluster import ClusterBuild
from engine.physical.facility import FacilityResult
from engine.request.spec import PlanRequest
from engine.result.envelope import EnvelopeSummary
from engine.search.serving import InferenceResult
from engine.search.training import TrainingResult

__all__ = [
    "EnvelopeCap",
    "EnvelopeCaps",
    "capped",
    "envelope_problem",
    "plan_envelope",
    "size_within_envelope",
    "spares_problem",
]


@dataclass(frozen=True)
class EnvelopeCap:
    """One system's fit inside the envelope and the GPU count it allows (0: not even one system)."""

    fit: SystemFit

    @property
    def gpus(self) -> int:
        return self.fit.systems * self.fit.system.gpus_per_system


class EnvelopeCaps:
    """Each system's fit inside the envelope, worked out when first needed: a plan whose own cluster fits the
    envelope needs no search for its system (the capped search would find the same plan), so only systems whose
    target needs more, and the chosen system (for the plan's `envelope` section), are searched. Built with this
    workload's storage (the model's checkpoints and data set), so the cap and the plan's own build agree."""

    def __init__(
        self, request: PlanRequest, catalog: Catalog, a: Assumptions, prices: CostInputs | None, params: float
    ) -> None:
        self.request, self.catalog, self.a, self.prices = request, catalog, a, prices
        tokens = request.training.tokens if request.training is not None else None
        self.storage = StorageInputs(params=params, training_tokens=tokens)
        self.found: dict[str, EnvelopeCap] = {}

    def cap(self, system: System) -> EnvelopeCap:
        if system.id not in self.found:
            fit = fit_system(self.request, system, self.catalog, self.a, self.prices, self.storage)
            self.found[system.id] = EnvelopeCap(fit)
        return self.found[system.id]

    def fits(self, system: System, gpus: int) -> bool:
        """Whether the cluster a plan builds for `gpus` fits every limit (one build, no search)."""
        assert self.request.envelope is not None
        limits = self.request.envelope.given()
        if "capex_usd" in limits and self.prices is None:
            return False
        prober = Prober(self.request, system, self.catalog, self.a, self.storage, self.prices)
        systems = -(-gpus // system.gpus_per_system)
        return not breaks(prober(systems), limits)

    def explain(self, system: System) -> dict[str, dict[str, object]]:
        """The `envelope.binding` explain entry of the chosen system, when its fit was searched."""
        cap = self.found.get(system.id)
        if cap is None or self.request.envelope is None:
            return {}
        return envelope_explain(cap.fit, self.request.envelope.given(), system)


class _Sized(Protocol):
    """What the chain's candidate carries that sizing inside the envelope reads and sets."""

    system: System
    sizing: TrainingResult | InferenceResult | None
    problems: list[str]


def size_within_envelope(
    request: PlanRequest,
    cand: _Sized,
    a: Assumptions,
    caps: EnvelopeCaps,
    size: Callable[[PlanRequest, Assumptions], None],
) -> None:
    """Size the candidate (`size` runs the chain's sizing into it), its GPU count capped at the largest cluster
    inside the envelope; a target that needs more is infeasible with the envelope's binding limit. A plan whose own
    cluster fits is kept as it is (the capped search would find the same plan); a pinned training.gpus above the
    cap is sized at the cap instead, so the plan can say how long that takes."""
    size(request, a)
    if cand.system.rented:
        return
    sizing = cand.sizing
    if sizing is not None and sizing.feasible and caps.fits(cand.system, sizing.gpus):
        return
    cap = caps.cap(cand.system)
    cand.sizing, cand.problems[:] = None, []
    if cap.gpus == 0:
        cand.problems.append(envelope_problem(request, cap))
        return
    asked = request.training.gpus if request.training is not None else None
    if request.training is not None and asked is not None and asked > cap.gpus:
        smaller = request.model_copy(update={"training": request.training.model_copy(update={"gpus": cap.gpus})})
        size(smaller, capped(a, cap))
        sized = cand.sizing if isinstance(cand.sizing, TrainingResult) and cand.sizing.feasible else None
        days = f"; on the {cap.gpus:,} GPUs that fit, training takes {sized.days:.1f} days" if sized else ""
        cand.problems.insert(0, f"{envelope_problem(request, cap)} training.gpus={asked:,} does not fit{days}.")
        return
    size(request, capped(a, cap))
    if cand.problems:
        cand.problems[:] = [*_rename_cap(cand.problems, cap), envelope_problem(request, cap)]


def capped(a: Assumptions, cap: EnvelopeCap) -> Assumptions:
    """The plan's assumptions with this system's search capped at the envelope's GPUs (the set of names read is
    shared, so the plan still lists every assumption behind it)."""
    limit = min(int(a["max_cluster_gpus"]), max(cap.gpus, 1))
    return Assumptions(overrides={**a.overrides, "max_cluster_gpus": limit}, request_defaults=a.request_defaults,
                       used=a.used)  # fmt: skip


def envelope_problem(request: PlanRequest, cap: EnvelopeCap) -> str:
    """The envelope's limit on this system, in words, for the candidate's problems."""
    assert request.envelope is not None
    limits = request.envelope.given()
    sid = cap.fit.system.name
    if cap.gpus == 0:
        return f"envelope: not even one {sid} fits: {binding_words(cap.fit, limits)}."
    return (
        f"envelope: at most {cap.fit.systems:,} x {sid} ({cap.gpus:,} GPUs) fit the envelope; binding limit: "
        f"{binding_words(cap.fit, limits)}."
    )


def spares_problem(request: PlanRequest, caps: EnvelopeCaps | None, system: System, build: ClusterBuild) -> str | None:
    """Why a build whose hot spares (elastic recovery) take it past the envelope cannot be planned; None when it
    fits or carries no spares. The search capped the job's GPUs; the spares come on top, so a job that fits can
    still break a limit once they are added, and a plan is never feasible outside its envelope. A smaller job would
    miss the deadline (the search took the smallest that meets it), so the candidate is infeasible, limit named."""
    if caps is None or build.spares is None or build.spare_systems == 0 or caps.fits(system, build.gpus):
        return None
    return (
        f"envelope: the job's {build.spares.job_systems:,} systems and their {build.spare_systems:,} hot spares "
        f"(elastic recovery) do not fit; {envelope_problem(request, caps.cap(system))}"
    )


def _rename_cap(problems: list[str], cap: EnvelopeCap) -> list[str]:
    """The search's size messages name max_cluster_gpus; with an envelope that number is the envelope's count."""
    text = f"max_cluster_gpus={cap.gpus}"
    return [p.replace(text, f"the {cap.gpus:,} GPUs that fit the envelope") for p in problems]


def _used(cluster: ClusterBuild, physical: PhysicalBuild | None, facility: FacilityResult) -> dict[str, float | None]:
    racks = len(physical.site.racks) if physical is not None else cluster.racks
    return {
        "facility_mw": facility.facility_kw / 1000.0,
        "it_mw": facility.it_kw / 1000.0,
        "racks": float(racks),
        "gpus": float(cluster.gpus),
        "capex_usd": None,
    }


def plan_envelope(
    request: PlanRequest,
    caps: dict[str, EnvelopeCap],
    catalog: Catalog,
    chosen: str | None,
    built: tuple[ClusterBuild, PhysicalBuild | None, FacilityResult] | None,
) -> EnvelopeSummary:
    """The training or inference plan's `envelope` section: the chosen system's fit and the planned cluster's
    figures against each limit (capex is checked by the search and priced by costing), or, when nothing is
    feasible, every system's largest cluster inside the envelope."""
    assert request.envelope is not None
    limits = request.envelope.given()
    options = tuple(option_row(c.fit, catalog, limits, sid == chosen) for sid, c in caps.items())
    only = next(iter(caps.values())) if len(caps) == 1 else None
    cap = caps.get(chosen) if chosen is not None else only
    used = _used(*built) if built is not None else {}
    if cap is None:
        return envelope_summary(None, limits, used, options, capacity=False)
    return envelope_summary(cap.fit, limits, used, options, capacity=False)
