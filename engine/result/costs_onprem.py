"""Plan result parts of `costs.onprem`: what building costs (capex and its coverage, running costs, finance) as
frozen dataclasses. Money is `Decimal`, rounded once by costing; split from `engine/result/costs.py`, which still
exports every name here."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from engine.result.codec import meta

__all__ = [
    "CapexRange",
    "CashFlowYear",
    "Coverage",
    "Finance",
    "OnpremSection",
    "OpexBreakdown",
    "ParameterUsed",
    "SystemLine",
    "UnpricedLine",
]

OMIT = meta(omit_none=True)


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
