"""Finance as finance does it: the capital charge of owning, the running costs year by year, and present values.

Why not capex / years: money spent on a cluster today could have earned the cost of capital elsewhere, and the
cluster keeps some resale value at the end of its life. The equal annual payment that repays capex at the cost
of capital over the useful life, net of the residual value, is the annuity (the "capital recovery factor"):

    capital charge per year = (capex - residual x (1 + r)^-n) x r / (1 - (1 + r)^-n)    (r = 0: (capex - residual) / n)

with r the cost of capital and n the useful life in years (Brealey, Myers & Allen, Principles of Corporate
Finance, "equivalent annual cost"). The useful life is not the analysis horizon: a 3-year comparison of a
cluster that lives 5 years charges 3 years of the 5-year annuity, and its NPV counts the value left at year 3.

Running costs by year t = 1, 2, ... (end-of-year cash flows): energy and colocation grow by their escalators from
year 2 on; maintenance is nil while the support bought with the systems runs (`support_bundled_years`, a capex
line), then the same % of the hardware a year as that support cost; staff and insurance are flat. The NPV (a cost,
so positive) of owning over a horizon of H years is capex + sum(opex_t / (1 + r)^t) - value_H / (1 + r)^H, where the
value at H falls in a straight line from the hardware cost to the residual value over the useful life and stays at
the residual after.
Levelised opex is the annuity of the running costs over the useful life, so capital charge + levelised opex is
the equal yearly cost of owning, which the on-prem $/GPU-hour spreads over the used GPU-hours.

Pure Decimal arithmetic; money is rounded to the cent once, where each figure is produced (money.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from .money import D, cents

__all__ = [
    "FinanceTerms",
    "RunningCosts",
    "YearFlow",
    "annuity_factor",
    "capital_charge",
    "discount_factor",
    "lease_npv",
    "npv_of_yearly",
    "value_at",
    "year_flows",
]


@dataclass(frozen=True)
class FinanceTerms:
    """The named finance parameters of one plan, as fractions and whole years."""

    cost_of_capital: Decimal
    useful_life_years: int
    residual_value_fraction: Decimal
    horizon_years: int
    power_escalator: Decimal  # fraction per year, applied from year 2
    colo_escalator: Decimal
    support_bundled_years: int
    maintenance_fraction: Decimal  # of the hardware per year, after the bundled support (the support's own base)
    insurance_fraction: Decimal  # of capex per year
    lease_fraction_per_month: Decimal  # of capex per month; 0 = no lease offer


@dataclass(frozen=True)
class RunningCosts:
    """First-year running costs at the plan's utilisation (energy), capex (insurance's base) and the priced
    hardware (maintenance's base, as it is the prepaid support's: not the services, tax, spares, support and software
    lines capex also holds)."""

    energy_usd: Decimal
    colocation_usd: Decimal
    staff_usd: Decimal
    capex_usd: Decimal
    hardware_usd: Decimal
    # An owned site's lines within capex: upkept at their own rate from year 1, not under the hardware support.
    site_usd: Decimal = Decimal(0)
    site_upkeep_fraction: Decimal = Decimal(0)


@dataclass(frozen=True)
class YearFlow:
    """One year's running costs (paid at its end), their total and its discount factor."""

    year: int
    energy_usd: Decimal
    colocation_usd: Decimal
    maintenance_usd: Decimal
    staff_usd: Decimal
    insurance_usd: Decimal
    total_usd: Decimal
    discount: Decimal


def discount_factor(rate: Decimal, years: float | Decimal) -> Decimal:
    """(1 + r)^-t: what one dollar paid t years from now is worth today."""
    return Decimal(1) / (Decimal(1) + rate) ** D(years)


def annuity_factor(rate: Decimal, years: int) -> Decimal:
    """r / (1 - (1 + r)^-n), the capital recovery factor; 1 / n at a zero rate."""
    if years <= 0:
        raise ValueError("an annuity needs at least one year")
    if rate == 0:
        return Decimal(1) / years
    return rate / (Decimal(1) - discount_factor(rate, years))


def capital_charge(capex_usd: Decimal, residual_usd: Decimal, rate: Decimal, years: int) -> Decimal:
    """The equal annual payment that repays capex at `rate` over `years`, net of the residual value received at
    the end: (capex - residual x (1 + r)^-n) x r / (1 - (1 + r)^-n), to the cent."""
    net = capex_usd - residual_usd * discount_factor(rate, years)
    return cents(net * annuity_factor(rate, years))


def value_at(hardware_usd: Decimal, residual_usd: Decimal, life_years: int, years: int) -> Decimal:
    """The hardware's value `years` after purchase: straight line from its cost to the residual over the useful
    life, the residual after it."""
    if years >= life_years:
        return residual_usd
    return cents(hardware_usd - (hardware_usd - residual_usd) * Decimal(years) / Decimal(life_years))


def year_flows(base: RunningCosts, terms: FinanceTerms, years: int) -> list[YearFlow]:
    """Running costs for years 1..`years`, each term rounded to the cent and the total their sum."""
    flows = []
    for t in range(1, years + 1):
        energy = cents(base.energy_usd * (1 + terms.power_escalator) ** (t - 1))
        colocation = cents(base.colocation_usd * (1 + terms.colo_escalator) ** (t - 1))
        maintenance = (
            Decimal("0.00")
            if t <= terms.support_bundled_years
            else cents(base.hardware_usd * terms.maintenance_fraction)
        ) + cents(base.site_usd * base.site_upkeep_fraction)
        staff = cents(base.staff_usd)
        insurance = cents(base.capex_usd * terms.insurance_fraction)
        total = energy + colocation + maintenance + staff + insurance
        flows.append(
            YearFlow(
                t, energy, colocation, maintenance, staff, insurance, total, discount_factor(terms.cost_of_capital, t)
            )
        )
    return flows


def npv_of_yearly(amounts_usd: list[Decimal], rate: Decimal) -> Decimal:
    """Present value of end-of-year amounts for years 1, 2, ..., to the cent."""
    return cents(sum((a * discount_factor(rate, t) for t, a in enumerate(amounts_usd, start=1)), Decimal(0)))


def lease_npv(capex_usd: Decimal, terms: FinanceTerms, running: list[YearFlow]) -> Decimal | None:
    """NPV of leasing the same equipment over the horizon: 12 payments of lease rate x capex a year (paid at each
    year's end, like the running costs), the running costs without insurance (the lessor insures its property),
    no capex and no residual. None when no lease rate is given."""
    if terms.lease_fraction_per_month <= 0:
        return None
    payment = cents(capex_usd * terms.lease_fraction_per_month * 12)
    yearly = [payment + f.total_usd - f.insurance_usd for f in running[: terms.horizon_years]]
    return npv_of_yearly(yearly, terms.cost_of_capital)
