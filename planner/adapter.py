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

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
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
from engine.request.site import price_keys
from engine.request.spec import choices_of, field_at
from engine.request.validation import safe_text, unsafe_values
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
from engine.search.selection import SelectionPrices
from pricing.models import PriceSnapshot
from pricing.records import CloudPriceRecord, PartPriceRecord, PriceBook, PriceReferences
from pricing.selectors import price_book_for_snapshot, price_references_current

__all__ = [
    "CAPEX_EXTRA_CATEGORIES",
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
    "choices_of",
    "cost_inputs",
    "cost_inputs_for_snapshot",
    "decode_section",
    "default_catalog_dir",
    "encode_section",
    "field_at",
    "from_json",
    "load_catalog",
    "plan_compute",
    "plan_price",
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


def plan_price(
    *,
    result: PlanResult,
    request: PlanRequest,
    snapshot: PriceSnapshot | None,
    plan_date: str | None = None,
    quotes: Iterable[PartPriceRecord] = (),
) -> PricedParts:
    """Price `result` (read only) with `snapshot`'s cloud prices and the current on-prem references.

    `plan_date` (ISO date) is the day start dates count from: today (UTC) unless given (tests inject it).

    The request's own prices (`pricing.component_prices`, `pricing.parameters`, `pricing.utilization`) apply to
    this plan only, on top of the shared references; `engine.result.with_costs` puts the parts into a new result.
    """
    today = timezone.now().date().isoformat()
    inputs = replace(
        cost_inputs_for_snapshot(snapshot=snapshot),
        plan_date=plan_date or today,
        priced_on=today,
        quotes=tuple(_as_engine(PartPrice, q) for q in quotes),
    )
    part_overrides, parameter_overrides = request_overrides(request)
    if part_overrides or parameter_overrides:
        inputs = replace(
            inputs,
            part_overrides={**inputs.part_overrides, **part_overrides},
            parameter_overrides={**inputs.parameter_overrides, **parameter_overrides},
        )
    priced = plan_costs(result, inputs)
    return PricedParts(costs=priced.costs, bom=priced.bom, explain=priced.explain)


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
    plan = run_plan(request, catalog, engine_progress, prices=prices)
    priced = plan_price(result=plan, request=request, snapshot=price_snapshot, plan_date=plan_date, quotes=quotes)
    final = with_costs(
        plan,
        costs=priced.costs,
        bom=priced.bom,
        explain=priced.explain,
        price_snapshot=price_snapshot.summary_dict() if price_snapshot else None,
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
