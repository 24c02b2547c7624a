"""Spot: interruption rates from the Spot Advisor band, the job's MTBF, checkpoint overhead and the expected cost.

Model (reference/cloud-pricing.md section 5): the band (share reclaimed per month, f) gives a per-instance hourly
rate lambda = -ln(1 - f) / 730; interruptions are correlated (>92 % of co-located instances go together), so each
one restarts the whole job from its last checkpoint: job MTBF M = 1 / (N lambda). Checkpoint interval by Daly
(2006), the project's one interval model (`engine.performance.goodput.daly_interval`); overhead = C / tau +
(tau + C) / (2M) + R / M (checkpoint writes, half an interval of lost work plus the write in flight, restart).
p10 / p50 / p90 pair the band's low / mid / high f with the p10 / p50 / p90 zone price. Zones priced at (or within
10 % of) on-demand have no spare capacity and are flagged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from engine.performance.goodput import daly_interval
from engine.result.costs_cloud import FloatPercentiles, SpotDetail, UsdPercentiles, ZonePrices

from .inputs import CloudPrice, Sizing, SpotBand
from .money import HOURS_PER_MONTH, D, cents, r, rate
from .parameters import Params
from .providers import provider_name

__all__ = [
    "SPOT_AT_ON_DEMAND_RATIO",
    "SPOT_BAND_FRACTIONS",
    "UNLISTED_SPOT_BAND",
    "SpotQuote",
    "checkpoint_overhead_fraction",
    "daly_interval_hours",
    "interruption_rate_per_instance_hour",
    "job_mtbf_hours",
    "percentile",
    "spot_net_saving",
    "spot_row",
    "young_interval_hours",
]

# Advisor band -> share of instances reclaimed per month (low, mid, high). The top band is open-ended; 30 % as
# its high end is the value cloud-pricing.md section 5 works through.
SPOT_BAND_FRACTIONS: dict[str, tuple[float, float, float]] = {
    "<5%": (0.01, 0.025, 0.05),
    "5-10%": (0.05, 0.075, 0.10),
    "10-15%": (0.10, 0.125, 0.15),
    "15-20%": (0.15, 0.175, 0.20),
    ">20%": (0.20, 0.25, 0.30),
}
UNLISTED_SPOT_BAND = ">20%"  # types the Advisor does not list (p5e, p6-b200): assume the worst band, and say so
SPOT_AT_ON_DEMAND_RATIO = Decimal("0.9")  # spot >= 90 % of on-demand = no real spare capacity
SPOT_DEEP_DISCOUNT_FLOOR = Decimal("0.25")  # spot below 25 % of on-demand is suspicious (Advisor: 46-67 % off)
CAPACITY_NOTE = (
    "Prices and bands do not say whether this many instances can be had at once in one zone; large spot "
    "fleets often cannot. Plan a fallback to on-demand or a capacity block."
)


def interruption_rate_per_instance_hour(reclaimed_per_month: float) -> float:
    """lambda = -ln(1 - f) / 730: the constant hourly hazard that reclaims a share f of instances in a month."""
    if not 0 <= reclaimed_per_month < 1:
        raise ValueError("the monthly reclaimed share must be in [0, 1)")
    return -math.log(1.0 - reclaimed_per_month) / HOURS_PER_MONTH


def job_mtbf_hours(instances: int, rate_per_instance_hour: float) -> float:
    """M = 1 / (N lambda): any one of N instances interrupted stops the whole job (correlated interruptions)."""
    if rate_per_instance_hour <= 0:
        return math.inf
    return 1.0 / (instances * rate_per_instance_hour)


def young_interval_hours(checkpoint_hours: float, mtbf_hours: float) -> float:
    """Young (1974): tau = sqrt(2 C M), shown next to Daly's for comparison only."""
    return math.sqrt(2.0 * checkpoint_hours * mtbf_hours)


def daly_interval_hours(checkpoint_hours: float, mtbf_hours: float) -> float:
    """Daly (2006) in hours: the goodput model's one interval function."""
    return float(daly_interval(checkpoint_hours, mtbf_hours))


def checkpoint_overhead_fraction(
    checkpoint_hours: float, mtbf_hours: float, restart_hours: float, interval_hours: float
) -> float:
    """Extra time per useful hour: C / tau (writing) + (tau + C) / (2M) (lost work) + R / M (restarts)."""
    if math.isinf(mtbf_hours):
        return checkpoint_hours / interval_hours if interval_hours > 0 and math.isfinite(interval_hours) else 0.0
    c, m, rh, tau = checkpoint_hours, mtbf_hours, restart_hours, interval_hours
    return c / tau + (tau + c) / (2 * m) + rh / m


def spot_net_saving(discount: float, overhead: float) -> float:
    """Net saving against on-demand once the longer run is paid for: 1 - (1 - d)(1 + overhead)."""
    return 1.0 - (1.0 - discount) * (1.0 + overhead)


def percentile(values: Sequence[Decimal], q: float) -> Decimal:
    """Linear-interpolated percentile (numpy's default), q in [0, 1], on Decimals."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of nothing")
    pos = D(q) * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclass(frozen=True)
class SpotQuote:
    """What one spot row prices: the zones' quotes, the on-demand rate beside them, and the Advisor band."""

    zones: list[CloudPrice]
    on_demand: Decimal | None
    band: SpotBand | None


def _spot_header(row: dict[str, Any], quote: SpotQuote, usable: int, c_h: float, c_source: str, r_h: float) -> dict:
    band = quote.band
    return {
        "band": band.band if band is not None else UNLISTED_SPOT_BAND,
        "band_assumed": band is None,
        "band_as_of": band.as_of if band else None,
        "band_source": band.source if band else _unlisted_band_source(row),
        "advisor_savings_percent": band.savings_percent if band else None,
        "zones": len(quote.zones),
        "zones_at_on_demand": len(quote.zones) - usable,
        "checkpoint_write_min": r(c_h * 60, 3),
        "checkpoint_write_source": c_source,
        "restart_min": r(r_h * 60, 3),
        "capacity_note": CAPACITY_NOTE,
    }


def _unlisted_band_source(row: dict[str, Any]) -> str:
    """Why the worst band is assumed: AWS's Advisor does not list the type, or the provider publishes no band."""
    if row.get("provider", "aws") == "aws":
        where = f"is not listed by the Spot Instance Advisor in {row['region']}"
    else:
        where = f"({provider_name(row['provider'])}, {row['region']}) has no published interruption rate"
    return f"{row['instance_type']} {where}; the worst band ({UNLISTED_SPOT_BAND}) is assumed"


def _points(
    usable: list[Decimal],
    fractions: tuple[float, ...],
    instances: int,
    hours: float,
    training: bool,
    c_h: float,
    r_h: float,
) -> dict[str, dict[str, Any]]:
    """p10 / p50 / p90: interruption band and zone price paired, each with its overhead, hours and cost."""
    points = {}
    for label, f, q in (("p10", fractions[0], 0.1), ("p50", fractions[1], 0.5), ("p90", fractions[2], 0.9)):
        lam = interruption_rate_per_instance_hour(f)
        if training:
            m = job_mtbf_hours(instances, lam)
            tau: float | None = daly_interval_hours(c_h, m)
            overhead = checkpoint_overhead_fraction(c_h, m, r_h, tau)
        else:  # serving: an interrupted instance restarts alone; nothing is lost but its restart time
            m, tau = job_mtbf_hours(1, lam), None
            overhead = lam * r_h
        expected_h = hours * (1 + overhead)
        price = percentile(usable, q)
        points[label] = {
            "reclaimed_per_month": f,
            "interruptions_per_instance_hour": lam,
            "job_mtbf_hours": m,
            "checkpoint_interval_hours": tau,
            "overhead": overhead,
            "hours": expected_h,
            "usd_per_hour": price,
            "job_usd": cents(instances * price * D(expected_h)),
        }
    return points


def _warnings(band: SpotBand | None, mid_rate: Decimal, on_demand: Decimal | None, usable: int) -> list[str]:
    warnings = []
    if band is None:
        warnings.append("interruption band assumed (type not listed by the Spot Instance Advisor here)")
    if on_demand and mid_rate < on_demand * SPOT_DEEP_DISCOUNT_FLOOR:
        warnings.append(
            "median spot price is more than 75 % below on-demand, deeper than the Advisor's 46-67 % for P types "
            "(AWS Spot Instance Advisor): verify before relying on it"
        )
    if usable == 1:
        warnings.append("only one zone quotes a usable spot price")
    return warnings


def spot_row(
    row: dict[str, Any],
    quote: SpotQuote,
    sizing: Sizing,
    hours: float,
    training: bool,
    params: Params,
    price_scale: float,
) -> dict[str, Any]:
    """Fill a spot row: the p50 case as the row's figures, p10 / p90 ranges and warnings under `spot`."""
    scale = D(price_scale)
    usable = [z.usd_per_hour * scale for z in quote.zones if not z.capacity_constrained]
    band_name = quote.band.band if quote.band is not None else UNLISTED_SPOT_BAND
    fractions = SPOT_BAND_FRACTIONS.get(band_name, SPOT_BAND_FRACTIONS[UNLISTED_SPOT_BAND])
    c_h, c_source = sizing.checkpoint_write_h, "plan (training.goodput.checkpoint_write_s)"
    if c_h is None or c_h <= 0:
        c_h, c_source = float(params["spot_checkpoint_write_min"]) / 60, "parameter spot_checkpoint_write_min"
    r_h = float(params["spot_restart_min"]) / 60
    spot = _spot_header(row, quote, len(usable), c_h, c_source, r_h)
    if not usable:
        row.update(
            available=False,
            capacity_constrained=True,
            unavailable_reason="spot is quoted at the on-demand price in every zone: no spare capacity",
            usd_per_hour=rate(min(z.usd_per_hour for z in quote.zones) * scale) if quote.zones else None,
            spot=SpotDetail(**spot),
        )
        return row
    instances, gpi = row["instances"], row["gpus_per_instance"]
    points = _points(usable, fractions, instances, hours, training, c_h, r_h)
    mid = points["p50"]
    row["usd_per_hour"] = rate(mid["usd_per_hour"])
    row["usd_per_gpu_hour"] = rate(mid["usd_per_hour"] / gpi)
    row["job_hours"] = r(mid["hours"], 3)
    row["job_days"] = r(mid["hours"] / 24, 3)
    row["job_usd"] = mid["job_usd"]
    row["_finish_days_p90"] = points["p90"]["hours"] / 24
    row["_effective_usd_per_gpu_hour"] = mid["usd_per_hour"] * D(1 + mid["overhead"]) / gpi
    on_demand = quote.on_demand
    constrained = on_demand is not None and mid["usd_per_hour"] >= on_demand * SPOT_AT_ON_DEMAND_RATIO
    row["capacity_constrained"] = constrained
    finite = math.isfinite(mid["job_mtbf_hours"])
    spot.update(
        zone_usd_per_hour=ZonePrices(
            min=rate(min(usable)),
            p10=rate(points["p10"]["usd_per_hour"]),
            p50=rate(mid["usd_per_hour"]),
            p90=rate(points["p90"]["usd_per_hour"]),
            max=rate(max(usable)),
        ),
        reclaimed_per_month=FloatPercentiles(**{k: v["reclaimed_per_month"] for k, v in points.items()}),
        interruptions_per_instance_hour=r(mid["interruptions_per_instance_hour"], 8),
        job_mtbf_hours=r(mid["job_mtbf_hours"], 3) if finite else None,
        expected_interruptions=r(mid["hours"] / mid["job_mtbf_hours"], 2) if training else None,
        checkpoint_interval_hours=None
        if mid["checkpoint_interval_hours"] is None
        else r(mid["checkpoint_interval_hours"], 4),
        young_interval_hours=r(young_interval_hours(c_h, mid["job_mtbf_hours"]), 4) if training and finite else None,
        overhead_fraction=FloatPercentiles(**{k: r(v["overhead"], 5) for k, v in points.items()}),
        finish_days=FloatPercentiles(**{k: r(v["hours"] / 24, 3) for k, v in points.items()}),
        job_usd=UsdPercentiles(**{k: v["job_usd"] for k, v in points.items()}),
        quoted=True,
    )
    if on_demand:
        discount = float(1 - mid["usd_per_hour"] / on_demand)
        spot["discount_vs_on_demand"] = r(discount, 4)
        spot["net_saving_vs_on_demand"] = r(spot_net_saving(discount, mid["overhead"]), 4)
    spot["warnings"] = tuple(_warnings(quote.band, mid["usd_per_hour"], on_demand, len(usable)))
    if constrained:
        spot["capacity_note"] = (
            "The median zone's spot price is within 10 % of on-demand: AWS has little or no spare capacity. "
            + spot["capacity_note"]
        )
    row["spot"] = SpotDetail(**spot)
    return row
