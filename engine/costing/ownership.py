"""What owning the priced cluster costs: running costs by year, the annuity capital charge, NPV, the on-prem
$/GPU-hour and the job's two on-prem costs, filled into `OnpremCosts` (formulas in finance.py).

Two job costs, each labelled where shown:

- `job_usd_shared` (the job's cost on an owned cluster): job GPU-hours x $/GPU-hour, where $/GPU-hour =
  (capital charge + levelised running costs) / (GPUs x 8760 x utilisation): the job pays for the share of the
  cluster's life it uses, capital at the cost of capital included;
- `job_usd` (bought for this job alone): capex + the running costs while the job runs - the resale value at the
  residual fraction, received when the job ends (discounted): what buying a cluster for one job costs.

TCO (`tco_usd`) is not a job cost: capex + the running costs of every year of the horizon, nominal.
"""

from __future__ import annotations

from decimal import Decimal

from engine.result.costs import CashFlowYear, Finance, OnpremSection, OpexBreakdown

from .finance import (
    FinanceTerms,
    RunningCosts,
    YearFlow,
    annuity_factor,
    capital_charge,
    discount_factor,
    lease_npv,
    value_at,
    year_flows,
)
from .inputs import CostInputs, CostJob, Scales
from .money import HOURS_PER_YEAR, D, cents, r, rate
from .onprem import OnpremCosts, onprem_costs
from .parameters import Params
from .site_capex import SITE_CATEGORY, site_residual_usd, site_upkeep_fraction

__all__ = ["FINANCE_NOTE", "finance_terms", "onprem_section", "owned_costs"]

HUNDRED = Decimal(100)
FINANCE_NOTE = (
    "Capital charge = (capex - residual value x (1 + r)^-n) x r / (1 - (1 + r)^-n) over the useful life n at the "
    "cost of capital r; running costs are paid at each year's end, energy and colocation grow by their escalators, "
    "maintenance starts when the prepaid support ends; NPV = capex + discounted running costs over the horizon - "
    "the discounted value left at the horizon (straight line from the hardware cost to the residual over the life)."
)


def finance_terms(params: Params) -> FinanceTerms:
    """The plan's finance parameters as fractions and whole years."""
    return FinanceTerms(
        cost_of_capital=params["cost_of_capital"],
        useful_life_years=int(params["useful_life_years"]),
        residual_value_fraction=params["residual_value_fraction"],
        horizon_years=params.years,
        power_escalator=params["power_escalator_percent_per_year"] / HUNDRED,
        colo_escalator=params["colo_escalator_percent_per_year"] / HUNDRED,
        support_bundled_years=int(params["support_bundled_years"]),
        maintenance_fraction=params["maintenance_percent_per_year"] / HUNDRED,
        insurance_fraction=params["insurance_percent_per_year"] / HUNDRED,
        lease_fraction_per_month=params["lease_rate_percent_per_month"] / HUNDRED,
    )


def _staff_usd(job: CostJob, params: Params) -> Decimal:
    """Fixed staff + FTEs (GPUs / GPUs per FTE) x loaded cost per FTE."""
    ftes = D(job.cluster_gpus) / params["staff_gpus_per_fte"]
    return cents(params["staff_usd_per_year"] + ftes * params["staff_usd_per_fte_year"])


def _colocation_usd(job: CostJob, params: Params) -> Decimal:
    """IT kW x the colocation price x 12; nothing on an owned site (its building is in capex instead)."""
    if job.terms.facility_owned:
        return Decimal("0.00")
    return cents(D(job.it_kw) * params["colo_usd_per_kw_month"] * 12)


def _levelized(flows: list[YearFlow], terms: FinanceTerms, pick: str) -> Decimal:
    """The equal yearly amount worth the same today as the chosen running cost over the useful life."""
    life = flows[: terms.useful_life_years]
    present = sum((getattr(f, pick) * f.discount for f in life), Decimal(0))
    return present * annuity_factor(terms.cost_of_capital, terms.useful_life_years)


def add_ownership(o: OnpremCosts, job: CostJob, params: Params) -> None:
    """Every yearly figure, the NPV and the job's costs of a priced cluster (see the module docstring)."""
    assert o.hardware_usd is not None and o.capex_usd is not None
    terms = finance_terms(params)
    facility_kw = D(job.facility_kw)
    site_usd = sum((i.extended_price_usd for i in o.extras if i.category == SITE_CATEGORY), Decimal(0))
    running = RunningCosts(
        energy_usd=cents(facility_kw * HOURS_PER_YEAR * o.utilization * o.electricity_usd_per_kwh),
        colocation_usd=_colocation_usd(job, params),
        staff_usd=_staff_usd(job, params),
        capex_usd=o.capex_usd,
        hardware_usd=o.hardware_usd,
        site_usd=site_usd,
        site_upkeep_fraction=site_upkeep_fraction(site_usd, params),
    )
    flows = year_flows(running, terms, max(terms.horizon_years, terms.useful_life_years))
    o.flows = flows
    first = flows[0]
    o.energy_usd_per_year, o.colocation_usd_per_year = first.energy_usd, first.colocation_usd
    o.maintenance_usd_per_year, o.staff_usd_per_year = first.maintenance_usd, first.staff_usd
    o.insurance_usd_per_year, o.opex_usd_per_year = first.insurance_usd, first.total_usd
    horizon = flows[: terms.horizon_years]
    o.tco_usd = o.capex_usd + sum((f.total_usd for f in horizon), Decimal(0))
    owned = o.hardware_usd + site_usd  # what loses value over the useful life (an owned site's lines too)
    o.residual_value_usd = cents(o.hardware_usd * terms.residual_value_fraction) + site_residual_usd(site_usd, params)
    life, rate_ = terms.useful_life_years, terms.cost_of_capital
    o.depreciation_usd_per_year = cents((o.capex_usd - o.residual_value_usd) / life)
    o.capital_charge_usd_per_year = capital_charge(o.capex_usd, o.residual_value_usd, rate_, life)
    o.levelized_opex_usd_per_year = cents(_levelized(flows, terms, "total_usd"))
    if o.utilization > 0:
        o.energy_levelized_per_utilization = _levelized(flows, terms, "energy_usd") / o.utilization
    o.value_at_horizon_usd = value_at(owned, o.residual_value_usd, life, terms.horizon_years)
    present = sum((f.total_usd * f.discount for f in horizon), Decimal(0))
    at_horizon = o.value_at_horizon_usd * discount_factor(rate_, terms.horizon_years)
    o.npv_usd = cents(o.capex_usd + present - at_horizon)
    o.lease_npv_usd = lease_npv(o.capex_usd, terms, flows)
    annual = o.capital_charge_usd_per_year + o.levelized_opex_usd_per_year
    # Hot spares are paid for but run no work: the GPU-hours delivered are the working GPUs'.
    used_gpu_hours = D(job.working_gpus) * HOURS_PER_YEAR * o.utilization
    o.usd_per_gpu_hour = annual / used_gpu_hours if used_gpu_hours > 0 else None
    hours = D(o.job_hours)
    if o.usd_per_gpu_hour is not None:
        o.job_usd_shared = cents(D(job.job_gpus) * hours * o.usd_per_gpu_hour)
    energy = facility_kw * hours * o.electricity_usd_per_kwh
    fixed = first.colocation_usd + first.maintenance_usd + first.staff_usd + first.insurance_usd
    resale = o.residual_value_usd * discount_factor(rate_, hours / HOURS_PER_YEAR)
    o.job_usd = cents(o.capex_usd + energy + fixed * hours / HOURS_PER_YEAR - resale)


def owned_costs(job: CostJob, inputs: CostInputs, params: Params, scales: Scales) -> OnpremCosts:
    """The priced cluster (onprem.py) with every figure of owning it; without a hardware price, just the former."""
    o = onprem_costs(job, inputs, params, scales)
    if o.capex_usd is not None:
        add_ownership(o, job, params)
    return o


def _finance(o: OnpremCosts, params: Params) -> Finance | None:
    if o.capital_charge_usd_per_year is None or o.levelized_opex_usd_per_year is None:
        return None
    assert o.npv_usd is not None and o.value_at_horizon_usd is not None and o.residual_value_usd is not None
    terms = finance_terms(params)
    lease_vs_buy = None
    if o.lease_npv_usd is not None:
        lease_vs_buy = "lease" if o.lease_npv_usd < o.npv_usd else "buy"
    flows = tuple(
        CashFlowYear(
            year=f.year,
            energy_usd=f.energy_usd,
            colocation_usd=f.colocation_usd,
            maintenance_usd=f.maintenance_usd,
            staff_usd=f.staff_usd,
            insurance_usd=f.insurance_usd,
            total_usd=f.total_usd,
            discount_factor=r(float(f.discount), 6),
        )
        for f in o.flows
    )
    return Finance(
        cost_of_capital=terms.cost_of_capital,
        useful_life_years=terms.useful_life_years,
        horizon_years=terms.horizon_years,
        residual_value_fraction=terms.residual_value_fraction,
        residual_value_usd=o.residual_value_usd,
        annuity_factor=r(float(annuity_factor(terms.cost_of_capital, terms.useful_life_years)), 6),
        capital_charge_usd_per_year=o.capital_charge_usd_per_year,
        levelized_opex_usd_per_year=o.levelized_opex_usd_per_year,
        annual_cost_usd=o.capital_charge_usd_per_year + o.levelized_opex_usd_per_year,
        value_at_horizon_usd=o.value_at_horizon_usd,
        npv_usd=o.npv_usd,
        cash_flows=flows,
        note=FINANCE_NOTE,
        lease_npv_usd=o.lease_npv_usd,
        lease_vs_buy=lease_vs_buy,
    )


def onprem_section(o: OnpremCosts, job: CostJob, params: Params) -> OnpremSection:
    """The `costs.onprem` section: amounts to the cent, the $/GPU-hour rate to at most 6 decimals."""
    breakdown = None
    if o.opex_usd_per_year is not None:
        assert o.energy_usd_per_year is not None and o.colocation_usd_per_year is not None
        assert o.maintenance_usd_per_year is not None and o.staff_usd_per_year is not None
        breakdown = OpexBreakdown(
            energy=o.energy_usd_per_year,
            colocation=o.colocation_usd_per_year,
            maintenance=o.maintenance_usd_per_year,
            staff=o.staff_usd_per_year,
            insurance=o.insurance_usd_per_year,
        )
    return OnpremSection(
        capex_usd=o.capex_usd,
        hardware_usd=o.hardware_usd,
        install_usd=o.install_usd,
        opex_usd_per_year=o.opex_usd_per_year,
        opex_breakdown_usd_per_year=breakdown,
        tco_usd=o.tco_usd,
        years=params.years,
        depreciation_usd_per_year=o.depreciation_usd_per_year,
        utilization=o.utilization,
        gpus=job.cluster_gpus,
        usd_per_gpu_hour=rate(o.usd_per_gpu_hour),
        job_usd=o.job_usd,
        job_usd_shared=o.job_usd_shared,
        job_hours=r(o.job_hours, 3),
        job_gpus=job.job_gpus,
        lines=tuple(o.lines),
        finance=_finance(o, params),
    )
