"""Comparison: every priced option for the job, the cheapest obtainable ones (overall, cloud, without spot,
within the deadline) and the utilisation at which owning breaks even with renting the capacity that does the
same work.

Same work, not same GPUs: each cloud row is sized for the job on its own hardware (its GPU count and days), so
its `work_gpu_hours` over the on-prem job's GPU-hours is the work ratio: how many rented GPU-hours replace one
owned GPU-hour. Break-even and the cost-over-time series scale the rented capacity by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from engine.result.costs import BreakEven, ComparisonOption

from .capacity import date_after
from .cloud import PricedRow
from .inputs import CostJob
from .money import HOURS_PER_YEAR, D, r, rate
from .onprem import OnpremCosts
from .providers import row_label

__all__ = ["DEADLINE_RULE", "Option", "break_even", "cheapest", "option_result", "options", "work_ratio"]

DEADLINE_RULE = (
    "finish by the deadline even in the p90 case (spot); on-prem finishes after procurement lead time, build and "
    "burn-in (costs.time_to_capacity) plus the job"
)
# What an option's days are when the deadline is to be met at p90 (Comparison.days_basis; DAYS_BASIS_P50 otherwise).
DAYS_BASIS_P90 = (
    "the job's whole run at its p90 on that hardware, as the deadline is to be met (its p50 x the plan's own p90 / "
    "p50; a spot option's with its interruptions at their p90 too)"
)
# The rule when the request meets its deadline at the whole run's p90 (training.deadline_percentile).
DEADLINE_RULE_P90 = (
    "finish by the deadline at the whole run's p90, every option (its p50 days x the plan's own p90 / p50; spot's "
    "interruptions at their p90 as well); on-prem finishes after procurement lead time, build and burn-in "
    "(costs.time_to_capacity) plus the job"
)


@dataclass(frozen=True)
class Option:
    """One way to pay for the job, with its unrounded finish times and what the obtainability rules read."""

    option: str
    label: str
    job_usd: Decimal
    finish_days: float
    finish_days_p90: float
    region: str | None = None
    instance_type: str | None = None
    capacity_constrained: bool | None = None
    instances: int | None = None
    gpus: int | None = None
    start_days: float = 0.0
    spot_warnings: tuple[str, ...] = ()
    obtainable: bool = True
    excluded_reason: str | None = None
    provider: str | None = None
    price_confidence: str | None = None  # list_price, quote, public_estimate or assumption (cloud rows)

    @property
    def cloud(self) -> bool:
        return not self.option.startswith("onprem")

    @property
    def choice(self) -> str:
        return "rent" if self.cloud else "build"

    @property
    def done_days(self) -> float:
        """Days from the plan date to the end of the job in the p90 case (start + p90 run)."""
        return self.start_days + self.finish_days_p90


def options(
    o: OnpremCosts, rows: Sequence[PricedRow], onprem_start_days: float = 0.0, spread: float = 1.0
) -> list[Option]:
    """The job priced every way: on-prem bought, on-prem shared, each available cloud row. `finish_days_p90` is the
    run the deadline is judged at: the p50 (spot: its interruptions at their p90) times `spread`, 1 unless the
    request meets its deadline at the whole run's p90 (`CostJob.deadline_spread`)."""
    opts = []
    days = o.job_hours / 24
    for option, label, job_usd in (
        ("onprem_bought", "Build a cluster for this job alone, less resale", o.job_usd),
        (
            "onprem_shared",
            "Build and own the cluster, this job's share of its cost",
            o.job_usd_shared,
        ),
    ):
        if job_usd is not None:
            opts.append(Option(option, label, job_usd, days, days * spread, start_days=onprem_start_days))
    for priced in rows:
        row = priced.row
        if not row.available or row.job_usd is None:
            continue
        p90 = priced.finish_days_p90
        opts.append(
            Option(
                option=row.purchase,
                label=row_label(row),
                job_usd=row.job_usd,
                finish_days=row.job_days,
                finish_days_p90=(row.job_days if p90 is None else p90) * spread,
                region=row.region,
                instance_type=row.instance_type,
                capacity_constrained=row.capacity_constrained,
                instances=row.instances,
                gpus=row.gpus,
                spot_warnings=tuple(row.spot.warnings or ()) if row.spot is not None else (),
                provider=row.provider,
                price_confidence=row.price_confidence,
            )
        )
    return opts


def option_result(opt: Option | None, plan_date: str | None = None) -> ComparisonOption | None:
    """An option as the plan stores it: finish times rounded for reading, its start date from the plan date."""
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
        choice=opt.choice,
        instances=opt.instances,
        gpus=opt.gpus,
        start_days=r(float(opt.start_days), 3),
        start_date=date_after(plan_date, opt.start_days),
        obtainable=opt.obtainable,
        excluded_reason=opt.excluded_reason,
        provider=opt.provider,
    )


def work_ratio(o: OnpremCosts, job: CostJob, priced: PricedRow) -> float:
    """Rented GPU-hours that do the work of one owned GPU-hour: the row's GPU-hours for the job over the on-prem
    job's (job GPUs x job hours). 1 when the row is sized on the chosen system itself."""
    onprem_gpu_hours = job.job_gpus * o.job_hours
    if onprem_gpu_hours <= 0 or priced.work_gpu_hours <= 0:
        return 1.0
    return priced.work_gpu_hours / onprem_gpu_hours


def break_even(o: OnpremCosts, job: CostJob, priced: PricedRow) -> BreakEven:
    """Utilisation at which owning costs the same per year as renting the capacity that does the same work.

    Owning per year = capital charge + levelised running costs (ownership.py); of these only the energy grows
    with use, so it is split into a fixed part and the levelised energy at 100 % use times the utilisation."""
    assert o.capital_charge_usd_per_year is not None and o.levelized_opex_usd_per_year is not None
    assert o.energy_levelized_per_utilization is not None
    assert priced.effective_usd_per_gpu_hour is not None
    row = priced.row
    per_util_onprem = o.energy_levelized_per_utilization
    fixed_onprem = o.capital_charge_usd_per_year + o.levelized_opex_usd_per_year - per_util_onprem * o.utilization
    c = priced.effective_usd_per_gpu_hour
    ratio = work_ratio(o, job, priced)
    equivalent_gpus = job.working_gpus * ratio
    capacity = D(equivalent_gpus) * HOURS_PER_YEAR * c
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
        "work_ratio": r(ratio, 4),
        "cloud_gpus_equivalent": r(equivalent_gpus, 1),
        "provider": row.provider,
        "hardware": row.hardware,
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


def cheapest(opts: Sequence[Option], deadline_days: float | None, plan_date: str | None = None) -> dict[str, Any]:
    """The cheapest obtainable option overall, in the cloud, without spot and (with a deadline) done by it at
    p90: keyword arguments of `engine.result.costs.Comparison`. Excluded options never win."""
    ok = [x for x in opts if x.obtainable]

    def least(candidates: list[Option]) -> ComparisonOption | None:
        return option_result(min(candidates, key=lambda x: x.job_usd), plan_date) if candidates else None

    within = None
    if deadline_days is not None:
        within = least([x for x in ok if x.done_days <= deadline_days + 1e-9])
    return {
        "cheapest": least(ok),
        "cheapest_cloud": least([x for x in ok if x.cloud]),
        "cheapest_without_spot": least([x for x in ok if x.option != "spot"]),
        "deadline_days": deadline_days,
        "cheapest_within_deadline": within,
    }
