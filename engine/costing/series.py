"""Cumulative cost of keeping the cluster's capacity month by month: on-prem against the best obtainable cloud
rows, each renting the GPUs that do the same work as the owned cluster (its GPUs x the row's work ratio)."""

from __future__ import annotations

from decimal import Decimal

from engine.result.costs import Cumulative, CumulativeSeries

from .cloud import PURCHASE_ORDER, PricedRow
from .comparison import work_ratio
from .evaluation import Evaluation
from .money import HOURS_PER_YEAR, D, cents
from .providers import provider_name

__all__ = ["cumulative_series"]

BASIS = (
    "cumulative cost of keeping the cluster's capacity for the horizon at the utilisation shown: on-prem pays "
    "capex up front and opex monthly; each cloud option rents the GPUs that do the same work (the cluster's GPUs "
    "x the option's work ratio, its GPU-hours for this job over on-prem's) and pays for the used hours, reserved "
    "terms for every hour; only obtainable options are drawn"
)


def cumulative_series(ev: Evaluation) -> Cumulative | None:
    """On-prem capex + opex x months/12, and per purchase option the cheapest row's capacity cost (None without
    an on-prem price)."""
    o = ev.onprem
    if o.capex_usd is None or o.opex_usd_per_year is None:
        return None
    capex, opex = o.capex_usd, o.opex_usd_per_year
    months = tuple(range(0, ev.params.years * 12 + 1))
    u = o.utilization
    series = [CumulativeSeries("On-prem (capex + opex)", "onprem", tuple(cents(capex + opex * m / 12) for m in months))]
    best: dict[str, tuple[Decimal, PricedRow]] = {}
    for priced in ev.rows:
        if not priced.usable or not ev.row_obtainable(priced):
            continue
        k = priced.row.purchase
        assert priced.effective_usd_per_gpu_hour is not None
        work_rate = priced.effective_usd_per_gpu_hour * D(work_ratio(o, ev.job, priced))
        if k not in best or work_rate < best[k][0]:
            best[k] = (work_rate, priced)
    for purchase in PURCHASE_ORDER:
        if purchase not in best:
            continue
        work_rate, chosen = best[purchase]
        row = chosen.row
        per_year = D(ev.job.cluster_gpus) * HOURS_PER_YEAR * work_rate
        per_year = per_year if chosen.fixed else per_year * u
        label = f"{provider_name(row.provider)} {purchase} ({row.instance_type}, {row.region})"
        series.append(CumulativeSeries(label, purchase, tuple(cents(per_year * m / 12) for m in months)))
    return Cumulative(months=months, utilization=u, gpus=ev.job.cluster_gpus, basis=BASIS, series=tuple(series))
