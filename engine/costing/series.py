"""Cumulative cost of keeping the cluster's GPU capacity month by month: on-prem against the best cloud rows."""

from __future__ import annotations

from typing import Any

from .cloud import PURCHASE_ORDER
from .evaluation import Evaluation
from .money import HOURS_PER_YEAR, D, usd

__all__ = ["cumulative_series"]

BASIS = (
    "cumulative cost of keeping the cluster's GPU capacity for the horizon at the utilisation shown: on-prem pays "
    "capex up front and opex monthly; pay-per-use cloud options pay for the used hours; reserved terms pay for "
    "every hour"
)


def cumulative_series(ev: Evaluation) -> dict[str, Any] | None:
    """On-prem capex + opex x months/12, and per purchase option the cheapest row's capacity cost (None without
    an on-prem price)."""
    o = ev.onprem
    if o.capex_usd is None or o.opex_usd_per_year is None:
        return None
    capex, opex = o.capex_usd, o.opex_usd_per_year
    months = list(range(0, ev.params.years * 12 + 1))
    u = o.utilization
    series = [
        {"label": "On-prem (capex + opex)", "option": "onprem", "usd": [usd(capex + opex * m / 12) for m in months]}
    ]
    best: dict[str, dict[str, Any]] = {}
    for row in ev.rows:
        if not row["available"] or row.get("_effective_usd_per_gpu_hour") is None:
            continue
        k = row["purchase"]
        if k not in best or row["_effective_usd_per_gpu_hour"] < best[k]["_effective_usd_per_gpu_hour"]:
            best[k] = row
    for purchase in PURCHASE_ORDER:
        row = best.get(purchase)
        if row is None:
            continue
        per_year = D(ev.job.cluster_gpus) * HOURS_PER_YEAR * row["_effective_usd_per_gpu_hour"]
        per_year = per_year if row.get("_fixed") else per_year * u
        series.append(
            {
                "label": f"AWS {purchase} ({row['instance_type']}, {row['region']})",
                "option": purchase,
                "usd": [usd(per_year * m / 12) for m in months],
            }
        )
    return {"months": months, "utilization": str(u), "gpus": ev.job.cluster_gpus, "basis": BASIS, "series": series}
