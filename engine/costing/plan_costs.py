"""Build or rent: price a plan on-prem (capex, opex, TCO) and on AWS (every purchase option), compare, add carbon.

PURE Python: no Django, boto3 or network (a subprocess test enforces it). Inputs are plain dataclasses (cloud
prices from a snapshot, part prices, named parameters, grid intensities, Spot Advisor bands) and the plan dict
the sizing engine produced; the output is JSON-ready. Money is `Decimal` throughout and is rounded once, on the
way out: amounts become strings with 2 decimals ("1234.50"), hourly rates keep the snapshot's 6 decimals (JSON
has no Decimal type, and a float would lose cents on large sums).

Models, each stated once (reference/cloud-pricing.md section 5 for spot):

- cloud job: instances = ceil(job GPUs / GPUs per instance) of an instance type with the same catalog GPU
  (same model *and* memory: catalog ids, from the snapshot's stored instance specs or, without them, the curated
  `pricing.aws.instances.INSTANCE_GPUS`; the caller passes them in on each `CloudPrice`); job hours = the plan's
  training days x 24, or one year of serving for inference; job cost = instances x $/instance-hour x hours.
- reserved: paid for whole terms (1 or 3 years) whether used or not, so the job pays ceil(hours / term) terms;
  `job_usd_if_term_shared` is what the job would cost if other work used the rest of the term.
- capacity blocks: <= 64 instances per block and <= 256 in total, durations of 1-14 days then 7-day steps to
  182 days; the job books the shortest allowed duration that covers it, or the option is unavailable.
- spot: the Advisor band (share reclaimed per month, f) gives a per-instance hourly interruption rate
  lambda = -ln(1 - f) / 730; interruptions are correlated (>92 % of co-located instances go together), so
  each one restarts the whole job from its last checkpoint: job MTBF M = 1 / (N lambda). Checkpoint interval by
  Daly (2006); overhead = C / tau + (tau + C) / (2M) + R / M (checkpoint writes, half an interval of lost work
  plus the write in flight, restart). p10 / p50 / p90 pair the band's low / mid / high f with the p10 / p50 /
  p90 zone price. Zones priced at (or within 10 % of) on-demand have no spare capacity and are flagged.
- on-prem: capex = priced hardware + install/integration %; opex per year = facility kW x 8760 x utilisation x
  $/kWh + colocation $/kW-month x 12 x IT kW + maintenance % x capex + staff; TCO = capex + years x opex;
  $/GPU-hour = TCO / (GPUs x 8760 x utilisation x years); the job bought for itself pays the whole capex plus
  its own running cost, a shared cluster charges the job GPU-hours x $/GPU-hour.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

__all__ = [
    "CAPACITY_BLOCK_MAX_DAYS",
    "CAPACITY_BLOCK_MAX_INSTANCES",
    "CAPACITY_BLOCK_MAX_INSTANCES_PER_BLOCK",
    "PURCHASE_ORDER",
    "SPOT_AT_ON_DEMAND_RATIO",
    "SPOT_BAND_FRACTIONS",
    "UNLISTED_SPOT_BAND",
    "CloudPrice",
    "CostInputs",
    "CostParameter",
    "CostResult",
    "PartPrice",
    "Scales",
    "SpotBand",
    "capacity_block_days",
    "checkpoint_overhead_fraction",
    "daly_interval_hours",
    "interruption_rate_per_instance_hour",
    "job_mtbf_hours",
    "percentile",
    "plan_costs",
    "request_overrides",
    "selection_price_data",
    "spot_net_saving",
    "usd",
    "young_interval_hours",
]

HOURS_PER_YEAR = 8760
HOURS_PER_MONTH = 730  # the Advisor's "month" (8760 / 12)
CENT = Decimal("0.01")
RATE_QUANTUM = Decimal("0.000001")  # CloudOffer.usd_per_hour precision

PURCHASE_ORDER = ("on_demand", "spot", "reserved_1y", "reserved_3y", "capacity_block")
RESERVED_YEARS = {"reserved_1y": 1, "reserved_3y": 3}

CAPACITY_BLOCK_MAX_INSTANCES_PER_BLOCK = 64
CAPACITY_BLOCK_MAX_INSTANCES = 256
CAPACITY_BLOCK_DAILY_STEPS_TO = 14
CAPACITY_BLOCK_MAX_DAYS = 182

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

SENSITIVITY_STEP = 0.20


# ----------------------------------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class CloudPrice:
    """One snapshot price: one instance of `instance_type` for one hour under `purchase` (spot: per AZ ID)."""

    instance_type: str
    region: str
    purchase: str
    usd_per_hour: Decimal
    gpus: int
    gpu_model: str
    availability_zone_id: str = ""
    capacity_constrained: bool = False
    observed_at: str = ""


@dataclass(frozen=True)
class PartPrice:
    part_number: str
    catalog_id: str
    unit_price_usd: Decimal
    source: str
    as_of: str
    confidence: str  # list_price | public_estimate | assumption | user_override
    description: str = ""
    category: str = ""


@dataclass(frozen=True)
class CostParameter:
    name: str
    value: Decimal
    unit: str
    source: str
    as_of: str
    confidence: str


@dataclass(frozen=True)
class SpotBand:
    region: str
    instance_type: str
    band: str
    savings_percent: int | None
    as_of: str
    source: str


@dataclass(frozen=True)
class CostInputs:
    """Everything costing needs besides the plan. `part_overrides` are one user's prices for one plan."""

    cloud_prices: Sequence[CloudPrice]
    parts: Sequence[PartPrice]
    parameters: Mapping[str, CostParameter]
    carbon: Mapping[str, CostParameter]
    spot_bands: Sequence[SpotBand] = ()
    part_overrides: Mapping[str, Decimal] = field(default_factory=dict)
    parameter_overrides: Mapping[str, Decimal] = field(default_factory=dict)
    snapshot_note: str = ""


@dataclass(frozen=True)
class Scales:
    """Multipliers for the sensitivity table (1 = the plan as given)."""

    utilization: float = 1.0
    system_price: float = 1.0
    power_price: float = 1.0
    spot_price: float = 1.0
    mfu: float = 1.0  # job time scales with 1 / mfu


@dataclass
class CostResult:
    costs: dict[str, Any]
    bom: list[dict[str, Any]] | None
    explain: dict[str, dict[str, Any]]


# ------------------------------------------------------------------------------------------------ formatting


def D(value: float | int | str | Decimal) -> Decimal:
    """A number as Decimal without binary noise (floats go through their shortest repr)."""
    if isinstance(value, Decimal):
        return value
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def usd(value: Decimal | None) -> str | None:
    """Money out: a string with exactly 2 decimals (half-up), or None."""
    return None if value is None else str(value.quantize(CENT, rounding=ROUND_HALF_UP))


def rate(value: Decimal | None) -> str | None:
    """An hourly rate out: 6 decimals at most, trailing zeros kept to 2 ("55.04", "21.957642")."""
    if value is None:
        return None
    q = value.quantize(RATE_QUANTUM, rounding=ROUND_HALF_UP).normalize()
    return str(q.quantize(CENT)) if -q.as_tuple().exponent < 2 else format(q, "f")


def _r(x: float, digits: int = 4) -> float:
    return float(round(x, digits))


# -------------------------------------------------------------------------------------------- the spot model


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
    """Young (1974): tau = sqrt(2 C M)."""
    return math.sqrt(2.0 * checkpoint_hours * mtbf_hours)


def daly_interval_hours(checkpoint_hours: float, mtbf_hours: float) -> float:
    """Daly (2006): tau = sqrt(2CM) [1 + (1/3) sqrt(C/2M) + (1/9) (C/2M)] - C for C < 2M, else M."""
    c, m = checkpoint_hours, mtbf_hours
    if c >= 2 * m:
        return m
    x = c / (2 * m)
    return math.sqrt(2 * c * m) * (1 + math.sqrt(x) / 3 + x / 9) - c


def checkpoint_overhead_fraction(
    checkpoint_hours: float, mtbf_hours: float, restart_hours: float, interval_hours: float
) -> float:
    """Extra time per useful hour: C / tau (writing) + (tau + C) / (2M) (lost work) + R / M (restarts)."""
    if math.isinf(mtbf_hours):
        return checkpoint_hours / interval_hours if interval_hours > 0 and math.isfinite(interval_hours) else 0.0
    c, m, r, tau = checkpoint_hours, mtbf_hours, restart_hours, interval_hours
    return c / tau + (tau + c) / (2 * m) + r / m


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


def capacity_block_days(job_days: float) -> int | None:
    """Shortest bookable block covering the job: whole days up to 14, then 7-day steps to 182; None if longer."""
    days = max(1, math.ceil(job_days - 1e-9))
    if days <= CAPACITY_BLOCK_DAILY_STEPS_TO:
        return days
    stepped = CAPACITY_BLOCK_DAILY_STEPS_TO + 7 * math.ceil((days - CAPACITY_BLOCK_DAILY_STEPS_TO) / 7)
    return stepped if stepped <= CAPACITY_BLOCK_MAX_DAYS else None


# ------------------------------------------------------------------------------------------ plan extraction


@dataclass(frozen=True)
class _Sizing:
    """The work sized on one system: what the cloud option must replicate."""

    system: str
    gpu: str
    gpus: int
    days: float  # training days, or 365 for a year of serving
    it_kw: float
    checkpoint_write_h: float | None
    chosen: bool


@dataclass(frozen=True)
class _Job:
    workload: str
    sizings: tuple[_Sizing, ...]
    deadline_days: float | None
    cluster_system: str
    cluster_systems: int
    cluster_gpus: int
    job_gpus: int
    it_kw: float
    facility_kw: float


def _job(plan: Mapping[str, Any]) -> _Job | None:
    if not plan.get("feasible") or "cluster" not in plan or "power" not in plan:
        return None
    cluster, power = plan["cluster"], plan["power"]
    candidates = plan.get("candidates") or []
    chosen_gpu = next((c.get("gpu") for c in candidates if c.get("chosen")), "")
    training = plan.get("training")
    inference = plan.get("inference")
    request = plan.get("request") or {}
    if training:
        goodput = training.get("goodput") or {}
        write_s = goodput.get("checkpoint_write_s")
        chosen = _Sizing(
            system=cluster["system"],
            gpu=chosen_gpu,
            gpus=int(training["gpus"]),
            days=float(training["days"]),
            it_kw=float(power["it_kw"]),
            checkpoint_write_h=None if write_s is None else float(write_s) / 3600,
            chosen=True,
        )
        deadline = (request.get("training") or {}).get("deadline_days")
    elif inference:
        chosen = _Sizing(
            cluster["system"], chosen_gpu, int(inference["gpus"]), 365.0, float(power["it_kw"]), None, True
        )
        deadline = None
    else:
        return None
    sizings = [chosen]
    seen = {chosen.gpu}
    others = [c for c in candidates if c.get("feasible") and not c.get("chosen") and c.get("gpus")]
    # One sizing per GPU model: the candidate needing the fewest GPU-hours (what a cloud user would pick).
    others.sort(key=lambda c: (float(c["gpus"]) * float(c.get("days") or 365.0), c["system"]))
    for c in others:
        if c["gpu"] in seen:
            continue
        seen.add(c["gpu"])
        write_h = None
        if chosen.checkpoint_write_h is not None and training:
            # Same checkpoint size and per-GPU write bandwidth: write time scales with 1 / GPUs.
            write_h = chosen.checkpoint_write_h * chosen.gpus / int(c["gpus"])
        sizings.append(
            _Sizing(
                system=c["system"],
                gpu=c["gpu"],
                gpus=int(c["gpus"]),
                days=float(c.get("days") or 365.0) if training else 365.0,
                it_kw=float(c.get("it_kw") or 0.0),
                checkpoint_write_h=write_h,
                chosen=False,
            )
        )
    return _Job(
        workload="training" if training else "inference",
        sizings=tuple(sizings),
        deadline_days=None if deadline is None else float(deadline),
        cluster_system=cluster["system"],
        cluster_systems=int(cluster["systems"]),
        cluster_gpus=int(cluster["gpus"]),
        job_gpus=chosen.gpus,
        it_kw=float(power["it_kw"]),
        facility_kw=float(power["facility_kw"]),
    )


# ------------------------------------------------------------------------------------------------ parameters


class _Params:
    """Named parameters with per-plan overrides (site block, user overrides); records what was used."""

    def __init__(self, inputs: CostInputs, plan: Mapping[str, Any]) -> None:
        self.base = dict(inputs.parameters)
        site = ((plan.get("request") or {}).get("site")) or {}
        self.overrides: dict[str, tuple[Decimal, str]] = {}
        for name in ("electricity_usd_per_kwh", "colo_usd_per_kw_month"):
            if site.get(name) is not None:
                self.overrides[name] = (D(site[name]), f"request site.{name}")
        for name, value in inputs.parameter_overrides.items():
            self.overrides[name] = (D(value), "user override for this plan (request pricing)")
        pricing = (plan.get("request") or {}).get("pricing") or {}
        self.years = int(pricing.get("years") or 3)
        self.regions = tuple(pricing.get("regions") or ())

    def __getitem__(self, name: str) -> Decimal:
        if name in self.overrides:
            return self.overrides[name][0]
        if name not in self.base:
            raise KeyError(f"costing parameter {name!r} is not loaded (fixtures/prices/parameters.json)")
        return self.base[name].value

    def report(self) -> dict[str, dict[str, Any]]:
        out = {}
        for name in sorted(set(self.base) | set(self.overrides)):
            p = self.base.get(name)
            over = self.overrides.get(name)
            out[name] = {
                "value": str(self[name]),
                "default": None if p is None else str(p.value),
                "unit": None if p is None else p.unit,
                "confidence": "user_override" if over else (None if p is None else p.confidence),
                "source": over[1] if over else (None if p is None else p.source),
                "as_of": None if p is None else p.as_of,
            }
        return out


# -------------------------------------------------------------------------------------------------- on-prem


@dataclass
class _Onprem:
    hardware: Decimal | None
    lines: list[dict[str, Any]]
    coverage: dict[str, Any]
    bom: list[dict[str, Any]] | None
    install: Decimal | None = None
    capex: Decimal | None = None
    energy_y: Decimal | None = None
    colo_y: Decimal | None = None
    maint_y: Decimal | None = None
    staff_y: Decimal | None = None
    opex_y: Decimal | None = None
    tco: Decimal | None = None
    usd_per_gpu_hour: Decimal | None = None
    job_usd: Decimal | None = None
    job_usd_shared: Decimal | None = None
    job_hours: float = 0.0
    utilization: Decimal = Decimal(0)
    electricity: Decimal = Decimal(0)


@dataclass(frozen=True)
class _PriceIndex:
    """Reference prices and this plan's overrides, each keyed by part number and by catalog id."""

    references: dict[str, PartPrice]
    overrides: dict[str, PartPrice]

    def get(self, key: str) -> PartPrice | None:
        return self.overrides.get(key) or self.references.get(key)


def _price_index(inputs: CostInputs) -> _PriceIndex:
    references: dict[str, PartPrice] = {}
    for p in inputs.parts:
        for key in (p.catalog_id, p.part_number):
            if key:
                references[key] = p
    overrides: dict[str, PartPrice] = {}
    for key, value in inputs.part_overrides.items():
        known = references.get(key)
        overrides[key] = PartPrice(
            part_number=known.part_number if known else key,
            catalog_id=known.catalog_id if known else "",
            unit_price_usd=D(value),
            source=f"user override for this plan ({key})",
            as_of="",
            confidence="user_override",
            description=known.description if known else "",
            category=known.category if known else "",
        )
    return _PriceIndex(references=references, overrides=overrides)


def _line_price(line: Mapping[str, Any], index: _PriceIndex) -> PartPrice | None:
    """A user override wins over any reference, whether it names the line's part number or its catalog id (a
    catalog id covers every length of a cable); then the reference for the part number, then for the catalog id."""
    keys = [k for k in (line.get("part_number"), line.get("catalog_id"), line.get("id")) if k]
    for table in (index.overrides, index.references):
        for key in keys:
            if key in table:
                return table[key]
    return None


def _onprem_hardware(plan: Mapping[str, Any], job: _Job, inputs: CostInputs, scales: Scales) -> _Onprem:
    index = _price_index(inputs)
    scale = D(scales.system_price)
    bom_in = plan.get("bom")
    if isinstance(bom_in, list) and bom_in:
        priced_bom, unpriced, total = [], [], Decimal(0)
        for line in bom_in:
            price = _line_price(line, index)
            out = dict(line)
            if price is None:
                out.update(
                    unit_price_usd=None,
                    extended_price_usd=None,
                    price_source=None,
                    price_as_of=None,
                    price_confidence=None,
                )
                unpriced.append(
                    {
                        "part_number": line.get("part_number"),
                        "description": line.get("description"),
                        "quantity": line.get("quantity"),
                    }
                )
            else:
                unit = price.unit_price_usd * scale
                extended = unit * D(line.get("quantity") or 0)
                total += extended
                out.update(
                    unit_price_usd=usd(unit),
                    extended_price_usd=usd(extended),
                    price_source=price.source,
                    price_as_of=price.as_of,
                    price_confidence=price.confidence,
                )
            priced_bom.append(out)
        notes = []
        if unpriced:
            notes.append(
                f"{len(unpriced)} of {len(bom_in)} BOM lines have no sourced price and are left out of capex "
                "(listed in unpriced_lines); capex is therefore a lower bound."
            )
        coverage = {
            "basis": "bom",
            "priced_lines": len(bom_in) - len(unpriced),
            "unpriced_lines": unpriced,
            "notes": notes,
        }
        return _Onprem(hardware=total if total > 0 else None, lines=[], coverage=coverage, bom=priced_bom)

    price = index.get(job.cluster_system)
    note = (
        "No BOM in this plan: capex prices the GPU systems only (cluster.systems x system price). Fabric "
        "switches, optics, cables, storage, racks, PDUs and CDUs are not included, so capex is a lower bound."
    )
    if price is None:
        coverage = {
            "basis": "systems_only",
            "priced_lines": 0,
            "unpriced_lines": [
                {"part_number": job.cluster_system, "description": "GPU system", "quantity": job.cluster_systems}
            ],
            "notes": [note, f"{job.cluster_system} has no sourced price: on-prem cost is not computed."],
        }
        return _Onprem(hardware=None, lines=[], coverage=coverage, bom=None)
    unit = price.unit_price_usd * scale
    extended = unit * job.cluster_systems
    line = {
        "catalog_id": job.cluster_system,
        "part_number": price.part_number or None,
        "description": price.description or job.cluster_system,
        "category": "system",
        "quantity": job.cluster_systems,
        "unit_price_usd": usd(unit),
        "extended_price_usd": usd(extended),
        "price_source": price.source,
        "price_as_of": price.as_of,
        "price_confidence": price.confidence,
    }
    coverage = {"basis": "systems_only", "priced_lines": 1, "unpriced_lines": [], "notes": [note]}
    return _Onprem(hardware=extended, lines=[line], coverage=coverage, bom=None)


def _onprem(plan: Mapping[str, Any], job: _Job, inputs: CostInputs, params: _Params, scales: Scales) -> _Onprem:
    o = _onprem_hardware(plan, job, inputs, scales)
    o.utilization = min(Decimal(1), params["utilization"] * D(scales.utilization))
    o.electricity = params["electricity_usd_per_kwh"] * D(scales.power_price)
    chosen = job.sizings[0]
    o.job_hours = chosen.days * 24 / scales.mfu
    if o.hardware is None:
        return o
    years = params.years
    o.install = o.hardware * params["install_integration_percent"] / 100
    o.capex = o.hardware + o.install
    facility_kw, it_kw = D(job.facility_kw), D(job.it_kw)
    o.energy_y = facility_kw * HOURS_PER_YEAR * o.utilization * o.electricity
    o.colo_y = it_kw * params["colo_usd_per_kw_month"] * 12
    o.maint_y = o.capex * params["maintenance_percent_per_year"] / 100
    o.staff_y = params["staff_usd_per_year"]
    o.opex_y = o.energy_y + o.colo_y + o.maint_y + o.staff_y
    o.tco = o.capex + o.opex_y * years
    used_gpu_hours = D(job.cluster_gpus) * HOURS_PER_YEAR * o.utilization * years
    o.usd_per_gpu_hour = o.tco / used_gpu_hours if used_gpu_hours > 0 else None
    hours = D(o.job_hours)
    o.job_usd = (
        o.capex + facility_kw * hours * o.electricity + (o.colo_y + o.maint_y + o.staff_y) * hours / HOURS_PER_YEAR
    )
    if o.usd_per_gpu_hour is not None:
        o.job_usd_shared = D(job.job_gpus) * hours * o.usd_per_gpu_hour
    return o


# ---------------------------------------------------------------------------------------------------- cloud


def _spot_row(
    row: dict[str, Any],
    zones: list[CloudPrice],
    on_demand: Decimal | None,
    band: SpotBand | None,
    sizing: _Sizing,
    instances: int,
    hours: float,
    workload: str,
    params: _Params,
    scales: Scales,
) -> dict[str, Any]:
    scale = D(scales.spot_price)
    usable = [z.usd_per_hour * scale for z in zones if not z.capacity_constrained]
    at_od = len(zones) - len(usable)
    band_name = band.band if band is not None else UNLISTED_SPOT_BAND
    fractions = SPOT_BAND_FRACTIONS.get(band_name, SPOT_BAND_FRACTIONS[UNLISTED_SPOT_BAND])
    c_h = sizing.checkpoint_write_h
    c_source = "plan (training.goodput.checkpoint_write_s)"
    if c_h is None or c_h <= 0:
        c_h = float(params["spot_checkpoint_write_min"]) / 60
        c_source = "parameter spot_checkpoint_write_min"
    r_h = float(params["spot_restart_min"]) / 60
    spot: dict[str, Any] = {
        "band": band_name,
        "band_assumed": band is None,
        "band_as_of": band.as_of if band else None,
        "band_source": band.source
        if band
        else (
            f"{row['instance_type']} is not listed by the Spot Instance Advisor in {row['region']}; the worst "
            f"band ({UNLISTED_SPOT_BAND}) is assumed"
        ),
        "advisor_savings_percent": band.savings_percent if band else None,
        "zones": len(zones),
        "zones_at_on_demand": at_od,
        "checkpoint_write_min": _r(c_h * 60, 3),
        "checkpoint_write_source": c_source,
        "restart_min": _r(r_h * 60, 3),
        "capacity_note": (
            "Prices and bands do not say whether this many instances can be had at once in one zone; large spot "
            "fleets often cannot. Plan a fallback to on-demand or a capacity block."
        ),
    }
    row["spot"] = spot
    if not usable:
        row.update(
            available=False,
            capacity_constrained=True,
            unavailable_reason="spot is quoted at the on-demand price in every zone: no spare capacity",
            usd_per_hour=rate(min(z.usd_per_hour for z in zones) * scale) if zones else None,
        )
        return row
    prices = {q: percentile(usable, q) for q in (0.1, 0.5, 0.9)}
    points = {}
    for label, f, q in (("p10", fractions[0], 0.1), ("p50", fractions[1], 0.5), ("p90", fractions[2], 0.9)):
        lam = interruption_rate_per_instance_hour(f)
        if workload == "training":
            m = job_mtbf_hours(instances, lam)
            tau = daly_interval_hours(c_h, m)
            overhead = checkpoint_overhead_fraction(c_h, m, r_h, tau)
        else:  # serving: an interrupted instance restarts alone; nothing is lost but its restart time
            m, tau = job_mtbf_hours(1, lam), None
            overhead = lam * r_h
        expected_h = hours * (1 + overhead)
        points[label] = {
            "reclaimed_per_month": f,
            "interruptions_per_instance_hour": lam,
            "job_mtbf_hours": m,
            "checkpoint_interval_hours": tau,
            "overhead": overhead,
            "hours": expected_h,
            "usd_per_hour": prices[q],
            "job_usd": instances * prices[q] * D(expected_h),
        }
    mid = points["p50"]
    row["usd_per_hour"] = rate(mid["usd_per_hour"])
    row["usd_per_gpu_hour"] = rate(mid["usd_per_hour"] / row["gpus_per_instance"])
    row["job_hours"] = _r(mid["hours"], 3)
    row["job_days"] = _r(mid["hours"] / 24, 3)
    row["job_usd"] = usd(mid["job_usd"])
    row["_job_usd"] = mid["job_usd"]
    row["_finish_days_p90"] = points["p90"]["hours"] / 24
    row["_effective_usd_per_gpu_hour"] = mid["usd_per_hour"] * D(1 + mid["overhead"]) / row["gpus_per_instance"]
    constrained = on_demand is not None and mid["usd_per_hour"] >= on_demand * SPOT_AT_ON_DEMAND_RATIO
    row["capacity_constrained"] = constrained
    spot.update(
        zone_usd_per_hour={
            "min": rate(min(usable)),
            "p10": rate(prices[0.1]),
            "p50": rate(prices[0.5]),
            "p90": rate(prices[0.9]),
            "max": rate(max(usable)),
        },
        reclaimed_per_month={k: v["reclaimed_per_month"] for k, v in points.items()},
        interruptions_per_instance_hour=_r(mid["interruptions_per_instance_hour"], 8),
        job_mtbf_hours=_r(mid["job_mtbf_hours"], 3) if math.isfinite(mid["job_mtbf_hours"]) else None,
        expected_interruptions=_r(mid["hours"] / mid["job_mtbf_hours"], 2) if workload == "training" else None,
        checkpoint_interval_hours=None
        if mid["checkpoint_interval_hours"] is None
        else _r(mid["checkpoint_interval_hours"], 4),
        young_interval_hours=_r(young_interval_hours(c_h, mid["job_mtbf_hours"]), 4)
        if workload == "training" and math.isfinite(mid["job_mtbf_hours"])
        else None,
        overhead_fraction={k: _r(v["overhead"], 5) for k, v in points.items()},
        finish_days={k: _r(v["hours"] / 24, 3) for k, v in points.items()},
        job_usd={k: usd(v["job_usd"]) for k, v in points.items()},
    )
    if on_demand:
        discount = float(1 - mid["usd_per_hour"] / on_demand)
        spot["discount_vs_on_demand"] = _r(discount, 4)
        spot["net_saving_vs_on_demand"] = _r(spot_net_saving(discount, mid["overhead"]), 4)
    warnings = []
    if band is None:
        warnings.append("interruption band assumed (type not listed by the Spot Instance Advisor here)")
    if on_demand and mid["usd_per_hour"] < on_demand * SPOT_DEEP_DISCOUNT_FLOOR:
        warnings.append(
            "median spot price is more than 75 % below on-demand, deeper than the Advisor's 46-67 % for P types "
            "(cloud-pricing.md section 5): verify before relying on it"
        )
    if len(usable) == 1:
        warnings.append("only one zone quotes a usable spot price")
    spot["warnings"] = warnings
    if constrained:
        spot["capacity_note"] = (
            "The median zone's spot price is within 10 % of on-demand: AWS has little or no spare capacity. "
            + spot["capacity_note"]
        )
    return row


def _priced_row(row: dict[str, Any], purchase: str, unit: Decimal, gpi: int, instances: int, hours: float) -> None:
    """Fill a regional-price row: on-demand, reserved (whole terms) or capacity block (limits respected)."""
    row["usd_per_hour"] = rate(unit)
    row["usd_per_gpu_hour"] = rate(unit / gpi)
    row["_effective_usd_per_gpu_hour"] = unit / gpi
    if purchase in RESERVED_YEARS:
        term_h = RESERVED_YEARS[purchase] * HOURS_PER_YEAR
        terms = max(1, math.ceil(hours / term_h - 1e-9))
        row["commitment_hours"] = terms * term_h
        row["_job_usd"] = instances * unit * terms * term_h
        row["job_usd_if_term_shared"] = usd(instances * unit * D(hours))
        row["_fixed"] = True
    elif purchase == "capacity_block":
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
            row["_job_usd"] = instances * unit * days * 24
    else:
        row["_job_usd"] = instances * unit * D(hours)
    if row.get("_job_usd") is not None:
        row["job_usd"] = usd(row["_job_usd"])


def _cloud_rows(job: _Job, inputs: CostInputs, params: _Params, scales: Scales) -> tuple[list[dict], list[str]]:
    by_key: dict[tuple[str, str], list[CloudPrice]] = {}
    gpu_types: dict[str, dict[str, int]] = {}
    for p in inputs.cloud_prices:
        by_key.setdefault((p.instance_type, p.region), []).append(p)
        if p.gpu_model and p.gpus > 0:
            gpu_types.setdefault(p.gpu_model, {})[p.instance_type] = p.gpus
    bands = {(b.region, b.instance_type): b for b in inputs.spot_bands}
    regions = params.regions or tuple(sorted({p.region for p in inputs.cloud_prices}))
    rows: list[dict] = []
    notes: list[str] = []
    for sizing in job.sizings:
        types = gpu_types.get(sizing.gpu, {})
        if not types:
            if sizing.chosen:
                notes.append(
                    f"No AWS instance type in the price snapshot carries the chosen system's GPU ({sizing.gpu}, "
                    f"{sizing.system}); the same work is priced on the other feasible systems' GPUs instead."
                )
            continue
        hours = sizing.days * 24 / scales.mfu
        for region in regions:
            for instance_type in sorted(types):
                prices = by_key.get((instance_type, region), [])
                if not prices:
                    continue
                gpi = types[instance_type]
                instances = math.ceil(sizing.gpus / gpi)
                by_purchase: dict[str, list[CloudPrice]] = {}
                for p in prices:
                    by_purchase.setdefault(p.purchase, []).append(p)
                od = by_purchase.get("on_demand", [None])[0]
                od_rate = od.usd_per_hour if od else None
                for purchase in PURCHASE_ORDER:
                    quotes = by_purchase.get(purchase)
                    if not quotes:
                        continue
                    row: dict[str, Any] = {
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
                        "job_hours": _r(hours, 3),
                        "job_days": _r(hours / 24, 3),
                        "job_usd": None,
                        "price_observed_at": max(q.observed_at for q in quotes),
                        "sized_on": {
                            "system": sizing.system,
                            "gpu": sizing.gpu,
                            "gpus": sizing.gpus,
                            "days": _r(sizing.days / scales.mfu, 3),
                            "chosen": sizing.chosen,
                        },
                    }
                    if purchase == "spot":
                        rows.append(
                            _spot_row(
                                row,
                                quotes,
                                od_rate,
                                bands.get((region, instance_type)),
                                sizing,
                                instances,
                                hours,
                                job.workload,
                                params,
                                scales,
                            )
                        )
                        continue
                    _priced_row(row, purchase, quotes[0].usd_per_hour, gpi, instances, hours)
                    rows.append(row)
    return rows, notes


# ------------------------------------------------------------------------------------------- comparisons


def _break_even(o: _Onprem, job: _Job, row: Mapping[str, Any], years: int) -> dict[str, Any]:
    """Utilisation at which owning costs the same per year as renting the same GPU capacity."""
    assert o.capex is not None and o.colo_y is not None and o.maint_y is not None and o.staff_y is not None
    fixed_onprem = o.capex / years + o.colo_y + o.maint_y + o.staff_y
    per_util_onprem = D(job.facility_kw) * HOURS_PER_YEAR * o.electricity
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
        out["break_even_utilization"] = _r(float(u), 4)
    return out


def _options(o: _Onprem, rows: Sequence[Mapping[str, Any]], job: _Job) -> list[dict[str, Any]]:
    opts = []
    if o.job_usd is not None:
        opts.append(
            {
                "option": "onprem_bought",
                "label": "On-prem, bought for this job",
                "job_usd": o.job_usd,
                "finish_days": o.job_hours / 24,
                "finish_days_p90": o.job_hours / 24,
            }
        )
    if o.job_usd_shared is not None:
        opts.append(
            {
                "option": "onprem_shared",
                "label": "On-prem, shared cluster (job GPU-hours x $/GPU-hour)",
                "job_usd": o.job_usd_shared,
                "finish_days": o.job_hours / 24,
                "finish_days_p90": o.job_hours / 24,
            }
        )
    for r in rows:
        if not r["available"] or r.get("_job_usd") is None:
            continue
        opts.append(
            {
                "option": r["purchase"],
                "label": f"AWS {r['purchase']} {r['instances']} x {r['instance_type']} in {r['region']}",
                "region": r["region"],
                "instance_type": r["instance_type"],
                "job_usd": r["_job_usd"],
                "finish_days": r["job_days"],
                "finish_days_p90": r.get("_finish_days_p90", r["job_days"]),
                "capacity_constrained": r["capacity_constrained"],
            }
        )
    return opts


def _opt_out(opt: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if opt is None:
        return None
    out = {k: v for k, v in opt.items() if k not in ("job_usd", "finish_days_p90")}
    out["job_usd"] = usd(opt["job_usd"])
    out["finish_days"] = _r(float(opt["finish_days"]), 3)
    out["finish_days_p90"] = _r(float(opt["finish_days_p90"]), 3)
    return out


@dataclass
class _Eval:
    job: _Job
    params: _Params
    onprem: _Onprem
    rows: list[dict[str, Any]]
    cloud_notes: list[str]
    options: list[dict[str, Any]]


def _evaluate(plan: Mapping[str, Any], inputs: CostInputs, scales: Scales) -> _Eval | None:
    job = _job(plan)
    if job is None:
        return None
    params = _Params(inputs, plan)
    onprem = _onprem(plan, job, inputs, params, scales)
    rows, notes = _cloud_rows(job, inputs, params, scales)
    return _Eval(job, params, onprem, rows, notes, _options(onprem, rows, job))


def _metrics(ev: _Eval) -> dict[str, Decimal | None]:
    cloud = [o["job_usd"] for o in ev.options if not o["option"].startswith("onprem")]
    best_cloud = min(cloud) if cloud else None
    onprem = ev.onprem.job_usd_shared
    return {
        "onprem_job_usd_shared": onprem,
        "cheapest_cloud_job_usd": best_cloud,
        "cloud_minus_onprem_usd": None if onprem is None or best_cloud is None else best_cloud - onprem,
    }


SENSITIVITY_INPUTS = (
    ("utilization", "On-prem utilisation"),
    ("system_price", "GPU system / hardware price"),
    ("power_price", "Electricity price"),
    ("spot_price", "Spot price"),
    ("mfu", "MFU (job time scales with 1 / MFU)"),
)


def _sensitivity(plan: Mapping[str, Any], inputs: CostInputs, base: _Eval) -> dict[str, Any]:
    base_m = _metrics(base)
    rows = []
    for name, label in SENSITIVITY_INPUTS:
        lo_ev = _evaluate(plan, inputs, replace(Scales(), **{name: 1 - SENSITIVITY_STEP}))
        hi_ev = _evaluate(plan, inputs, replace(Scales(), **{name: 1 + SENSITIVITY_STEP}))
        assert lo_ev is not None and hi_ev is not None
        lo, hi = _metrics(lo_ev), _metrics(hi_ev)
        swing = None
        if lo["cloud_minus_onprem_usd"] is not None and hi["cloud_minus_onprem_usd"] is not None:
            swing = abs(hi["cloud_minus_onprem_usd"] - lo["cloud_minus_onprem_usd"])
        rows.append(
            {
                "input": name,
                "label": label,
                "low_factor": 1 - SENSITIVITY_STEP,
                "high_factor": 1 + SENSITIVITY_STEP,
                "low": {k: usd(v) for k, v in lo.items()},
                "high": {k: usd(v) for k, v in hi.items()},
                "swing_usd": usd(swing),
                "_swing": swing if swing is not None else Decimal(-1),
            }
        )
    rows.sort(key=lambda r: (-r["_swing"], r["input"]))
    for r in rows:
        del r["_swing"]
    return {
        "metric": "cloud_minus_onprem_usd = cheapest available cloud job cost - on-prem shared job cost "
        "(positive: building is cheaper)",
        "step": SENSITIVITY_STEP,
        "base": {k: usd(v) for k, v in base_m.items()},
        "rows": rows,
        "most_sensitive_to": rows[0]["input"] if rows and rows[0]["swing_usd"] is not None else None,
    }


def _series(ev: _Eval) -> dict[str, Any] | None:
    o = ev.onprem
    if o.capex is None or o.opex_y is None:
        return None
    years = ev.params.years
    months = list(range(0, years * 12 + 1))
    u = o.utilization
    series = [
        {
            "label": "On-prem (capex + opex)",
            "option": "onprem",
            "usd": [usd(o.capex + o.opex_y * m / 12) for m in months],
        }
    ]
    best: dict[str, dict[str, Any]] = {}
    for r in ev.rows:
        if not r["available"] or r.get("_effective_usd_per_gpu_hour") is None:
            continue
        k = r["purchase"]
        if k not in best or r["_effective_usd_per_gpu_hour"] < best[k]["_effective_usd_per_gpu_hour"]:
            best[k] = r
    for purchase in PURCHASE_ORDER:
        r = best.get(purchase)
        if r is None:
            continue
        per_year = D(ev.job.cluster_gpus) * HOURS_PER_YEAR * r["_effective_usd_per_gpu_hour"]
        per_year = per_year if r.get("_fixed") else per_year * u
        series.append(
            {
                "label": f"AWS {purchase} ({r['instance_type']}, {r['region']})",
                "option": purchase,
                "usd": [usd(per_year * m / 12) for m in months],
            }
        )
    return {
        "months": months,
        "utilization": str(u),
        "gpus": ev.job.cluster_gpus,
        "basis": "cumulative cost of keeping the cluster's GPU capacity for the horizon at the utilisation "
        "shown: on-prem pays capex up front and opex monthly; pay-per-use cloud options pay for the used hours; "
        "reserved terms pay for every hour",
        "series": series,
    }


def _carbon(ev: _Eval, inputs: CostInputs) -> dict[str, Any]:
    site = inputs.carbon.get("site")
    o = ev.onprem
    out: dict[str, Any] = {
        "unit": "t CO2e",
        "method": "location-based: energy x grid intensity",
        "onprem": None,
        "cloud": [],
    }
    job_kwh = D(ev.job.facility_kw) * D(o.job_hours)
    if site is not None:
        out["onprem"] = {
            "grid_gco2e_per_kwh": str(site.value),
            "source": site.source,
            "job_energy_mwh": _r(float(job_kwh / 1000), 3),
            "job_tco2e": _r(float(job_kwh * site.value / 1_000_000), 3),
            "energy_mwh_per_year": _r(float(D(ev.job.facility_kw) * HOURS_PER_YEAR * o.utilization / 1000), 3),
            "tco2e_per_year": _r(
                float(D(ev.job.facility_kw) * HOURS_PER_YEAR * o.utilization * site.value / 1_000_000), 3
            ),
            "note": "facility kW (IT at rated maximum x PUE) for the job's hours: an upper bound.",
        }
    cloud_pue = ev.params["cloud_pue"]
    seen = set()
    for r in ev.rows:
        key = (r["region"], r["sized_on"]["system"])
        if key in seen:
            continue
        seen.add(key)
        intensity = inputs.carbon.get(r["region"])
        sizing = next(s for s in ev.job.sizings if s.system == r["sized_on"]["system"])
        kwh = D(sizing.it_kw) * cloud_pue * D(r["job_hours"]) if r["purchase"] != "spot" else None
        if kwh is None:
            kwh = D(sizing.it_kw) * cloud_pue * D(sizing.days * 24)
        out["cloud"].append(
            {
                "region": r["region"],
                "sized_on": sizing.system,
                "gpu": sizing.gpu,
                "cloud_pue": str(cloud_pue),
                "grid_gco2e_per_kwh": None if intensity is None else str(intensity.value),
                "source": None if intensity is None else intensity.source,
                "job_energy_mwh": _r(float(kwh / 1000), 3),
                "job_tco2e": None if intensity is None else _r(float(kwh * intensity.value / 1_000_000), 3),
                "note": "IT power of the equivalent on-prem system at rated maximum x AWS average PUE; location-based "
                "(AWS's market-based figures, which count its renewable purchases, are lower)."
                if intensity
                else "no grid intensity for this region in fixtures/prices/carbon.json",
            }
        )
    return out


# ---------------------------------------------------------------------------------------------------- entry


def request_overrides(plan: Mapping[str, Any]) -> tuple[dict[str, Decimal], dict[str, Decimal]]:
    """This plan's own prices from its (validated) request: (part overrides, parameter overrides).

    `pricing.component_prices` -> part overrides by part number or catalog id; `pricing.parameters` and
    `pricing.utilization` -> parameter overrides. Floats become Decimal through their shortest repr.
    """
    pricing = (plan.get("request") or {}).get("pricing") or {}
    parts = {str(k): D(v) for k, v in (pricing.get("component_prices") or {}).items()}
    params = {str(k): D(v) for k, v in (pricing.get("parameters") or {}).items()}
    if pricing.get("utilization") is not None:
        params["utilization"] = D(pricing["utilization"])
    return parts, params


def selection_price_data(request: Mapping[str, Any], inputs: CostInputs, system_ids: Iterable[str]) -> dict[str, Any]:
    """Plain data for the sizing engine's cost-aware system choice (`engine.search.selection.SelectionPrices`).

    `request` is the normalised request dict (`PlanRequest.to_dict()`, the plan's `request` echo); its
    `pricing.component_prices`, `pricing.parameters`, `pricing.utilization` and `site.electricity_usd_per_kwh`
    apply exactly as in `plan_costs`. Systems without a reference price or an override are left out of
    `system_usd` (the engine then falls back to its energy rule).
    """
    plan = {"request": request}
    part_overrides, parameter_overrides = request_overrides(plan)
    inputs = replace(
        inputs,
        part_overrides={**inputs.part_overrides, **part_overrides},
        parameter_overrides={**inputs.parameter_overrides, **parameter_overrides},
    )
    index = _price_index(inputs)
    params = _Params(inputs, plan)
    system_usd: dict[str, float] = {}
    overridden: list[str] = []
    for system_id in system_ids:
        price = index.get(system_id)
        if price is not None:
            system_usd[system_id] = float(price.unit_price_usd)
            if system_id in index.overrides:
                overridden.append(system_id)
    report = params.report()
    system_source = "system prices by catalog id from the on-prem references (fixtures/prices/components.json)"
    if overridden:
        system_source += f"; this plan's pricing.component_prices override {', '.join(overridden)}"
    return {
        "system_usd": system_usd,
        "electricity_usd_per_kwh": float(params["electricity_usd_per_kwh"]),
        "utilization": float(min(Decimal(1), params["utilization"])),
        "years": params.years,
        "sources": {
            "system_usd": system_source,
            "electricity_usd_per_kwh": str(report["electricity_usd_per_kwh"]["source"]),
            "utilization": str(report["utilization"]["source"]),
            "years": "request pricing.years",
            "pue": "the plan's facility PUE (request site.pue, else assumptions pue_<cooling>)",
        },
    }


def plan_costs(plan: Mapping[str, Any], inputs: CostInputs) -> CostResult:
    """Price one plan. An infeasible plan gets `costs` with only a note (nothing to price)."""
    ev = _evaluate(plan, inputs, Scales())
    if ev is None:
        return CostResult(
            costs={
                "currency": "USD",
                "available": False,
                "note": "The plan is infeasible or has no cluster: nothing to price.",
            },
            bom=None,
            explain={},
        )
    o, job, params = ev.onprem, ev.job, ev.params
    years = params.years
    onprem = {
        "capex_usd": usd(o.capex),
        "hardware_usd": usd(o.hardware),
        "install_usd": usd(o.install),
        "opex_usd_per_year": usd(o.opex_y),
        "opex_breakdown_usd_per_year": None
        if o.opex_y is None
        else {
            "energy": usd(o.energy_y),
            "colocation": usd(o.colo_y),
            "maintenance": usd(o.maint_y),
            "staff": usd(o.staff_y),
        },
        "tco_usd": usd(o.tco),
        "years": years,
        "depreciation_usd_per_year": usd(None if o.capex is None else o.capex / years),
        "utilization": str(o.utilization),
        "gpus": job.cluster_gpus,
        "usd_per_gpu_hour": rate(o.usd_per_gpu_hour),
        "job_usd": usd(o.job_usd),
        "job_usd_shared": usd(o.job_usd_shared),
        "job_hours": _r(o.job_hours, 3),
        "job_gpus": job.job_gpus,
        "lines": o.lines,
    }
    options = ev.options
    cheapest = min(options, key=lambda x: x["job_usd"]) if options else None
    within = None
    if job.deadline_days is not None:
        ok = [x for x in options if x["finish_days_p90"] <= job.deadline_days + 1e-9]
        within = min(ok, key=lambda x: x["job_usd"]) if ok else None
    cloud_opts = [x for x in options if not x["option"].startswith("onprem")]
    steady = [x for x in options if x["option"] != "spot"]
    break_even = []
    if o.capex is not None:
        break_even = [
            _break_even(o, job, r, years)
            for r in ev.rows
            if r["available"] and r.get("_effective_usd_per_gpu_hour") is not None
        ]
    comparison = {
        "options": [_opt_out(x) for x in sorted(options, key=lambda x: x["job_usd"])],
        "cheapest": _opt_out(cheapest),
        "cheapest_cloud": _opt_out(min(cloud_opts, key=lambda x: x["job_usd"]) if cloud_opts else None),
        "cheapest_without_spot": _opt_out(min(steady, key=lambda x: x["job_usd"]) if steady else None),
        "deadline_days": job.deadline_days,
        "cheapest_within_deadline": _opt_out(within),
        "deadline_rule": "finish by the deadline even in the p90 case (spot); on-prem excludes procurement and "
        "build-out lead time",
        "break_even": break_even,
        "cumulative": _series(ev),
    }
    cloud_rows = [{k: v for k, v in r.items() if not k.startswith("_")} for r in ev.rows]
    costs = {
        "currency": "USD",
        "available": True,
        "money_format": "Amounts are decimal strings with 2 decimals; hourly rates keep the snapshot's 6 decimals. "
        "JSON has no decimal type; parse them as decimals, not floats.",
        "coverage": o.coverage,
        "parameters": params.report(),
        "onprem": onprem,
        "cloud": cloud_rows,
        "cloud_notes": ev.cloud_notes + ([inputs.snapshot_note] if inputs.snapshot_note else []),
        "comparison": comparison,
        "sensitivity": _sensitivity(plan, inputs, ev),
        "carbon": _carbon(ev, inputs),
    }
    return CostResult(costs=costs, bom=o.bom, explain=_explain(ev, costs))


# -------------------------------------------------------------------------------------------------- explain


def _explain(ev: _Eval, costs: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    o, job, p = ev.onprem, ev.job, ev.params
    on = costs["onprem"]
    src_params = "fixtures/prices/parameters.json (see costs.parameters for each value's source)"
    hw_source = (
        "BOM lines x fixtures/prices/components.json"
        if o.coverage["basis"] == "bom"
        else "cluster.systems x system price (fixtures/prices/components.json); no BOM in this plan"
    )
    ex: dict[str, dict[str, Any]] = {
        "costs.onprem.capex_usd": {
            "formula": "hardware + hardware x install_integration_percent / 100",
            "inputs": {
                "hardware_usd": on["hardware_usd"],
                "install_integration_percent": str(p["install_integration_percent"]),
                "coverage": o.coverage["basis"],
            },
            "source": hw_source,
        },
        "costs.onprem.opex_usd_per_year": {
            "formula": "facility_kw x 8760 x utilization x electricity_usd_per_kwh + it_kw x colo_usd_per_kw_month x "
            "12 + capex x maintenance_percent_per_year / 100 + staff_usd_per_year",
            "inputs": {
                "facility_kw": job.facility_kw,
                "it_kw": job.it_kw,
                "utilization": str(o.utilization),
                "electricity_usd_per_kwh": str(o.electricity),
                "colo_usd_per_kw_month": str(p["colo_usd_per_kw_month"]),
                "maintenance_percent_per_year": str(p["maintenance_percent_per_year"]),
                "staff_usd_per_year": str(p["staff_usd_per_year"]),
            },
            "source": src_params + "; request site block overrides electricity and colocation",
        },
        "costs.onprem.tco_usd": {
            "formula": "capex + years x opex_per_year",
            "inputs": {"capex_usd": on["capex_usd"], "opex_usd_per_year": on["opex_usd_per_year"], "years": p.years},
            "source": "request pricing.years",
        },
        "costs.onprem.usd_per_gpu_hour": {
            "formula": "tco / (gpus x 8760 x utilization x years)",
            "inputs": {
                "tco_usd": on["tco_usd"],
                "gpus": job.cluster_gpus,
                "utilization": str(o.utilization),
                "years": p.years,
            },
            "source": src_params,
        },
        "costs.onprem.job_usd": {
            "formula": "capex + facility_kw x job_hours x electricity_usd_per_kwh + (colocation + maintenance + "
            "staff per year) x job_hours / 8760  (bought for this job; no resale value counted)",
            "inputs": {"capex_usd": on["capex_usd"], "facility_kw": job.facility_kw, "job_hours": on["job_hours"]},
            "source": "plan training.days (or one year of serving)",
        },
        "costs.onprem.job_usd_shared": {
            "formula": "job_gpus x job_hours x usd_per_gpu_hour",
            "inputs": {
                "job_gpus": job.job_gpus,
                "job_hours": on["job_hours"],
                "usd_per_gpu_hour": on["usd_per_gpu_hour"],
            },
            "source": "a shared cluster charges the job for the GPU-hours it uses",
        },
    }
    for r in costs["cloud"]:
        key = f"costs.cloud.{r['region']}.{r['instance_type']}.{r['purchase']}.job_usd"
        inputs: dict[str, Any] = {
            "instances": r["instances"],
            "usd_per_hour": r["usd_per_hour"],
            "job_hours": r["job_hours"],
            "gpus_needed": r["sized_on"]["gpus"],
            "gpus_per_instance": r["gpus_per_instance"],
        }
        formula = "instances x usd_per_hour x job_hours; instances = ceil(gpus_needed / gpus_per_instance)"
        if r["purchase"] in RESERVED_YEARS:
            formula = "instances x usd_per_hour (effective, upfront spread over the term) x commitment_hours"
            inputs["commitment_hours"] = r.get("commitment_hours")
        elif r["purchase"] == "capacity_block":
            formula = "instances x usd_per_hour x block_days x 24 (shortest bookable duration covering the job)"
            inputs["block_days"] = r.get("block_days")
        elif r["purchase"] == "spot":
            formula = (
                "instances x median-zone spot usd_per_hour x job_hours x (1 + overhead); overhead = C/tau + "
                "(tau + C)/(2M) + R/M, M = 1/(instances x lambda), lambda = -ln(1 - f)/730, tau = Daly"
            )
            inputs["spot"] = {
                k: r["spot"].get(k)
                for k in (
                    "band",
                    "checkpoint_write_min",
                    "restart_min",
                    "job_mtbf_hours",
                    "checkpoint_interval_hours",
                    "overhead_fraction",
                )
            }
        ex[key] = {
            "formula": formula,
            "inputs": inputs,
            "source": f"price snapshot observed {r['price_observed_at']}; reference/cloud-pricing.md",
        }
    comp = costs["comparison"]
    ex["costs.comparison.cheapest"] = {
        "formula": "min job_usd over on-prem (bought, shared) and every available cloud row",
        "inputs": {
            "cheapest": comp["cheapest"]["label"] if comp["cheapest"] else None,
            "options": len(comp["options"]),
        },
        "source": "costs.onprem, costs.cloud",
    }
    ex["costs.comparison.break_even"] = {
        "formula": "u where capex/years + colocation + maintenance + staff + facility_kw x 8760 x u x $/kWh = "
        "gpus x 8760 x cloud $/GPU-hour x u (pay per use) or = gpus x 8760 x cloud $/GPU-hour (reserved)",
        "inputs": {"gpus": job.cluster_gpus, "years": p.years},
        "source": "costs.onprem, costs.cloud (spot uses its expected $/GPU-hour including interruption overhead)",
    }
    ex["costs.sensitivity"] = {
        "formula": "each input moved by -20 % and +20 % alone; rows sorted by the swing of cloud - on-prem",
        "inputs": {"step": SENSITIVITY_STEP},
        "source": "recomputed with the same prices",
    }
    carbon = costs["carbon"]
    if carbon.get("onprem"):
        ex["costs.carbon.onprem.job_tco2e"] = {
            "formula": "facility_kw x job_hours x grid g/kWh / 1e6",
            "inputs": {
                "facility_kw": job.facility_kw,
                "job_hours": on["job_hours"],
                "grid_gco2e_per_kwh": carbon["onprem"]["grid_gco2e_per_kwh"],
            },
            "source": carbon["onprem"]["source"],
        }
    for c in carbon["cloud"]:
        ex[f"costs.carbon.cloud.{c['region']}.{c['sized_on']}.job_tco2e"] = {
            "formula": "it_kw x cloud_pue x job_hours x grid g/kWh / 1e6",
            "inputs": {"cloud_pue": c["cloud_pue"], "grid_gco2e_per_kwh": c["grid_gco2e_per_kwh"]},
            "source": c["source"],
        }
    return ex


def cloud_prices_from_records(records: Iterable[Mapping[str, Any]]) -> list[CloudPrice]:
    """Plain dicts (e.g. CloudOffer values) -> CloudPrice, for callers that hold rows rather than objects."""
    return [
        CloudPrice(
            instance_type=r["instance_type"],
            region=r["region"],
            purchase=r["purchase"],
            usd_per_hour=D(r["usd_per_hour"]),
            gpus=int(r["gpus"]),
            gpu_model=r.get("gpu_model") or "",
            availability_zone_id=r.get("availability_zone_id") or "",
            capacity_constrained=bool(r.get("capacity_constrained")),
            observed_at=str(r.get("observed_at") or ""),
        )
        for r in records
    ]
