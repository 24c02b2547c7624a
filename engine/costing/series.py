"""Cumulative cost of keeping the cluster's capacity month by month: on-prem against the best obtainable cloud
rows, each renting the GPUs that do the same work as the owned cluster (its GPUs x the row's work ratio)."""

from __future__ import annotations

from decimal import Decimal

from engine.result.costs import Cumulative, CumulativeSeries

from .cloud import PURCHASE_ORDER, PricedRow
from .comparison import work_ratio
from .evaluation import Evaluation
from .money import HOURS_PER_YEAR, D, cents
from .onprem import OnpremCosts
from .providers import row_option

__all__ = ["break_even_month", "cumulative_series", "rented_capacity"]

BASIS = (
    "cumulative cost of keeping the cluster's capacity for the horizon at the utilisation shown: on-prem pays "
    "capex up front and each year's running costs (escalated) over its months; each cloud option rents the GPUs "
    "that do the same work (the cluster's GPUs "
    "x the option's work ratio, its GPU-hours for this job over on-prem's) and pays for the used hours, reserved "
    "terms for every hour; only obtainable options are drawn"
)


def rented_capacity(ev: Evaluation) -> list[tuple[PricedRow, Decimal]]:
    """Per purchase option (in PURCHASE_ORDER), the obtainable row that rents the owned cluster's work most cheaply,
    with what that capacity costs per year (used hours at the plan's utilisation; reserved terms every hour)."""
    o = ev.onprem
    best: dict[str, tuple[Decimal, PricedRow]] = {}
    for priced in ev.rows:
        if not priced.usable or not ev.row_obtainable(priced):
            continue
        k = priced.row.purchase
        assert priced.effective_usd_per_gpu_hour is not None
        work_rate = priced.effective_usd_per_gpu_hour * D(work_ratio(o, ev.job, priced))
        if k not in best or work_rate < best[k][0]:
            best[k] = (work_rate, priced)
    out = []
    for purchase in PURCHASE_ORDER:
        if purchase in best:
            work_rate, chosen = best[purchase]
            per_year = D(ev.job.working_gpus) * HOURS_PER_YEAR * work_rate
            out.append((chosen, per_year if chosen.fixed else per_year * o.utilization))
    return out


def _onprem_months(o: OnpremCosts, months: tuple[int, ...]) -> tuple[Decimal, ...]:
    """Capex at month 0, then each year's running costs spread evenly over its months."""
    assert o.capex_usd is not None
    out = []
    for m in months:
        whole, part = divmod(m, 12)
        spent = sum((f.total_usd for f in o.flows[:whole]), Decimal(0))
        if part and whole < len(o.flows):
            spent += o.flows[whole].total_usd * part / 12
        out.append(cents(o.capex_usd + spent))
    return tuple(out)


def break_even_month(months: tuple[int, ...], owned: tuple[Decimal, ...], rented: tuple[Decimal, ...]) -> float | None:
    """The first month (fractional) after the start at which the owned line has cost no more than the rented one.

    Both lines are straight within each month (capex up front, then each year's running costs spread evenly; rent
    proportional to time), so the crossing inside the month where the sign of (owned - rented) turns is found
    exactly by linear interpolation between the month's two ends. None when renting stays cheaper to the horizon."""
    previous = None
    for month, own, rent in zip(months, owned, rented, strict=True):
        gap = float(own - rent)
        if month > 0 and gap <= 0:
            if previous is None or previous[1] <= 0:
                return float(month)
            last_month, last_gap = previous
            return round(last_month + (month - last_month) * last_gap / (last_gap - gap), 2)
        previous = (month, gap)
    return None


def cumulative_series(ev: Evaluation) -> Cumulative | None:
    """On-prem capex + the running costs month by month, and per purchase option the cheapest row's capacity cost
    (None without an on-prem price)."""
    o = ev.onprem
    if o.capex_usd is None or not o.flows:
        return None
    months = tuple(range(0, ev.params.years * 12 + 1))
    owned = _onprem_months(o, months)
    series = [CumulativeSeries("On-prem (capex + opex)", "onprem", owned)]
    for chosen, per_year in rented_capacity(ev):
        row = chosen.row
        label = row_option(row, row.region)
        rented = tuple(cents(per_year * m / 12) for m in months)
        series.append(CumulativeSeries(label, row.purchase, rented, break_even_month(months, owned, rented)))
    return Cumulative(
        months=months, utilization=o.utilization, gpus=ev.job.cluster_gpus, basis=BASIS, series=tuple(series)
    )
