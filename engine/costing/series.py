"""Cumulative cost of keeping the cluster's GPU capacity month by month: on-prem against the best cloud rows."""

from __future__ import annotations

from engine.result.costs import Cumulative, CumulativeSeries

from .cloud import PURCHASE_ORDER, PricedRow
from .evaluation import Evaluation
from .money import HOURS_PER_YEAR, D, cents
from .providers import provider_name

__all__ = ["cumulative_series"]

BASIS = (
    "cumulative cost of keeping the cluster's GPU capacity for the horizon at the utilisation shown: on-prem pays "
    "capex up front and opex monthly; pay-per-use cloud options pay for the used hours; reserved terms pay for "
    "every hour"
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
    best: dict[str, PricedRow] = {}
    for priced in ev.rows:
        if not priced.usable:
            continue
        k = priced.row.purchase
        rate = priced.effective_usd_per_gpu_hour
        if k not in best or rate < best[k].effective_usd_per_gpu_hour:  # type: ignore[operator]
            best[k] = priced
    for purchase in PURCHASE_ORDER:
        chosen = best.get(purchase)
        if chosen is None:
            continue
        row = chosen.row
        per_year = D(ev.job.cluster_gpus) * HOURS_PER_YEAR * chosen.effective_usd_per_gpu_hour  # type: ignore[operator]
        per_year = per_year if chosen.fixed else per_year * u
        label = f"{provider_name(row.provider)} {purchase} ({row.instance_type}, {row.region})"
        series.append(CumulativeSeries(label, purchase, tuple(cents(per_year * m / 12) for m in months)))
    return Cumulative(months=months, utilization=u, gpus=ev.job.cluster_gpus, basis=BASIS, series=tuple(series))
