"""Comparison: every priced option for the job, the cheapest ones (overall, cloud, without spot, within the
deadline) and the utilisation at which owning breaks even with renting the same GPU capacity."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from engine.result.costs import BreakEven, ComparisonOption

from .cloud import PricedRow
from .inputs import CostJob
from .money import HOURS_PER_YEAR, D, r, rate
from .onprem import OnpremCosts
from .providers import provider_name

__all__ = ["DEADLINE_RULE", "Option", "break_even", "cheapest", "option_result", "options"]

DEADLINE_RULE = (
    "finish by the deadline even in the p90 case (spot); on-prem excludes procurement and build-out lead time"
)


@dataclass(frozen=True)
class Option:
    """One way to pay for the job, with its unrounded finish times (the deadline test uses them)."""

    option: str
    label: str
    job_usd: Decimal
    finish_days: float
    finish_days_p90: float
    region: str | None = None
    instance_type: str | None = None
    capacity_constrained: bool | None = None
    provider: str | None = None

    @property
    def cloud(self) -> bool:
        return not self.option.startswith("onprem")


def options(o: OnpremCosts, rows: Sequence[PricedRow]) -> list[Option]:
    """The job priced every way: on-prem bought, on-prem shared, each available cloud row."""
    opts = []
    days = o.job_hours / 24
    for option, label, job_usd in (
        ("onprem_bought", "On-prem, bought for this job", o.job_usd),
        ("onprem_shared", "On-prem, shared cluster (job GPU-hours x $/GPU-hour)", o.job_usd_shared),
    ):
        if job_usd is not None:
            opts.append(Option(option, label, job_usd, days, days))
    for priced in rows:
        row = priced.row
        if not row.available or row.job_usd is None:
            continue
        p90 = priced.finish_days_p90
        opts.append(
            Option(
                option=row.purchase,
                label=f"{provider_name(row.provider)} {row.purchase} {row.instances} x {row.instance_type} in "
                f"{row.region}",
                job_usd=row.job_usd,
                finish_days=row.job_days,
                finish_days_p90=row.job_days if p90 is None else p90,
                region=row.region,
                instance_type=row.instance_type,
                capacity_constrained=row.capacity_constrained,
                provider=row.provider,
            )
        )
    return opts


def option_result(opt: Option | None) -> ComparisonOption | None:
    """An option as the plan stores it: finish times rounded for reading."""
    if opt is None:
        return None
    return ComparisonOption(
        option=opt.option,
        label=opt.label,
        job_usd=opt.job_usd,
        finish_days=r(float(opt.finish_days), 3),
        finish_days_p90=r(float(opt.finish_days_p90), 3),
        region=opt.region,
        instance_type=opt.instance_type,
        capacity_constrained=opt.capacity_constrained,
        provider=opt.provider,
    )


def break_even(o: OnpremCosts, job: CostJob, priced: PricedRow) -> BreakEven:
    """Utilisation at which owning costs the same per year as renting the same GPU capacity."""
    assert o.depreciation_usd_per_year is not None and o.colocation_usd_per_year is not None
    assert o.maintenance_usd_per_year is not None and o.staff_usd_per_year is not None
    assert priced.effective_usd_per_gpu_hour is not None
    row = priced.row
    fixed_onprem = (
        o.depreciation_usd_per_year + o.colocation_usd_per_year + o.maintenance_usd_per_year + o.staff_usd_per_year
    )
    per_util_onprem = D(job.facility_kw) * HOURS_PER_YEAR * o.electricity_usd_per_kwh
    c = priced.effective_usd_per_gpu_hour
    capacity = D(job.cluster_gpus) * HOURS_PER_YEAR * c
    fixed_cloud, per_util_cloud = (capacity, Decimal(0)) if priced.fixed else (Decimal(0), capacity)
    # fixed_onprem + per_util_onprem u = fixed_cloud + per_util_cloud u
    slope = per_util_cloud - per_util_onprem
    gap = fixed_onprem - fixed_cloud
    out: dict[str, Any] = {
        "region": row.region,
        "instance_type": row.instance_type,
        "purchase": row.purchase,
        "cloud_usd_per_gpu_hour": rate(c),
        "break_even_utilization": None,
        "onprem_cheaper": None,
    }
    if slope == 0:
        out["onprem_cheaper"] = "always" if gap < 0 else "never"
        return BreakEven(**out)
    u = gap / slope
    if slope > 0:  # renting costs more per extra hour used: owning wins above u
        out["onprem_cheaper"] = "always" if u <= 0 else ("never" if u > 1 else "above")
    else:  # reserved terms are paid in full: owning wins below u (its energy grows with use)
        out["onprem_cheaper"] = "never" if u <= 0 else ("always" if u > 1 else "below")
    if 0 < u <= 1:
        out["break_even_utilization"] = r(float(u), 4)
    return BreakEven(**out)


def cheapest(opts: Sequence[Option], deadline_days: float | None) -> dict[str, Any]:
    """The cheapest option overall, in the cloud, without spot and (with a deadline) finishing by it at p90:
    keyword arguments of `engine.result.costs.Comparison`."""

    def least(candidates: list[Option]) -> ComparisonOption | None:
        return option_result(min(candidates, key=lambda x: x.job_usd)) if candidates else None

    within = None
    if deadline_days is not None:
        within = least([x for x in opts if x.finish_days_p90 <= deadline_days + 1e-9])
    return {
        "cheapest": least(list(opts)),
        "cheapest_cloud": least([x for x in opts if x.cloud]),
        "cheapest_without_spot": least([x for x in opts if x.option != "spot"]),
        "deadline_days": deadline_days,
        "cheapest_within_deadline": within,
    }
