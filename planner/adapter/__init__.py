"""The one door from Django into the engine: no other module of planner/, pricing/ or config/ imports `engine`.

Three jobs, in the order a plan is made, one module each:

- here: re-export the few engine names the web side needs (request errors, stage names, the catalog, the typed
  result and its JSON codec), so views, forms, the API and the commands import them from `planner.adapter`; and
  `plan_compute`, which the task, the `plan` command and the tests share: validate, run the chain with
  cost-aware system selection, price the result with the snapshot and the request's own prices, stamp the
  snapshot and serialise once;
- `prices.py`: turn the pricing app's plain records (`pricing.records.PriceBook`) into the engine's costing
  inputs and price a plan with them: the pricing app says where prices come from, the adapter alone knows the
  engine's types;
- `whatif.py`: re-price a stored plan with `pricing`/`site` overrides, costing only.

`tests/planner/test_adapter_boundary.py` keeps the door (this package) the only one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from engine import STAGES, Catalog, PlanRequest, RequestInvalid, load_catalog, run_plan, validate_request
from engine.catalog.hardware import default_catalog_dir
from engine.costing import provider_name
from engine.costing.money import usd_text
from engine.costing.onprem import EXTRA_CATEGORIES as CAPEX_EXTRA_CATEGORIES
from engine.costing.providers import purchase_name, term_name
from engine.explain.wording import in_words
from engine.request.schema_lookup import choices_of, field_at
from engine.request.site import price_keys
from engine.request.validation import safe_text, unsafe_values
from engine.request.whatif import WhatIfRequest
from engine.result import (
    AssumptionEntry,
    BomLine,
    Candidate,
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
from planner.adapter.prices import (
    PricedParts,
    cost_inputs,
    cost_inputs_for_snapshot,
    plan_price,
    selection_prices_for_request,
)
from planner.adapter.whatif import COSTED_SECTIONS, WhatIfFields, decode_costed, plan_whatif, whatif_fields
from pricing.models import PriceSnapshot
from pricing.records import PartPriceRecord
from pricing.selectors import price_references_current

__all__ = [
    "CAPEX_EXTRA_CATEGORIES",
    "COSTED_SECTIONS",
    "STAGES",
    "AssumptionEntry",
    "BomLine",
    "Candidate",
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
    "term_name",
    "to_json",
    "unsafe_values",
    "usd_text",
    "whatif_fields",
]

ProgressCallback = Callable[[str, int], None]


def price_key_known(key: str) -> bool:
    """Whether a part key names something the plans price: a BOM part number or a catalog id."""
    return key in price_keys(load_catalog())


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
