"""Plan result part for a phased roll-out (`costs.rollout`, engine/costing/rollout.py): per phase the capacity,
power and spend, the day and month it is ready, and when the workload can start. Money is Decimal."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from engine.result.codec import meta

__all__ = ["RolloutPhase", "RolloutSummary"]

OMIT = meta(omit_none=True)


@dataclass(frozen=True)
class RolloutPhase:
    """One phase: what it adds and the running totals once it is ready."""

    phase: int
    systems: int
    gpus: int
    it_kw: float
    facility_kw: float
    spend_usd: Decimal | None
    ready_days: float
    ready_month: int
    cumulative_systems: int
    cumulative_gpus: int
    cumulative_facility_kw: float
    ready_date: str | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class RolloutSummary:
    """The phases, the interval between them, and when the workload can start (which phase, which day)."""

    by: str
    per_phase: float
    systems_per_phase: int
    interval_days: float
    phases: tuple[RolloutPhase, ...]
    start_phase: int
    start_days: float
    start_month: int
    start_reason: str
    notes: tuple[str, ...] = ()
    start_date: str | None = field(default=None, metadata=OMIT)
