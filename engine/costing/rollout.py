"""Phased roll-out: the cluster delivered in phases (`rollout` in the request), and when the workload can start.

Why in costing: a phase is ready when its parts have arrived and been built and burnt in, which is the time to
capacity (capacity.py, the one lead-time model), and what a phase spends is its share of the priced capex. So:

- systems per phase = per_phase x the reference scalable unit's systems (by scalable units), or
  floor(per_phase MW x 1000 / facility kW per system) (by MW; at least one system);
- phase k is ready at time-to-capacity + (k - 1) x the interval (months_between, else the assumption
  rollout_phase_interval_days): the first phase arrives like the whole cluster would, the next ones follow;
- its IT and facility power and its spend are its systems' share of the cluster's (the network, storage and site
  apportioned by systems; the last phase takes the cents left, so the phases sum to capex exactly);
- training starts when the phases ready hold the job's GPUs (a training job needs all of them at once); serving
  and a capacity plan start with the first phase, at that phase's share of the capacity.
"""

from __future__ import annotations

import math
from decimal import Decimal

from engine.assumptions.registry import Assumptions
from engine.explain.wording import explain_entry
from engine.result.codec import encode
from engine.result.costs import TimeToCapacity
from engine.result.plan import ExplainEntry
from engine.result.rollout import RolloutPhase, RolloutSummary

from .capacity import date_after
from .inputs import CostJob
from .money import D, cents

__all__ = ["DAYS_PER_MONTH", "MAX_PHASES", "rollout_explain", "rollout_plan"]

DAYS_PER_MONTH = 365.25 / 12
MAX_PHASES = 500  # input sanity: a longer list helps nobody; the plan says to take bigger phases


def _systems_per_phase(job: CostJob) -> tuple[int, list[str]]:
    spec = job.rollout
    assert spec is not None
    if spec.by == "scalable_units":
        su = job.su_systems or job.cluster_systems
        return int(spec.per_phase) * su, []
    kw_per_system = job.facility_kw / max(1, job.cluster_systems)
    fit = math.floor(spec.per_phase * 1000.0 / kw_per_system + 1e-9) if kw_per_system > 0 else job.cluster_systems
    if fit >= 1:
        return fit, []
    note = (
        f"A phase of {spec.per_phase:g} MW holds no whole system (each draws about {kw_per_system:,.0f} kW of "
        "facility power with its share of the network, storage and cooling): each phase delivers one system."
    )
    return 1, [note]


def _month(days: float) -> int:
    """The month (1 = the first month after the plan date) in which a day falls."""
    return max(1, math.ceil(days / DAYS_PER_MONTH - 1e-9))


def _phases(job: CostJob, per: int, first_days: float, interval: float, capex: Decimal | None, plan_date: str | None):
    systems, gpus_per_system = job.cluster_systems, job.cluster_gpus // max(1, job.cluster_systems)
    out, done, spent = [], 0, Decimal(0)
    count = math.ceil(systems / per)
    for k in range(1, count + 1):
        n = min(per, systems - done)
        done += n
        share = n / systems
        if capex is None:
            spend = None
        elif k == count:
            spend = capex - spent
        else:
            spend = cents(capex * D(n) / D(systems))
            spent += spend
        days = first_days + (k - 1) * interval
        out.append(
            RolloutPhase(
                phase=k,
                systems=n,
                gpus=n * gpus_per_system,
                it_kw=round(job.it_kw * share, 3),
                facility_kw=round(job.facility_kw * share, 3),
                spend_usd=spend,
                ready_days=days,
                ready_month=_month(days),
                cumulative_systems=done,
                cumulative_gpus=done * gpus_per_system,
                cumulative_facility_kw=round(job.facility_kw * done / systems, 3),
                ready_date=date_after(plan_date, days),
            )
        )
    return out


def _start(job: CostJob, phases: list[RolloutPhase]) -> tuple[RolloutPhase, str]:
    if job.workload == "training":
        phase = next(p for p in phases if p.cumulative_gpus >= job.job_gpus)
        return phase, (
            f"Training needs its {job.job_gpus:,} GPUs at once: it starts when phase {phase.phase} is ready "
            f"({phase.cumulative_gpus:,} GPUs installed)."
        )
    first = phases[0]
    return first, (
        f"Serving starts with the first phase ({first.cumulative_gpus:,} of {job.cluster_gpus:,} GPUs, the same share "
        "of the capacity); later phases add replicas as they are ready."
    )


def rollout_plan(job: CostJob, capacity: TimeToCapacity, capex: Decimal | None) -> RolloutSummary | None:
    """The roll-out of a request that asks for one (None otherwise)."""
    spec = job.rollout
    if spec is None or job.cluster_systems <= 0:
        return None
    a = Assumptions(overrides=dict(job.assumption_overrides))
    per, notes = _systems_per_phase(job)
    interval = (
        float(spec.months_between) * DAYS_PER_MONTH
        if spec.months_between is not None
        else float(a["rollout_phase_interval_days"])
    )
    count = math.ceil(job.cluster_systems / per)
    base = {"by": spec.by, "per_phase": float(spec.per_phase), "systems_per_phase": per, "interval_days": interval}
    if count > MAX_PHASES:
        note = f"{count:,} phases of {per:,} systems: at most {MAX_PHASES}; give a larger rollout.per_phase."
        start = capacity.onprem_start_days
        return RolloutSummary(
            **base, phases=(), start_phase=0, start_days=start, start_month=_month(start),
            start_reason="No roll-out: too many phases.", notes=(*notes, note),
        )  # fmt: skip
    phases = _phases(job, per, capacity.onprem_start_days, interval, capex, capacity.plan_date)
    start, reason = _start(job, phases)
    notes.append(
        "Each phase's power and spend are its systems' share of the cluster's (network, storage and site "
        "apportioned by systems); the first phase is ready after the time to capacity, the next ones every "
        f"{interval:,.0f} days."
    )
    return RolloutSummary(
        **base,
        phases=tuple(phases),
        start_phase=start.phase,
        start_days=start.ready_days,
        start_month=start.ready_month,
        start_reason=reason,
        notes=tuple(notes),
        start_date=start.ready_date,
    )


def rollout_explain(rollout: RolloutSummary | None) -> dict[str, ExplainEntry]:
    """The roll-out's one explain entry: how phases are counted, when each is ready, when the workload starts."""
    if rollout is None:
        return {}
    counted = (
        "per_phase x systems per scalable unit"
        if rollout.by == "scalable_units"
        else "floor(per_phase MW x 1000 / facility kW per system)"
    )
    inputs = {
        "phases": len(rollout.phases),
        "systems per phase": rollout.systems_per_phase,
        "days between phases": round(rollout.interval_days, 1),
        "first phase ready (days)": round(rollout.phases[0].ready_days, 1) if rollout.phases else "no phases",
        "workload starts with phase": rollout.start_phase,
        "workload starts (days)": round(rollout.start_days, 1),
        "why": rollout.start_reason,
    }
    return {
        "costs.rollout": explain_entry(
            (
                f"systems per phase = {counted}; phase k ready at time to capacity + (k - 1) x days between phases; "
                "each phase's power and spend = its systems' share of the cluster's; training starts when the phases "
                "ready hold the job's GPUs, serving with the first phase"
            ),
            encode(inputs),
            (
                "Time to capacity from the procurement lead times, build and burn-in (each a named assumption with "
                "its source); days between phases after xAI's Colossus (100,000 H100 in 122 days, doubled in 92 "
                "days; xAI, 2024)"
            ),
        )
    }
