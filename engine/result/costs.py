"""Plan result parts for the costing stage: the `costs` section (on-prem, cloud rows, comparison, sensitivity,
carbon) as frozen dataclasses. Field names are the plan's JSON keys; money is `Decimal`, rounded once by costing
(amounts to the cent, hourly rates to at most 6 decimals) and written as the decimal string it prints as.

Only types live here: the figures are computed by `engine.costing`, which imports these; nothing here imports
costing. A key that is absent from the JSON when its part did not apply is `OMIT`; a key that is present with
null is a plain optional field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from engine.result.codec import meta
from engine.result.costs_cloud import CloudRow, FloatPercentiles, SizedOn, SpotDetail, UsdPercentiles, ZonePrices
from engine.result.costs_onprem import (
    CapexRange,
    CashFlowYear,
    Coverage,
    Finance,
    OnpremSection,
    OpexBreakdown,
    ParameterUsed,
    SystemLine,
    UnpricedLine,
)
from engine.result.rollout import RolloutSummary

__all__ = [
    "BreakEven",
    "CapexRange",
    "CarbonCloud",
    "CarbonOnprem",
    "CarbonSection",
    "CashFlowYear",
    "CloudRow",
    "Comparison",
    "ComparisonOption",
    "Costs",
    "Coverage",
    "Cumulative",
    "CumulativeSeries",
    "Finance",
    "FlipsAt",
    "FloatPercentiles",
    "LeadTime",
    "NpvOption",
    "OnpremSection",
    "OpexBreakdown",
    "ParameterUsed",
    "Sensitivity",
    "SensitivityFigures",
    "SensitivityRow",
    "SizedOn",
    "SpotDetail",
    "SystemLine",
    "TimeToCapacity",
    "UnpricedLine",
    "UsdPercentiles",
    "Verdict",
    "ZonePrices",
]


OMIT = meta(omit_none=True)
# What an option's days are (Comparison.days_basis): the rule of plans that meet their deadline at p50, and of every
# plan stored before the comparison said it.
DAYS_BASIS_P50 = (
    "the job's expected (p50) whole run on that hardware; a spot option's with its interruptions at their p90"
)


@dataclass(frozen=True)
class ComparisonOption:
    """The job priced one way: on-prem (bought or shared) or one available cloud row."""

    option: str
    label: str
    job_usd: Decimal
    finish_days: float
    finish_days_p90: float
    region: str | None = field(default=None, metadata=OMIT)
    instance_type: str | None = field(default=None, metadata=OMIT)
    capacity_constrained: bool | None = field(default=None, metadata=OMIT)
    # Issue 14 (absent from plans stored before it, so those still read and write back unchanged):
    choice: str | None = field(default=None, metadata=OMIT)  # build | rent
    instances: int | None = field(default=None, metadata=OMIT)
    gpus: int | None = field(default=None, metadata=OMIT)
    start_days: float | None = field(default=None, metadata=OMIT)  # days from the plan date to the first step
    start_date: str | None = field(default=None, metadata=OMIT)  # ISO date, when the plan date is known
    obtainable: bool | None = field(default=None, metadata=OMIT)  # always set by costing now
    excluded_reason: str | None = field(default=None, metadata=OMIT)
    provider: str | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class LeadTime:
    """One part class's order-to-delivery time, as the named assumption gives it."""

    part_class: str
    assumption: str
    days: float


@dataclass(frozen=True)
class TimeToCapacity:
    """When an owned cluster can run its first step: the longest lead time of its part classes, then build and
    burn-in. Cloud options start on the plan date."""

    plan_date: str | None
    parts: tuple[LeadTime, ...]
    procurement_days: float
    bound_by: str
    build_days: float
    burn_in_days: float
    onprem_start_days: float
    onprem_start_date: str | None


@dataclass(frozen=True)
class FlipsAt:
    """What would change the verdict: the break-even utilisation against the other side, the price change of the
    runner-up that would make it win, and (when building misses the deadline only by lead time) the deadline
    that would let building compete. `sentence` says it in words."""

    utilization: float | None
    runner_up_price_factor: float | None
    deadline_days: float | None
    sentence: str


@dataclass(frozen=True)
class Verdict:
    """`costs.verdict`: build or rent, which option, for how much, when it finishes, the runner-up and what would
    flip the answer; `sentence` says all of it once and every output shows it as it is."""

    choice: str  # build | rent
    option: str
    sentence: str
    job_usd: Decimal
    finish_days: float
    runner_up: ComparisonOption | None
    flips_at: FlipsAt
    # "cost": the cheapest obtainable option wins on cost; "deadline": a cheaper build is ruled out by the deadline
    # alone (lead time, build and burn-in), so no cost input decides the answer. Absent from plans stored before it.
    decided_by: str | None = field(default=None, metadata=OMIT)
    # The recommended option's whole-run p90 against the deadline, when it is past it (the build's for a build, the
    # rental's for a rental); absent when the p90 meets the deadline, without a deadline and from older plans.
    deadline_risk: str | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class BreakEven:
    """Owning the cluster against renting the capacity that does the same work: `work_ratio` is the cloud GPU-hours
    per on-prem GPU-hour for this job (each sized on its own hardware), `cloud_gpus_equivalent` the rented GPUs
    that match the owned cluster's throughput."""

    region: str
    instance_type: str
    purchase: str
    cloud_usd_per_gpu_hour: Decimal
    break_even_utilization: float | None
    onprem_cheaper: str | None  # always | never | above | below
    work_ratio: float | None = field(default=None, metadata=OMIT)  # absent from plans stored before issue 14
    cloud_gpus_equivalent: float | None = field(default=None, metadata=OMIT)
    # Whose instance it is and its GPUs in words (the cloud row's `provider` and `hardware`), so the table names
    # the option; absent from plans stored before them.
    provider: str | None = field(default=None, metadata=OMIT)
    hardware: str | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class CumulativeSeries:
    label: str
    option: str
    usd: tuple[Decimal, ...]
    # A rented option's month (fractional) at which owning has cost no more than renting so far; absent for the
    # on-prem line, for a rental that owning never catches within the horizon, and in plans stored before issue 16.
    break_even_month: float | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class Cumulative:
    months: tuple[int, ...]
    utilization: Decimal
    gpus: int
    basis: str
    series: tuple[CumulativeSeries, ...]


@dataclass(frozen=True)
class NpvOption:
    """One option's cost over the analysis horizon in today's money: owning (or leasing) the cluster, or renting
    the capacity that does the same work."""

    option: str
    label: str
    npv_usd: Decimal


@dataclass(frozen=True)
class Comparison:
    options: tuple[ComparisonOption, ...]
    cheapest: ComparisonOption | None
    cheapest_cloud: ComparisonOption | None
    cheapest_without_spot: ComparisonOption | None
    deadline_days: float | None
    cheapest_within_deadline: ComparisonOption | None
    deadline_rule: str
    break_even: tuple[BreakEven, ...]
    cumulative: Cumulative | None
    npv: tuple[NpvOption, ...] | None = field(default=None, metadata=OMIT)  # issue 14
    npv_basis: str | None = field(default=None, metadata=OMIT)
    # The whole-run percentile the deadline rule holds options to (p50 or p90); absent without a deadline and from
    # plans stored before it was kept (p50 then)
    deadline_percentile: str | None = field(default=None, metadata=OMIT)
    # What each option's days are, in words, as every output labels them; absent from plans stored before it was
    # kept, whose days are DAYS_BASIS_P50's (`Comparison.days_in_words`)
    days_basis: str | None = field(default=None, metadata=OMIT)

    @property
    def days_in_words(self) -> str:
        """What each option's days are: the stored words, or the p50 rule every older plan followed."""
        return self.days_basis or DAYS_BASIS_P50


@dataclass(frozen=True)
class SensitivityFigures:
    onprem_job_usd_shared: Decimal | None
    cheapest_cloud_job_usd: Decimal | None
    cloud_minus_onprem_usd: Decimal | None
    # whether an owned option can be had at this end (an input that shortens the job can bring a deadline-bound
    # build inside the deadline); absent from plans stored before it was kept
    build_obtainable: bool | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class SensitivityRow:
    input: str
    label: str
    low_factor: float
    high_factor: float
    low: SensitivityFigures
    high: SensitivityFigures
    swing_usd: Decimal | None
    range_basis: str | None = field(default=None, metadata=OMIT)  # issue 14: why this input moves this far


@dataclass(frozen=True)
class Sensitivity:
    metric: str
    step: float
    base: SensitivityFigures
    rows: tuple[SensitivityRow, ...]
    most_sensitive_to: str | None
    # Set when the verdict is decided by the deadline, not cost (`verdict.decided_by`): says so above the rows, which
    # move cost alone. Absent otherwise and from plans stored before it.
    note: str | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class CarbonOnprem:
    grid_gco2e_per_kwh: Decimal
    source: str
    job_energy_mwh: float
    job_tco2e: float
    energy_mwh_per_year: float
    tco2e_per_year: float
    note: str


@dataclass(frozen=True)
class CarbonCloud:
    region: str
    sized_on: str
    gpu: str
    cloud_pue: Decimal
    grid_gco2e_per_kwh: Decimal | None
    source: str | None
    job_energy_mwh: float
    job_tco2e: float | None
    note: str


@dataclass(frozen=True)
class CarbonSection:
    unit: str
    method: str
    onprem: CarbonOnprem | None
    cloud: tuple[CarbonCloud, ...]


@dataclass(frozen=True)
class Costs:
    """The `costs` section. A plan with nothing to price has only `currency`, `available` (False) and `note`."""

    currency: str
    available: bool
    note: str | None = field(default=None, metadata=OMIT)
    money_format: str | None = field(default=None, metadata=OMIT)
    coverage: Coverage | None = field(default=None, metadata=OMIT)
    parameters: Mapping[str, ParameterUsed] | None = field(default=None, metadata=OMIT)
    onprem: OnpremSection | None = field(default=None, metadata=OMIT)
    cloud: tuple[CloudRow, ...] | None = field(default=None, metadata=OMIT)
    cloud_notes: tuple[str, ...] | None = field(default=None, metadata=OMIT)
    price_warnings: tuple[str, ...] | None = field(default=None, metadata=OMIT)
    # One short line per price warning, same order: provider, what is wrong, how many (the page's summaries).
    price_warning_headlines: tuple[str, ...] | None = field(default=None, metadata=OMIT)
    comparison: Comparison | None = field(default=None, metadata=OMIT)
    sensitivity: Sensitivity | None = field(default=None, metadata=OMIT)
    carbon: CarbonSection | None = field(default=None, metadata=OMIT)
    time_to_capacity: TimeToCapacity | None = field(default=None, metadata=OMIT)
    verdict: Verdict | None = field(default=None, metadata=OMIT)
    rollout: RolloutSummary | None = field(default=None, metadata=OMIT)  # phases of a phased delivery
    # The priced capex against the request's envelope capex limit, in one sentence (a capex limit only).
    envelope_capex: str | None = field(default=None, metadata=OMIT)
