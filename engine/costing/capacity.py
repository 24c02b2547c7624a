"""Time to capacity: when an owned cluster can run its first training step, and the calendar date of each
option's start.

A cluster is only as early as its slowest part class: the GPU systems (8-GPU servers, or rack-scale NVLink
systems such as GB200 NVL72) and, when the plan has a BOM, the fabric (switches, optics, cables). After delivery
come the build and the burn-in soak. Every duration is a named assumption (engine/data/assumptions/
procurement.toml) with its public source; a request's `assumptions` override them. Cloud options start on the
plan date. The plan date comes from the caller (`CostInputs.plan_date`), so tests inject it and the engine never
reads the clock.
"""

from __future__ import annotations

from datetime import date, timedelta

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import load_catalog
from engine.result.costs import LeadTime, TimeToCapacity

from .inputs import CostJob

__all__ = ["NETWORK_CATEGORIES", "RACK_SCALE_MIN_NVLINK_GPUS", "date_after", "time_to_capacity"]

# A system whose NVLink domain spans more than one 8-GPU server is a rack-scale system (GB200/GB300 NVL72).
RACK_SCALE_MIN_NVLINK_GPUS = 9
NETWORK_CATEGORIES = frozenset({"network", "optics", "cabling"})


def date_after(plan_date: str | None, days: float) -> str | None:
    """The ISO date `days` after the plan date (a part day counts as a whole one), or None without a plan date."""
    if not plan_date:
        return None
    whole = int(-(-days // 1))  # ceiling: a start on day 2.3 is on the third day
    return (date.fromisoformat(plan_date[:10]) + timedelta(days=whole)).isoformat()


def _parts(job: CostJob, a: Assumptions) -> list[LeadTime]:
    system = load_catalog().systems.get(job.cluster_system)
    rack_scale = system is not None and system.nvlink_domain_gpus >= RACK_SCALE_MIN_NVLINK_GPUS
    name = "lead_time_rack_scale_days" if rack_scale else "lead_time_gpu_servers_days"
    label = f"{system.name if system else job.cluster_system} ({'rack-scale systems' if rack_scale else 'servers'})"
    parts = [LeadTime(label, name, float(a[name]))]
    if job.bom and any(line.category in NETWORK_CATEGORIES for line in job.bom):
        parts.append(
            LeadTime("fabric (switches, optics, cables)", "lead_time_network_days", a["lead_time_network_days"])
        )
    return parts


def time_to_capacity(job: CostJob, plan_date: str | None) -> TimeToCapacity:
    """Procurement (the slowest part class) + build + burn-in, in days from the plan date."""
    a = Assumptions(overrides=dict(job.assumption_overrides))
    parts = _parts(job, a)
    slowest = max(parts, key=lambda p: p.days)
    build, burn_in = float(a["build_days"]), float(a["burn_in_days"])
    start = slowest.days + build + burn_in
    return TimeToCapacity(
        plan_date=plan_date[:10] if plan_date else None,
        parts=tuple(parts),
        procurement_days=slowest.days,
        bound_by=slowest.part_class,
        build_days=build,
        burn_in_days=burn_in,
        onprem_start_days=start,
        onprem_start_date=date_after(plan_date, start),
    )
