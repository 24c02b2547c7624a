"""Plan result parts of `costs.cloud`: one row per provider x region x instance type x purchase option, what it
replicates (`SizedOn`) and a spot row's interruption model, as frozen dataclasses. Split from
`engine/result/costs.py`, which still exports every name here."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from engine.result.codec import meta

__all__ = [
    "CloudRow",
    "FloatPercentiles",
    "SizedOn",
    "SpotDetail",
    "UsdPercentiles",
    "ZonePrices",
]

OMIT = meta(omit_none=True)
QUOTED = meta(present_if="quoted")  # spot figures present (maybe null) once a zone quotes a usable price


@dataclass(frozen=True)
class SizedOn:
    """The sizing a cloud row replicates (the chosen system, or the best other system with that GPU)."""

    system: str
    gpu: str
    gpus: int
    days: float
    chosen: bool


@dataclass(frozen=True)
class FloatPercentiles:
    p10: float
    p50: float
    p90: float


@dataclass(frozen=True)
class UsdPercentiles:
    p10: Decimal
    p50: Decimal
    p90: Decimal


@dataclass(frozen=True)
class ZonePrices:
    min: Decimal
    p10: Decimal
    p50: Decimal
    p90: Decimal
    max: Decimal


@dataclass(frozen=True)
class SpotDetail:
    """A spot row's interruption model. The figures after `capacity_note` exist once a zone quotes a usable
    price (`quoted`); without one the row is unavailable and only the header is stored."""

    band: str
    band_assumed: bool
    band_as_of: str | None
    band_source: str
    advisor_savings_percent: int | None
    zones: int
    zones_at_on_demand: int
    checkpoint_write_min: float
    checkpoint_write_source: str
    restart_min: float
    capacity_note: str
    zone_usd_per_hour: ZonePrices | None = field(default=None, metadata=OMIT)
    reclaimed_per_month: FloatPercentiles | None = field(default=None, metadata=OMIT)
    interruptions_per_instance_hour: float | None = field(default=None, metadata=OMIT)
    job_mtbf_hours: float | None = field(default=None, metadata=QUOTED)
    expected_interruptions: float | None = field(default=None, metadata=QUOTED)
    checkpoint_interval_hours: float | None = field(default=None, metadata=QUOTED)
    young_interval_hours: float | None = field(default=None, metadata=QUOTED)
    overhead_fraction: FloatPercentiles | None = field(default=None, metadata=OMIT)
    finish_days: FloatPercentiles | None = field(default=None, metadata=OMIT)
    job_usd: UsdPercentiles | None = field(default=None, metadata=OMIT)
    discount_vs_on_demand: float | None = field(default=None, metadata=OMIT)
    net_saving_vs_on_demand: float | None = field(default=None, metadata=OMIT)
    warnings: tuple[str, ...] | None = field(default=None, metadata=OMIT)
    quoted: bool = field(default=False, metadata=meta(json=False))


@dataclass(frozen=True)
class CloudRow:
    """One provider x region x instance type x purchase option. `provider`, `price_source` (the primary source's
    title and date) and `price_confidence` (list_price, quote, public_estimate, assumption) say where the price
    came from; `price_observed_at` is that source's own date. The keys after them belong to one purchase option:
    reserved terms (`commitment_hours`, `job_usd_if_term_shared`), capacity blocks (`blocks`, `price_basis`,
    `block_days`, `billed_hours`), spot (`spot`)."""

    region: str
    instance_type: str
    purchase: str
    available: bool
    unavailable_reason: str | None
    capacity_constrained: bool
    instances: int
    gpus_per_instance: int
    gpus: int
    usd_per_hour: Decimal | None
    usd_per_gpu_hour: Decimal | None
    job_hours: float
    job_days: float
    job_usd: Decimal | None
    price_observed_at: str
    sized_on: SizedOn
    # Absent from plans stored before the market was priced (they were AWS-only): None, and left out of the JSON.
    provider: str | None = field(default=None, metadata=OMIT)
    price_source: str | None = field(default=None, metadata=OMIT)
    price_confidence: str | None = field(default=None, metadata=OMIT)
    commitment_hours: int | None = field(default=None, metadata=OMIT)
    job_usd_if_term_shared: Decimal | None = field(default=None, metadata=OMIT)
    blocks: int | None = field(default=None, metadata=OMIT)
    price_basis: str | None = field(default=None, metadata=OMIT)
    block_days: int | None = field(default=None, metadata=OMIT)
    billed_hours: int | None = field(default=None, metadata=OMIT)
    spot: SpotDetail | None = field(default=None, metadata=OMIT)
    # The GPUs of one instance in words ("8 x H100 SXM5 80GB"), so a table can say what an instance id such as
    # p5.48xlarge is; absent from plans stored before it (their tables show the instance id alone).
    hardware: str | None = field(default=None, metadata=OMIT)
