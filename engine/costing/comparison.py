"""Comparison: every priced option for the job, the cheapest ones (overall, cloud, without spot, within the
deadline) and the utilisation at which owning breaks even with renting the same GPU capacity."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from .inputs import CostJob
from .money import HOURS_PER_YEAR, D, r, rate, usd
from .onprem import OnpremCosts

__all__ = ["DEADLINE_RULE", "break_even", "cheapest", "option_json", "options"]

DEADLINE_RULE = (
    "finish by the deadline even in the p90 case (spot); on-prem excludes procurement and build-out lead time"
)


def options(o: OnpremCosts, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The job priced every way: on-prem bought, on-prem shared, each available cloud row (Decimal job_usd)."""
    opts = []
    days = o.job_hours / 24
    for option, label, job_usd in (
        ("onprem_bought", "On-prem, bought for this job", o.job_usd),
        ("onprem_shared", "On-prem, shared cluster (job GPU-hours x $/GPU-hour)", o.job_usd_shared),
    ):
        if job_usd is not None:
            opts.append(
                {"option": option, "label": label, "job_usd": job_usd, "finish_days": days, "finish_days_p90": days}
            )
    for row in rows:
        if not row["available"] or row.get("_job_usd") is None:
            continue
        opts.append(
            {
                "option": row["purchase"],
                "label": f"AWS {row['purchase']} {row['instances']} x {row['instance_type']} in {row['region']}",
                "region": row["region"],
                "instance_type": row["instance_type"],
                "job_usd": row["_job_usd"],
                "finish_days": row["job_days"],
                "finish_days_p90": row.get("_finish_days_p90", row["job_days"]),
                "capacity_constrained": row["capacity_constrained"],
            }
        )
    return opts


def option_json(opt: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if opt is None:
        return None
    out = {k: v for k, v in opt.items() if k not in ("job_usd", "finish_days_p90")}
    out["job_usd"] = usd(opt["job_usd"])
    out["finish_days"] = r(float(opt["finish_days"]), 3)
    out["finish_days_p90"] = r(float(opt["finish_days_p90"]), 3)
    return out


def break_even(o: OnpremCosts, job: CostJob, row: Mapping[str, Any]) -> dict[str, Any]:
    """Utilisation at which owning costs the same per year as renting the same GPU capacity."""
    assert o.depreciation_usd_per_year is not None and o.colocation_usd_per_year is not None
    assert o.maintenance_usd_per_year is not None and o.staff_usd_per_year is not None
    fixed_onprem = (
        o.depreciation_usd_per_year + o.colocation_usd_per_year + o.maintenance_usd_per_year + o.staff_usd_per_year
    )
    per_util_onprem = D(job.facility_kw) * HOURS_PER_YEAR * o.electricity_usd_per_kwh
    c = row["_effective_usd_per_gpu_hour"]
    capacity = D(job.cluster_gpus) * HOURS_PER_YEAR * c
    fixed_cloud, per_util_cloud = (capacity, Decimal(0)) if row.get("_fixed") else (Decimal(0), capacity)
    # fixed_onprem + per_util_onprem u = fixed_cloud + per_util_cloud u
    slope = per_util_cloud - per_util_onprem
    gap = fixed_onprem - fixed_cloud
    out = {
        "region": row["region"],
        "instance_type": row["instance_type"],
        "purchase": row["purchase"],
        "cloud_usd_per_gpu_hour": rate(c),
        "break_even_utilization": None,
        "onprem_cheaper": None,
    }
    if slope == 0:
        out["onprem_cheaper"] = "always" if gap < 0 else "never"
        return out
    u = gap / slope
    if slope > 0:  # renting costs more per extra hour used: owning wins above u
        out["onprem_cheaper"] = "always" if u <= 0 else ("never" if u > 1 else "above")
    else:  # reserved terms are paid in full: owning wins below u (its energy grows with use)
        out["onprem_cheaper"] = "never" if u <= 0 else ("always" if u > 1 else "below")
    if 0 < u <= 1:
        out["break_even_utilization"] = r(float(u), 4)
    return out


def cheapest(opts: Sequence[Mapping[str, Any]], deadline_days: float | None) -> dict[str, Any]:
    """The cheapest option overall, in the cloud, without spot and (with a deadline) finishing by it at p90."""

    def least(candidates: list[Mapping[str, Any]]) -> dict[str, Any] | None:
        return option_json(min(candidates, key=lambda x: x["job_usd"])) if candidates else None

    within = None
    if deadline_days is not None:
        within = least([x for x in opts if x["finish_days_p90"] <= deadline_days + 1e-9])
    return {
        "cheapest": least(list(opts)),
        "cheapest_cloud": least([x for x in opts if not x["option"].startswith("onprem")]),
        "cheapest_without_spot": least([x for x in opts if x["option"] != "spot"]),
        "deadline_days": deadline_days,
        "cheapest_within_deadline": within,
    }
