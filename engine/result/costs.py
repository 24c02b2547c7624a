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
QUOTED = meta(present_if="quoted")  # spot figures present (maybe null) once a zone quotes a usable price


@dataclass(frozen=True)
class ParameterUsed:
    """One costing parameter: the value used, its default, and where the value came from."""

    value: Decimal
    default: Decimal | None
    unit: str | None
    confidence: str | None
    source: str | None
    as_of: str | None


@dataclass(frozen=True)
class UnpricedLine:
    part_number: str | None
    description: str | None
    quantity: int | None


@dataclass(frozen=True)
class Coverage:
    """What the hardware figure covers: the BOM (`bom`) or the GPU systems alone (`systems_only`)."""

    basis: str
    priced_lines: int
    unpriced_lines: tuple[UnpricedLine, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class SystemLine:
    """The one priced line of a plan without a BOM: the GPU systems (same extended-price rule as a BOM line)."""

    catalog_id: str
    part_number: str | None
    description: str
    category: str
    quantity: int
    unit_price_usd: Decimal
    extended_price_usd: Decimal
    price_source: str
    price_as_of: str
    price_confidence: str


@dataclass(frozen=True)
class OpexBreakdown:
    """The first year's running costs by kind (`finance.cash_flows` has every year's)."""

    energy: Decimal
    colocation: Decimal
    maintenance: Decimal
    staff: Decimal
    insurance: Decimal | None = field(default=None, metadata=OMIT)  # absent from plans stored before issue 14


@dataclass(frozen=True)
class CashFlowYear:
    """One year's running costs of the owned cluster, paid at the year's end, and that year's discount factor."""

    year: int
    energy_usd: Decimal
    colocation_usd: Decimal
    maintenance_usd: Decimal
    staff_usd: Decimal
    insurance_usd: Decimal
    total_usd: Decimal
    discount_factor: float


@dataclass(frozen=True)
class Finance:
    """`costs.onprem.finance`: owning as finance computes it (engine/costing/finance.py): the annuity capital charge
    over the useful life net of the residual value, levelised running costs, the NPV over the analysis horizon and,
    when a lease rate is given, the NPV of leasing instead."""

    cost_of_capital: Decimal
    useful_life_years: int
    horizon_years: int
    residual_value_fraction: Decimal
    residual_value_usd: Decimal
    annuity_factor: float
    capital_charge_usd_per_year: Decimal
    levelized_opex_usd_per_year: Decimal
    annual_cost_usd: Decimal
    value_at_horizon_usd: Decimal
    npv_usd: Decimal
    cash_flows: tuple[CashFlowYear, ...]
    note: str
    lease_npv_usd: Decimal | None = field(default=None, metadata=OMIT)
    lease_vs_buy: str | None = field(default=None, metadata=OMIT)  # lease | buy, when a lease rate is given


@dataclass(frozen=True)
class CapexRange:
    """`costs.onprem.capex_range`: the capex again with every priced part at the low, then the high end of its own
    price basis's range (a quote moves less than an assumed price); the extras that scale with the hardware
    (spares, installation, freight, tax) move with it."""

    low_usd: Decimal
    high_usd: Decimal


@dataclass(frozen=True)
class OnpremSection:
    """`costs.onprem`: None money where the hardware has no sourced price."""

    capex_usd: Decimal | None
    hardware_usd: Decimal | None
    install_usd: Decimal | None
    opex_usd_per_year: Decimal | None
    opex_breakdown_usd_per_year: OpexBreakdown | None
    tco_usd: Decimal | None
    years: int
    depreciation_usd_per_year: Decimal | None
    utilization: Decimal
    gpus: int
    usd_per_gpu_hour: Decimal | None  # a rate: up to 6 decimals
    job_usd: Decimal | None
    job_usd_shared: Decimal | None
    job_hours: float
    job_gpus: int
    lines: tuple[SystemLine, ...]
    # Issue 14 (absent from plans stored before it):
    finance: Finance | None = field(default=None, metadata=OMIT)
    # Issue 16 (absent from plans stored before it):
    capex_range: CapexRange | None = field(default=None, metadata=OMIT)


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


@dataclass(frozen=True)
class SensitivityFigures:
    onprem_job_usd_shared: Decimal | None
    cheapest_cloud_job_usd: Decimal | None
    cloud_minus_onprem_usd: Decimal | None


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
    comparison: Comparison | None = field(default=None, metadata=OMIT)
    sensitivity: Sensitivity | None = field(default=None, metadata=OMIT)
    carbon: CarbonSection | None = field(default=None, metadata=OMIT)
    time_to_capacity: TimeToCapacity | None = field(default=None, metadata=OMIT)
    verdict: Verdict | None = field(default=None, metadata=OMIT)
    rollout: RolloutSummary | None = field(default=None, metadata=OMIT)  # phases of a phased delivery
    # The priced capex against the request's envelope capex limit, in one sentence (a capex limit only).
    envelope_capex: str | None = field(default=None, metadata=OMIT)
