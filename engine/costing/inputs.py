"""What costing reads: price inputs (dataclasses the pricing app fills) and the typed job taken from a plan.

`cost_job_from_result` is the only place in costing that reads the plan; every other module works on the `CostJob`
it returns. It reads the typed `PlanResult`: training days come from the plan (`training.days`, the engine's one
time-to-train, and each candidate's `days`); costing never recomputes them. A request's own prices are read from
the typed request by `request_terms`, which both the job and `request_overrides` use, so the request's `pricing`
and `site` blocks are parsed once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from engine.catalog.hardware import load_catalog
from engine.request.rollout import RolloutSpec
from engine.request.spec import PlanRequest
from engine.request.validation import validate_request
from engine.result.physical import BomLine
from engine.result.plan import PlanResult
from engine.result.sizing import Candidate

from .money import D

__all__ = [
    "CloudPrice",
    "CostInputs",
    "CostJob",
    "CostParameter",
    "PartPrice",
    "RequestTerms",
    "Scales",
    "Sizing",
    "SpotBand",
    "cost_job_from_result",
    "plan_request",
    "request_overrides",
    "request_terms",
]

SERVING_DAYS = 365.0  # inference plans are priced for one year of serving
DEFAULT_YEARS = 3


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
    observed_at: str = ""  # the source's own date (ISO), not when it was loaded
    provider: str = "aws"  # aws | azure | gcp | lambda | coreweave | nebius | runpod ...
    source: str = ""  # the primary source's title and date, for the row's citation
    confidence: str = "list_price"  # list_price | quote | public_estimate | assumption


@dataclass(frozen=True)
class PartPrice:
    part_number: str
    catalog_id: str
    unit_price_usd: Decimal
    source: str
    as_of: str
    confidence: str  # list_price | quote | public_estimate | assumption | user_override
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
    quotes: Sequence[PartPrice] = ()  # the plan owner's uploaded quotes (confidence "quote"): over the references
    snapshot_note: str = ""
    plan_date: str = ""  # ISO date the plan is made (start dates count from it); "" = dates not shown
    priced_on: str = ""  # ISO date the plan is priced on (ages of prices count from it); "" = ages not computed


@dataclass(frozen=True)
class Scales:
    """Multipliers for the sensitivity table (1 = the plan as given)."""

    utilization: float = 1.0
    system_price: float = 1.0
    part_price: tuple[tuple[str, float], ...] = ()  # (price basis, multiplier): each part moved by its own range
    power_price: float = 1.0
    spot_price: float = 1.0
    mfu: float = 1.0  # job time scales with 1 / mfu


@dataclass(frozen=True)
class RequestTerms:
    """The request's costing terms: horizon, regions, site prices and this plan's own price overrides."""

    years: int = DEFAULT_YEARS
    regions: tuple[str, ...] = ()
    site_prices: Mapping[str, Decimal] = field(default_factory=dict)  # electricity_usd_per_kwh, colo_usd_...
    part_overrides: Mapping[str, Decimal] = field(default_factory=dict)
    parameter_overrides: Mapping[str, Decimal] = field(default_factory=dict)
    facility_owned: bool = False  # site.ownership = owned: the site is bought (capex), no colocation is paid


@dataclass(frozen=True)
class Sizing:
    """The work sized on one system: what a cloud option must replicate."""

    system: str
    gpu: str
    gpus: int
    days: float  # the plan's training days, or 365 for a year of serving
    systems_kw: float  # the GPU systems' IT power (what a cloud option replicates; no network or storage)
    checkpoint_write_h: float | None
    chosen: bool
    instance_type: str | None = None  # set when sized on a rented system: the instance type it prices
    days_p90: float | None = None  # the whole run's p90 days (the chosen system's training range), when known


@dataclass(frozen=True)
class CostJob:
    """Everything costing needs from a plan. `sizings[0]` is the chosen system; the rest are one per other GPU."""

    workload: str  # training | inference | capacity (priced as a year of the whole cluster, like serving)
    sizings: tuple[Sizing, ...]
    deadline_days: float | None
    cluster_system: str
    cluster_systems: int
    cluster_gpus: int
    job_gpus: int
    it_kw: float
    facility_kw: float
    bom: tuple[BomLine, ...] | None
    terms: RequestTerms
    assumption_overrides: Mapping[str, float] = field(default_factory=dict)  # the request's `assumptions`
    # instance types whose own system cannot do the job (e.g. misses the deadline at any size): not priced
    cannot_do: Mapping[str, str] = field(default_factory=dict)
    rollout: RolloutSpec | None = None  # the request's phased delivery (rollout.py)
    su_systems: int = 0  # systems per reference scalable unit (a roll-out counted in scalable units)
    spare_gpus: int = 0  # GPUs of the hot spares (elastic recovery): installed and paid for, but they run no work
    # Which whole-run time must meet the deadline (the request's training.deadline_percentile): p50, or p90, when
    # every option is held to its p90 as the build was sized to its own
    deadline_percentile: str = "p50"

    @property
    def chosen(self) -> Sizing:
        return self.sizings[0]

    @property
    def deadline_spread(self) -> float:
        """The factor from an option's p50 days to the days the deadline is judged at: 1 at p50; at p90, the plan's
        own whole-run p90 / p50. Every option runs the same software, so each carries the same spread (a rented
        sizing's days are its p50 alone)."""
        chosen = self.sizings[0] if self.sizings else None
        if self.deadline_percentile != "p90" or chosen is None or chosen.days_p90 is None or chosen.days <= 0:
            return 1.0
        return chosen.days_p90 / chosen.days

    @property
    def working_gpus(self) -> int:
        """The GPUs that deliver GPU-hours: all installed but the hot spares (what a cloud option replicates)."""
        return self.cluster_gpus - self.spare_gpus


def request_terms(request: PlanRequest) -> RequestTerms:
    """The request's `pricing` and `site` blocks as typed terms (floats to Decimal by shortest repr).

    `pricing.component_prices` -> part overrides by part number or catalog id; `pricing.parameters` and
    `pricing.utilization` -> parameter overrides; `site.electricity_usd_per_kwh` and `site.colo_usd_per_kw_month`
    -> site prices.
    """
    pricing, site = request.pricing, request.site
    params = {str(k): D(v) for k, v in pricing.parameters.items()}
    if pricing.utilization is not None:
        params["utilization"] = D(pricing.utilization)
    site_prices = {
        "electricity_usd_per_kwh": site.electricity_usd_per_kwh,
        "colo_usd_per_kw_month": site.colo_usd_per_kw_month,
    }
    return RequestTerms(
        years=int(pricing.years or DEFAULT_YEARS),
        regions=tuple(pricing.regions),
        site_prices={name: D(value) for name, value in site_prices.items() if value is not None},
        part_overrides={str(k): D(v) for k, v in pricing.component_prices.items()},
        parameter_overrides=params,
        facility_owned=site.ownership == "owned",
    )


def request_overrides(request: PlanRequest) -> tuple[dict[str, Decimal], dict[str, Decimal]]:
    """This plan's own prices from its validated request: (part overrides, parameter overrides)."""
    terms = request_terms(request)
    return dict(terms.part_overrides), dict(terms.parameter_overrides)


def plan_request(result: PlanResult) -> PlanRequest:
    """The typed request of a plan, from its normalised echo (`PlanRequest.to_dict()`).

    Validated again by the one request schema (tens of microseconds): the echo is the schema's own output, so this
    only rebuilds the typed sections. The catalog is the one the engine ships (cached), which resolves the echo's
    preset name exactly as when the plan was made.
    """
    return validate_request(result.request, load_catalog())


def cost_job_from_result(result: PlanResult) -> CostJob | None:
    """The typed job of a feasible plan with a cluster and power; None when there is nothing to price.

    The on-prem figures use the plan's one facility power (`power.it_kw`, every IT part, and `facility_kw`); a
    cloud option replicates the GPU systems only, so each sizing carries its systems' kW (`power.systems_kw` for
    the chosen system, `candidates[].systems_kw` for the others).
    """
    cluster, power = result.cluster, result.power
    if not result.feasible or cluster is None or power is None:
        return None
    training, inference = result.training, result.inference
    request = plan_request(result)
    chosen_gpu = next((c.gpu for c in result.candidates if c.chosen), "")
    if training is not None:
        write_s = None if training.goodput is None else training.goodput.checkpoint_write_s
        days = float(training.days)
        write_h = None if write_s is None else float(write_s) / 3600
        gpus = int(training.gpus)
        deadline = None if request.training is None else request.training.deadline_days
    elif inference is not None:
        days, write_h, gpus, deadline = SERVING_DAYS, None, int(inference.gpus), None
    elif result.workload == "capacity":  # the largest cluster inside an envelope: a year of the whole cluster
        days, write_h, gpus, deadline = SERVING_DAYS, None, int(cluster.gpus), None
    else:
        return None
    rented = load_catalog().systems.get(cluster.system)
    spread = training.days_range if training is not None else None
    chosen = Sizing(
        cluster.system,
        chosen_gpu,
        gpus,
        days,
        float(power.systems_kw),
        write_h,
        True,
        rented.cloud_instance_type if rented is not None else None,
        days_p90=float(spread.p90) if spread is not None else None,
    )
    return CostJob(
        workload="training" if training is not None else ("inference" if inference is not None else result.workload),
        sizings=(
            chosen,
            *_other_sizings(result.candidates, chosen, training=training is not None),
            *_cloud_sizings(result, chosen, training=training is not None),
        ),
        deadline_days=None if deadline is None else float(deadline),
        cluster_system=cluster.system,
        cluster_systems=int(cluster.systems),
        cluster_gpus=int(cluster.gpus),
        job_gpus=chosen.gpus,
        it_kw=float(power.it_kw),
        facility_kw=float(power.facility_kw),
        bom=tuple(result.bom) if result.bom else None,
        terms=request_terms(request),
        assumption_overrides=dict(request.assumptions),
        cannot_do=_cannot_do(result),
        rollout=request.rollout,
        su_systems=int(cluster.su_systems),
        spare_gpus=cluster.hot_spares.gpus if cluster.hot_spares is not None else 0,
        deadline_percentile=request.training.deadline_percentile if request.training is not None else "p50",
    )


def _other_sizings(candidates: Sequence[Candidate], chosen: Sizing, *, training: bool) -> list[Sizing]:
    """One sizing per other GPU model: the feasible candidate needing the fewest GPU-hours (a cloud user's pick).

    Each carries its GPU systems' kW (`systems_kw`), like the chosen sizing, so cloud figures compare like with
    like.
    """
    others = [c for c in candidates if c.feasible and not c.chosen and c.gpus]
    others.sort(key=lambda c: (float(c.gpus or 0) * float(c.days or SERVING_DAYS), c.system))
    seen, out = {chosen.gpu}, []
    for c in others:
        if c.gpu in seen:
            continue
        seen.add(c.gpu)
        gpus = int(c.gpus or 0)
        write_h = None
        if chosen.checkpoint_write_h is not None and training:
            # Same checkpoint size and per-GPU write bandwidth: write time scales with 1 / GPUs.
            write_h = chosen.checkpoint_write_h * chosen.gpus / gpus
        days = float(c.days or SERVING_DAYS) if training else SERVING_DAYS
        out.append(Sizing(c.system, c.gpu, gpus, days, float(c.systems_kw or c.it_kw or 0.0), write_h, False))
    return out


def _cloud_sizings(result: PlanResult, chosen: Sizing, *, training: bool) -> list[Sizing]:
    """One sizing per rented system the chain sized (`cloud_sizings`): the same job on that instance type's own
    hardware, which is what its cloud rows price. The checkpoint write time scales with 1 / GPUs, as for the other
    candidates."""
    catalog = load_catalog()
    out = []
    for c in result.cloud_sizings or ():
        system = catalog.systems.get(c.system)
        if not c.feasible or not c.gpus or system is None or system.cloud_instance_type is None:
            continue
        gpus = int(c.gpus)
        write_h = None
        if chosen.checkpoint_write_h is not None and training:
            write_h = chosen.checkpoint_write_h * chosen.gpus / gpus
        days = float(c.days or SERVING_DAYS) if training else SERVING_DAYS
        kw = float(c.systems_kw or 0.0)
        out.append(Sizing(c.system, c.gpu, gpus, days, kw, write_h, False, system.cloud_instance_type))
    return out


def _cannot_do(result: PlanResult) -> dict[str, str]:
    """Instance type -> why its own system cannot do this job (the chain's sizing said infeasible)."""
    catalog = load_catalog()
    out = {}
    for c in result.cloud_sizings or ():
        system = catalog.systems.get(c.system)
        if not c.feasible and system is not None and system.cloud_instance_type:
            out[system.cloud_instance_type] = c.reason or "no size meets the target"
    return out
