"""Cloud: one row per region x instance type x purchase option for each sizing the plan offers.

instances = ceil(job GPUs / GPUs per instance) of an instance type with the same catalog GPU (same model *and*
memory: catalog ids the caller passes on each `CloudPrice`); job hours = the plan's training days x 24, or one
year of serving; job cost = instances x $/instance-hour x hours, rounded to the cent. Reserved terms are paid in
whole (1 or 3 years) whether used or not (`job_usd_if_term_shared` is the cost if other work used the rest);
capacity blocks allow <= 64 instances per block and <= 256 in total, for 1-14 days then 7-day steps to 182 days.
A row is built as keyword arguments of `CloudRow`; keys starting with "_" carry the unrounded figures the
comparison works from and end up beside the typed row in a `PricedRow`, not in the plan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from engine.result.costs import CloudRow, SizedOn

from .inputs import CloudPrice, CostInputs, CostJob, Scales, Sizing
from .money import HOURS_PER_YEAR, D, cents, r, rate
from .parameters import Params
from .providers import AWS, gpu_display_name, rented_gpus, system_display_name
from .spot import SpotQuote, spot_row

__all__ = [
    "CAPACITY_BLOCK_MAX_DAYS",
    "CAPACITY_BLOCK_MAX_INSTANCES",
    "CAPACITY_BLOCK_MAX_INSTANCES_PER_BLOCK",
    "PURCHASE_ORDER",
    "RESERVED_YEARS",
    "PricedRow",
    "capacity_block_days",
    "cloud_rows",
]

PURCHASE_ORDER = (
    "on_demand",
    "spot",
    "reserved_1y",
    "reserved_3y",
    "savings_plan_1y",
    "savings_plan_3y",
    "capacity_block",
)
# Commitments paid in whole whatever the use: reserved terms (and 1-3 year neocloud contracts, stored as
# reserved) and AWS Savings Plans (an hourly spend committed for 1 or 3 years).
RESERVED_YEARS = {"reserved_1y": 1, "reserved_3y": 3, "savings_plan_1y": 1, "savings_plan_3y": 3}

CAPACITY_BLOCK_MAX_INSTANCES_PER_BLOCK = 64
CAPACITY_BLOCK_MAX_INSTANCES = 256
CAPACITY_BLOCK_DAILY_STEPS_TO = 14
CAPACITY_BLOCK_MAX_DAYS = 182


@dataclass(frozen=True)
class PricedRow:
    """A cloud row and the unrounded figures the comparison, break-even and series work from (not stored)."""

    row: CloudRow
    effective_usd_per_gpu_hour: Decimal | None  # spot: the p50 zone price x (1 + overhead) per GPU
    finish_days_p90: float | None = None  # spot's p90 finish; other options finish at job_days
    work_gpu_hours: float = 0.0  # whole instances' GPUs x the job's hours on this hardware (no spot overhead)

    @property
    def fixed(self) -> bool:
        """Reserved terms are paid in whole whatever the use."""
        return self.row.purchase in RESERVED_YEARS

    @property
    def usable(self) -> bool:
        return self.row.available and self.effective_usd_per_gpu_hour is not None


def capacity_block_days(job_days: float) -> int | None:
    """Shortest bookable block covering the job: whole days up to 14, then 7-day steps to 182; None if longer."""
    days = max(1, math.ceil(job_days - 1e-9))
    if days <= CAPACITY_BLOCK_DAILY_STEPS_TO:
        return days
    stepped = CAPACITY_BLOCK_DAILY_STEPS_TO + 7 * math.ceil((days - CAPACITY_BLOCK_DAILY_STEPS_TO) / 7)
    return stepped if stepped <= CAPACITY_BLOCK_MAX_DAYS else None


def _capacity_block(row: dict[str, Any], unit: Decimal, instances: int, hours: float) -> None:
    days = capacity_block_days(hours / 24)
    row["blocks"] = math.ceil(instances / CAPACITY_BLOCK_MAX_INSTANCES_PER_BLOCK)
    row["price_basis"] = (
        "the snapshot's cheapest offering per instance-hour (a small, short block); larger and longer blocks "
        "are priced by supply and demand when booked (up to 8 weeks ahead)"
    )
    if instances > CAPACITY_BLOCK_MAX_INSTANCES:
        row["available"] = False
        row["unavailable_reason"] = (
            f"needs {instances} instances; capacity blocks allow at most {CAPACITY_BLOCK_MAX_INSTANCES} in "
            f"total ({CAPACITY_BLOCK_MAX_INSTANCES_PER_BLOCK} per block)"
        )
    elif days is None:
        row["available"] = False
        row["unavailable_reason"] = (
            f"the job runs {hours / 24:.1f} days; a capacity block lasts at most {CAPACITY_BLOCK_MAX_DAYS} days"
        )
    else:
        row["block_days"] = days
        row["billed_hours"] = days * 24
        row["job_usd"] = cents(instances * unit * days * 24)


def _priced_row(row: dict[str, Any], purchase: str, unit: Decimal, hours: float) -> None:
    """Fill a regional-price row: on-demand, reserved (whole terms) or capacity block (limits respected)."""
    instances, gpi = row["instances"], row["gpus_per_instance"]
    row["usd_per_hour"] = rate(unit)
    row["usd_per_gpu_hour"] = rate(unit / gpi)
    row["_effective_usd_per_gpu_hour"] = unit / gpi
    if purchase in RESERVED_YEARS:
        term_h = RESERVED_YEARS[purchase] * HOURS_PER_YEAR
        terms = max(1, math.ceil(hours / term_h - 1e-9))
        row["commitment_hours"] = terms * term_h
        row["job_usd"] = cents(instances * unit * terms * term_h)
        row["job_usd_if_term_shared"] = cents(instances * unit * D(hours))
    elif purchase == "capacity_block":
        _capacity_block(row, unit, instances, hours)
    else:
        row["job_usd"] = cents(instances * unit * D(hours))


def _row(region: str, instance_type: str, purchase: str, gpi: int, sizing: Sizing, hours: float, **kw: Any) -> dict:
    instances = math.ceil(sizing.gpus / gpi)
    return {
        "region": region,
        "instance_type": instance_type,
        "purchase": purchase,
        "available": True,
        "unavailable_reason": None,
        "capacity_constrained": False,
        "instances": instances,
        "gpus_per_instance": gpi,
        "gpus": instances * gpi,
        "usd_per_hour": None,
        "usd_per_gpu_hour": None,
        "job_hours": r(hours, 3),
        "job_days": r(hours / 24, 3),
        "job_usd": None,
        "price_observed_at": kw["observed_at"],
        "sized_on": SizedOn(sizing.system, sizing.gpu, sizing.gpus, r(sizing.days / kw["mfu"], 3), sizing.chosen),
        "_work_gpu_hours": instances * gpi * hours,
        "provider": kw["quote"].provider,
        "price_source": kw["quote"].source,
        "price_confidence": kw["quote"].confidence,
        "hardware": rented_gpus(gpi, gpu_display_name(sizing.gpu)),
    }


def _priced(row: dict[str, Any]) -> PricedRow:
    fields = {k: v for k, v in row.items() if not k.startswith("_")}
    return PricedRow(
        CloudRow(**fields),
        row.get("_effective_usd_per_gpu_hour"),
        row.get("_finish_days_p90"),
        row.get("_work_gpu_hours", 0.0),
    )


def _types_for(
    sizing: Sizing, gpu_types: dict[str, dict[str, int]], own: dict[str, Sizing], claims: dict[str, Sizing]
) -> dict[str, int]:
    """The instance types a sizing prices: its own instance type when it was sized on a rented system, and, when
    it is the sizing that claims its GPU (`_gpu_claims`), every type with that GPU that has no sizing of its own
    (another provider's H100 node rents the same work as the sizing on H100s)."""
    same_gpu = gpu_types.get(sizing.gpu, {})
    types: dict[str, int] = {}
    if sizing.instance_type and own.get(sizing.instance_type) is sizing:
        types.update({k: v for k, v in same_gpu.items() if k == sizing.instance_type})
    if claims.get(sizing.gpu) is sizing:
        types.update({k: v for k, v in same_gpu.items() if k not in own})
    return types


def _gpu_claims(sizings: tuple[Sizing, ...] | list[Sizing]) -> dict[str, Sizing]:
    """For each GPU, the one sizing that prices the instance types without a sizing of their own, so no type is
    priced twice: the chosen system's, else the first bought system's, else the first rented system's."""
    claims: dict[str, Sizing] = {}
    for rank in (lambda s: s.chosen, lambda s: not s.instance_type, lambda s: True):
        for sizing in sizings:
            if rank(sizing):
                claims.setdefault(sizing.gpu, sizing)
    return claims


def cloud_rows(job: CostJob, inputs: CostInputs, params: Params, scales: Scales) -> tuple[list[PricedRow], list[str]]:
    """Every priced row (sizings in order, then regions, instance types and PURCHASE_ORDER) and notes."""
    by_key: dict[tuple[str, str], list[CloudPrice]] = {}
    gpu_types: dict[str, dict[str, int]] = {}
    for p in inputs.cloud_prices:
        by_key.setdefault((p.instance_type, p.region), []).append(p)
        if p.gpu_model and p.gpus > 0:
            gpu_types.setdefault(p.gpu_model, {})[p.instance_type] = p.gpus
    bands = {(b.region, b.instance_type): b for b in inputs.spot_bands}
    # `pricing.regions` names AWS regions; every other provider is priced in the regions its price list covers.
    aws_regions = params.regions or tuple(sorted({p.region for p in inputs.cloud_prices if p.provider == AWS}))
    regions = (*aws_regions, *sorted({p.region for p in inputs.cloud_prices if p.provider != AWS}))
    rows: list[PricedRow] = []
    notes: list[str] = []
    own = {s.instance_type: s for s in job.sizings if s.instance_type}  # instance types sized on their own system
    claims = _gpu_claims(job.sizings)
    for instance_type, why in sorted(job.cannot_do.items()):
        if any(instance_type in types for types in gpu_types.values()):
            notes.append(f"{instance_type} is not priced: sized on its own hardware, it cannot do this job ({why})")
    for sizing in job.sizings:
        types = {k: v for k, v in _types_for(sizing, gpu_types, own, claims).items() if k not in job.cannot_do}
        if not gpu_types.get(sizing.gpu) and sizing.chosen:
            notes.append(
                "No cloud instance type in the price snapshot carries the chosen system's GPU "
                f"({gpu_display_name(sizing.gpu) or sizing.gpu} in the {system_display_name(sizing.system)}); "
                "the same work is priced on each instance type's own hardware instead."
            )
        hours = sizing.days * 24 / scales.mfu
        for region in regions:
            for instance_type in sorted(types):
                by_purchase: dict[str, list[CloudPrice]] = {}
                for p in by_key.get((instance_type, region), []):
                    by_purchase.setdefault(p.purchase, []).append(p)
                od = by_purchase.get("on_demand", [None])[0]
                for purchase in (p for p in PURCHASE_ORDER if by_purchase.get(p)):
                    quotes = by_purchase[purchase]
                    observed = max(q.observed_at for q in quotes)
                    row = _row(
                        region,
                        instance_type,
                        purchase,
                        types[instance_type],
                        sizing,
                        hours,
                        observed_at=observed,
                        mfu=scales.mfu,
                        quote=quotes[0],
                    )
                    if purchase == "spot":
                        quote = SpotQuote(quotes, od.usd_per_hour if od else None, bands.get((region, instance_type)))
                        row = spot_row(row, quote, sizing, hours, job.workload == "training", params, scales.spot_price)
                    else:
                        _priced_row(row, purchase, quotes[0].usd_per_hour, hours)
                    rows.append(_priced(row))
    return rows, notes
