"""The one door from Django into the engine: no other module of planner/, pricing/ or config/ imports `engine`.

Three jobs, in the order a plan is made:

- re-export the few engine names the web side needs (request errors, stage names, the catalog, the typed result
  and its JSON codec), so views, forms, the API and the commands import them from here;
- turn the pricing app's plain records (`pricing.records.PriceBook`) into the engine's costing inputs: the pricing
  app says where prices come from, this module alone knows the engine's types;
- `plan_compute`, which the task, the `plan` command and the tests share: validate, run the chain with
  cost-aware system selection, price the result with the snapshot and the request's own prices, stamp the
  snapshot and serialise once.

`tests/planner/test_adapter_boundary.py` keeps the door the only one.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from datetime import UTC
from functools import cache
from typing import Any, TypeVar

from django.utils import timezone

from engine import STAGES, Catalog, PlanRequest, RequestInvalid, load_catalog, run_plan, validate_request
from engine.catalog.hardware import default_catalog_dir
from engine.costing import (
    CloudPrice,
    CostInputs,
    CostParameter,
    PartPrice,
    SpotBand,
    plan_costs,
    provider_name,
    request_overrides,
    selection_price_data,
)
from engine.costing.money import usd_text
from engine.costing.onprem import EXTRA_CATEGORIES as CAPEX_EXTRA_CATEGORIES
from engine.costing.providers import purchase_name
from engine.explain.wording import in_words
from engine.request.schema_lookup import choices_of, field_at
from engine.request.site import price_keys
from engine.request.validation import safe_text, unsafe_values
from engine.request.whatif import WhatIfRequest
from engine.result import (
    AssumptionEntry,
    BomLine,
    Costs,
    ExplainEntry,
    FabricNetwork,
    OnpremSection,
    PlanResult,
    RackEntry,
    TopologyLink,
    TopologyNode,
    from_json,
    to_json,
    with_costs,
)
from engine.result.codec import decode as decode_section
from engine.result.codec import encode as encode_section
from engine.result.envelope import EnvelopeSummary
from engine.result.projection import FieldTree, UnknownField, encode_fields, field_tree
from engine.search.selection import SelectionPrices
from pricing.models import PriceSnapshot
from pricing.records import CloudPriceRecord, PartPriceRecord, PriceBook, PriceReferences
from pricing.selectors import price_book_for_snapshot, price_references_current

__all__ = [
    "CAPEX_EXTRA_CATEGORIES",
    "COSTED_SECTIONS",
    "STAGES",
    "AssumptionEntry",
    "BomLine",
    "Catalog",
    "Costs",
    "EngineOutcome",
    "ExplainEntry",
    "FabricNetwork",
    "OnpremSection",
    "PlanRequest",
    "PlanResult",
    "PricedParts",
    "ProgressCallback",
    "RackEntry",
    "RequestInvalid",
    "TopologyLink",
    "TopologyNode",
    "WhatIfFields",
    "WhatIfRequest",
    "catalog_names",
    "choices_of",
    "cost_inputs",
    "cost_inputs_for_snapshot",
    "decode_costed",
    "decode_section",
    "default_catalog_dir",
    "encode_section",
    "field_at",
    "from_json",
    "in_words",
    "load_catalog",
    "plan_compute",
    "plan_price",
    "plan_whatif",
    "price_key_known",
    "provider_name",
    "purchase_name",
    "request_for_editing",
    "request_validate",
    "safe_text",
    "selection_prices_for_request",
    "to_json",
    "unsafe_values",
    "usd_text",
    "whatif_fields",
]

ProgressCallback = Callable[[str, int], None]
_Engine = TypeVar("_Engine")


# ----------------------------------------------------------------------------- pricing records -> costing inputs


def _as_engine(engine_type: type[_Engine], record: object) -> _Engine:
    """The engine dataclass with the record's values. The pricing records use the engine's field names, so a
    renamed field fails here at once (AttributeError) rather than pricing with a default."""
    return engine_type(**{f.name: getattr(record, f.name) for f in fields(engine_type)})  # type: ignore[arg-type]


def price_key_known(key: str) -> bool:
    """Whether a part key names something the plans price: a BOM part number or a catalog id."""
    return key in price_keys(load_catalog())


def cost_inputs(
    references: PriceReferences,
    *,
    cloud_prices: Iterable[CloudPriceRecord] = (),
    snapshot_note: str = "",
    quotes: Iterable[PartPriceRecord] = (),
) -> CostInputs:
    """Costing inputs from pricing records: the on-prem `references` and, optionally, one snapshot's cloud offers
    (`pricing.records.CloudPriceRecord`) with its note, and the plan owner's quote prices. Tests build their inputs
    from the fixture files with it."""
    return CostInputs(
        quotes=tuple(_as_engine(PartPrice, q) for q in quotes),
        cloud_prices=tuple(_as_engine(CloudPrice, p) for p in cloud_prices),
        parts=tuple(_as_engine(PartPrice, p) for p in references.parts),
        parameters={name: _as_engine(CostParameter, p) for name, p in references.parameters.items()},
        carbon={scope: _as_engine(CostParameter, p) for scope, p in references.carbon.items()},
        spot_bands=tuple(_as_engine(SpotBand, b) for b in references.spot_bands),
        snapshot_note=snapshot_note,
    )


def _book_inputs(book: PriceBook) -> CostInputs:
    return cost_inputs(book.references, cloud_prices=book.cloud_prices, snapshot_note=book.snapshot_note)


def cost_inputs_for_snapshot(*, snapshot: PriceSnapshot | None) -> CostInputs:
    """Everything `engine.costing.plan_costs` needs besides the plan, read from the database: `snapshot`'s cloud
    prices (none without one) and the current on-prem references (fixture files where a table is empty)."""
    return _book_inputs(price_book_for_snapshot(snapshot=snapshot))


# ------------------------------------------------------------------------------------------------------ pricing


@dataclass(frozen=True)
class PricedParts:
    """What costing adds to a plan: the typed `costs` section (Decimal money), the priced BOM lines (None when the
    plan has no BOM) and the `costs.*` explain entries."""

    costs: Costs
    bom: tuple[BomLine, ...] | None
    explain: Mapping[str, ExplainEntry]
    envelope: EnvelopeSummary | None = None  # the envelope with the priced capex (a capex limit only)


def plan_price(
    *,
    result: PlanResult,
    request: PlanRequest,
    snapshot: PriceSnapshot | None,
    plan_date: str | None = None,
    quotes: Iterable[PartPriceRecord] = (),
    with_sensitivity: bool = True,
    base_inputs: CostInputs | None = None,
    priced_on: str | None = None,
) -> PricedParts:
    """Price `result` (read only) with `snapshot`'s cloud prices and the current on-prem references.

    `plan_date` (ISO date) is the day start dates count from: today (UTC) unless given (tests inject it);
    `priced_on` the day the prices are dated (price ages count from it): today unless given.

    The request's own prices (`pricing.component_prices`, `pricing.parameters`, `pricing.utilization`) apply to
    this plan only, on top of the shared references; `engine.result.with_costs` puts the parts into a new result.
    `base_inputs` are `snapshot`'s costing inputs when the caller has them already (the what-if's short cache).
    """
    today = timezone.now().date().isoformat()
    inputs = replace(
        base_inputs if base_inputs is not None else cost_inputs_for_snapshot(snapshot=snapshot),
        plan_date=plan_date or today,
        priced_on=priced_on or today,
        quotes=tuple(_as_engine(PartPrice, q) for q in quotes),
    )
    part_overrides, parameter_overrides = request_overrides(request)
    if part_overrides or parameter_overrides:
        inputs = replace(
            inputs,
            part_overrides={**inputs.part_overrides, **part_overrides},
            parameter_overrides={**inputs.parameter_overrides, **parameter_overrides},
        )
    priced = plan_costs(result, inputs, with_sensitivity=with_sensitivity)
    return PricedParts(costs=priced.costs, bom=priced.bom, explain=priced.explain, envelope=priced.envelope)


def selection_prices_for_request(
    *, request: PlanRequest, system_ids: Iterable[str], quotes: Iterable[PartPriceRecord] = ()
) -> SelectionPrices:
    """System prices, electricity, utilisation and years for ranking candidate systems before the plan is priced,
    from the current on-prem references, the owner's quotes and this request's own overrides. On-prem references
    do not depend on the cloud price snapshot, so none is read here."""
    inputs = cost_inputs(price_references_current(), quotes=quotes)
    return SelectionPrices(**selection_price_data(request, inputs, system_ids))


# --------------------------------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class EngineOutcome:
    """`result` is the plan's JSON (what services store and the API serves); `engine_s` the wall time."""

    result: dict[str, Any]
    engine_s: float


def request_validate(data: object) -> PlanRequest:
    """Validate a raw request (raises RequestInvalid with every field error)."""
    return validate_request(data, load_catalog())


def plan_compute(
    *,
    request_data: object,
    price_snapshot: PriceSnapshot | None,
    progress: ProgressCallback | None = None,
    plan_date: str | None = None,
    quotes: Iterable[PartPriceRecord] = (),
) -> EngineOutcome:
    """Validate and run the whole chain, price it, and return the plan JSON stamped with the price snapshot used
    (the catalog version is the engine's own stamp). Start dates count from `plan_date` (ISO; default today)."""
    catalog = load_catalog()
    started = time.perf_counter()

    def engine_progress(stage: str, percent: int) -> None:
        # The engine's "done" is not the end here: pricing follows, so report it as that stage.
        if progress:
            progress("costing" if stage == "done" else stage, min(percent, 95))

    request = validate_request(request_data, catalog)
    # Prices for the auto choice among systems (cost-aware ranking); the engine stays pure and takes plain data.
    quotes = tuple(quotes)
    prices = selection_prices_for_request(request=request, system_ids=catalog.systems, quotes=quotes)
    # The envelope's capex limit is checked on each build the search makes, by the plan's own costing rules.
    capex_inputs = cost_inputs(price_references_current(), quotes=quotes) if request.envelope is not None else None
    plan = run_plan(request, catalog, engine_progress, prices=prices, cost_inputs=capex_inputs)
    priced = plan_price(result=plan, request=request, snapshot=price_snapshot, plan_date=plan_date, quotes=quotes)
    final = with_costs(
        plan,
        costs=priced.costs,
        bom=priced.bom,
        explain=priced.explain,
        price_snapshot=price_snapshot.summary_dict() if price_snapshot else None,
        envelope=priced.envelope,
    )
    engine_s = time.perf_counter() - started
    return EngineOutcome(result=to_json(final), engine_s=engine_s)  # the one serialisation of the plan


def request_for_editing(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored (normalised) request as a person would write it: only what differs from the defaults and the
    preset, so "duplicate and edit" fills the form's fields. A request stored by an older version that no longer
    validates is returned as it was (the form then shows it whole as JSON)."""
    try:
        return validate_request(stored, load_catalog()).to_minimal_dict()
    except RequestInvalid:
        return stored


# ------------------------------------------------------------------------------------------------------ what-if

WHATIF_SECTIONS = ("pricing", "site")
# Fields of those sections whose change is not costing alone: they move the facility power the plan was sized with.
_WHATIF_RESIZES = {
    "site.pue": "changes the facility power the plan was sized with; re-plan to change it",
    "site.ambient_c": "changes the heat rejection the plan was built with; re-plan to change it",
}
_MERGED_MAPS = ("component_prices", "parameters")  # keys given are added to (or replace) the stored ones


def _whatif_request(stored: Mapping[str, Any], overrides: object) -> dict[str, Any]:
    """The stored request with `overrides` ({"pricing": {...}, "site": {...}}) laid over it; RequestInvalid names
    every key that is not one of those sections, or not an object, or would change the sizing."""
    if not isinstance(overrides, Mapping):
        raise RequestInvalid({"__all__": ["The what-if body must be a JSON object with pricing and/or site."]})
    errors: dict[str, list[str]] = {}
    for key, value in overrides.items():
        if key not in WHATIF_SECTIONS:
            errors[str(key)] = [
                f"{key} is not a what-if field: give pricing and/or site (a new deadline or model is a new plan)"
            ]
        elif value is not None and not isinstance(value, Mapping):
            errors[key] = [f"{key} must be an object"]
        else:
            for name in value or {}:
                if (path := f"{key}.{name}") in _WHATIF_RESIZES:
                    errors[path] = [f"{path} {_WHATIF_RESIZES[path]}"]
    if errors:
        raise RequestInvalid(errors)
    request = copy.deepcopy(dict(stored))
    for section in WHATIF_SECTIONS:
        merged = dict(request.get(section) or {})
        for name, value in (overrides.get(section) or {}).items():
            if name in _MERGED_MAPS and isinstance(value, Mapping) and isinstance(merged.get(name), Mapping):
                value = {**merged[name], **value}
            merged[name] = value
        request[section] = merged
    return request


# The sections of a stored plan a what-if reads: the plan's required fields and those costing reads (only
# `engine.costing.inputs.cost_job_from_result` reads the plan). For a 16K-GPU plan that skips most of the stored
# JSON (racks, topology, explain, assumptions, the old costs).
COSTED_SECTIONS = (
    *("name", "workload", "feasible", "problems", "engine_version", "catalog_version", "request", "model"),
    *("selection", "candidates", "not_modelled", "notes", "schema_version"),
    *("training", "inference", "cluster", "power", "bom", "cloud_sizings"),
)
# A what-if re-reads the snapshot's prices and the on-prem references at most this often per snapshot: a slider
# sends tens of requests a minute, and a reference price edited meanwhile applies within this many seconds.
WHATIF_PRICES_TTL_S = 30.0
_whatif_inputs: dict[int | None, tuple[float, CostInputs]] = {}


@cache
def catalog_names() -> dict[str, str]:
    """Catalog id -> the name its maker prints ("dgx-b200" -> "NVIDIA DGX B200"), for systems, GPUs and build parts
    (a CDU, a switch): what the outputs show wherever a plan stores an id. Names only: no figure of a stored plan is
    read from the catalog."""
    catalog = load_catalog()
    parts = catalog.parts.parts if catalog.parts else {}
    return {
        **{k: part.name for k, part in parts.items()},
        **{k: gpu.name for k, gpu in catalog.gpus.items()},
        **{k: sys.name for k, sys in catalog.systems.items()},
    }


def _costed_sections(stored: Mapping[str, Any]) -> dict[str, Any]:
    """The `COSTED_SECTIONS` of a stored plan, ready to decode."""
    return {key: stored[key] for key in COSTED_SECTIONS if key in stored}


def decode_costed(stored: Mapping[str, Any]) -> PlanResult:
    """The typed plan a what-if re-costs: the stored plan's `COSTED_SECTIONS` decoded (`plan_whatif`'s `decoded`)."""
    return from_json(_costed_sections(stored))


def _whatif_cost_inputs(snapshot: PriceSnapshot | None) -> CostInputs:
    key = snapshot.pk if snapshot is not None else None
    now = time.monotonic()
    cached = _whatif_inputs.get(key)
    if cached is None or now - cached[0] > WHATIF_PRICES_TTL_S:
        if len(_whatif_inputs) > 8:
            _whatif_inputs.clear()
        cached = _whatif_inputs[key] = (now, cost_inputs_for_snapshot(snapshot=snapshot))
    return cached[1]


WhatIfFields = FieldTree


def whatif_fields(paths: Iterable[str]) -> WhatIfFields:
    """The `costs` fields a what-if answers (dotted paths below `costs`, e.g. `onprem.capex_usd`, `verdict`),
    checked against the costs section's types; RequestInvalid under `fields` names a path that is no field."""
    paths = [path.strip() for path in paths]
    if not paths or not all(paths):
        raise RequestInvalid({"fields": ["fields must name costs fields, comma-separated (e.g. onprem.capex_usd)"]})
    try:
        return field_tree(Costs, paths, prefix="costs")
    except UnknownField as exc:
        raise RequestInvalid({"fields": [f"fields: {exc}"]}) from None


def plan_whatif(
    *,
    stored: Mapping[str, Any],
    overrides: object,
    snapshot: PriceSnapshot | None,
    quotes: Iterable[PartPriceRecord] = (),
    decoded: PlanResult | None = None,
    plan_date: str | None = None,
    fields: WhatIfFields | None = None,
) -> dict[str, Any]:
    """Re-price a stored plan (`stored`: its JSON, or at least its `COSTED_SECTIONS`) with `pricing`/`site`
    overrides: costing only, no new search (the sizing, build and
    BOM quantities stay the plan's). The overrides pass the one request schema, so errors name fields by path
    exactly as for a new plan. Returns the JSON of the recomputed `costs` (with its `verdict`) and the effective
    pricing and site blocks. `decoded` is the stored plan already decoded, when the caller has it. The
    sensitivity table is left out (`costs.sensitivity` absent): the what-if is itself the sensitivity.

    Dates: the prices are the plan's snapshot's, so they are dated the snapshot's day (`priced_on`, from which
    price ages count), not the day a slider moves; start dates count from the plan's own date (`plan_date`, as
    its page shows them), else from the snapshot's day. `fields` (from `whatif_fields`) keeps only those figures
    of `costs`; without it the whole section is answered."""
    request_data = _whatif_request(stored.get("request") or {}, overrides)
    request = validate_request(request_data, load_catalog())
    priced_on = snapshot.fetched_at.astimezone(UTC).date().isoformat() if snapshot is not None else None
    if decoded is None:
        decoded = decode_costed(stored)
    result = replace(decoded, request=request.to_dict())
    priced = plan_price(
        result=result,
        request=request,
        snapshot=snapshot,
        quotes=quotes,
        with_sensitivity=False,
        base_inputs=_whatif_cost_inputs(snapshot),
        plan_date=plan_date or priced_on,
        priced_on=priced_on,
    )
    normalised = result.request
    return {
        "costs": encode_section(priced.costs) if fields is None else encode_fields(priced.costs, fields),
        "pricing": normalised.get("pricing"),
        "site": normalised.get("site"),
        "priced_on": priced_on,
    }
