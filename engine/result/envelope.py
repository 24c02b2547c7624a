"""The plan's `envelope` section: the limits asked for, what the plan uses of each, the limit that binds, and
(for a capacity plan) the largest cluster of each system inside the same limits, side by side."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.result.codec import meta

__all__ = ["EnvelopeLimit", "EnvelopeOption", "EnvelopeSummary"]

OMIT = meta(omit_none=True)


@dataclass(frozen=True)
class EnvelopeLimit:
    """One limit: its key, what it limits, the unit, the limit, the plan's figure and the headroom left."""

    key: str
    label: str
    unit: str
    limit: float
    used: float | None
    headroom: float | None
    headroom_percent: float | None
    binding: bool


@dataclass(frozen=True)
class EnvelopeOption:
    """The largest cluster of one system inside the envelope (a row of the trade-off table)."""

    system: str
    gpu: str
    feasible: bool
    chosen: bool
    binding: str
    reason: str
    systems: int = 0
    gpus: int = 0
    bf16_dense_pflops: float = 0.0
    it_mw: float | None = field(default=None, metadata=OMIT)
    facility_mw: float | None = field(default=None, metadata=OMIT)
    racks: int | None = field(default=None, metadata=OMIT)
    capex_usd: float | None = field(default=None, metadata=OMIT)
    next_breaks: str | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class EnvelopeSummary:
    """`binding` is a limit's key, "fabric" (no catalog design builds one more system) or "max_cluster_gpus" (the
    planner's largest cluster); `sentence` says it in words, with the headroom on the others."""

    limits: tuple[EnvelopeLimit, ...]
    binding: str
    sentence: str
    within: bool
    options: tuple[EnvelopeOption, ...] = ()
    largest_systems: int | None = field(default=None, metadata=OMIT)
    largest_gpus: int | None = field(default=None, metadata=OMIT)
