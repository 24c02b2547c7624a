"""The one door from Django into the pure engine: every module of planner/ and config/ that needs the engine
imports it from here (a test holds the line; the pricing app only converts its stored prices into the costing's
input types, in pricing/selectors.py and pricing/references.py).

Keeps the catalog load, the pricing and the snapshot stamping in one function that the task, the `plan` command
and the tests share: the engine's typed result plus costing's parts make one final result, serialised once.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# Re-exported for planner.outputs, which reads stored plans only through this door: PlanResult, from_json, and
# decode_section / encode_section (an old plan read section by section; a section shown as its JSON).
from dataclasses import dataclass, replace
from typing import Any

from engine import (
    STAGES,
    PlanRequest,
    PlanResult,
    RequestInvalid,
    from_json,
    load_catalog,
    run_plan,
    to_json,
    validate_request,
)
from engine.catalog.hardware import default_catalog_dir
from engine.costing import CostResult, plan_costs, request_overrides, selection_price_data
from engine.request.spec import choices_of, field_at
from engine.result import (
    AssumptionEntry,
    BomLine,
    Costs,
    ExplainEntry,
    FabricNetwork,
    OnpremSection,
    RackEntry,
    TopologyLink,
    TopologyNode,
    with_costs,
)
from engine.result.codec import decode as decode_section
from engine.result.codec import encode as encode_section
from engine.search.selection import SelectionPrices
from pricing.models import PriceSnapshot
from pricing.selectors import cost_inputs_for_snapshot

# What the web app, the API and the commands use of the engine, by name.
__all__ = [
    "STAGES",
    "AssumptionEntry",
    "BomLine",
    "Costs",
    "EngineOutcome",
    "ExplainEntry",
    "FabricNetwork",
    "OnpremSection",
    "PlanRequest",
    "PlanResult",
    "RackEntry",
    "RequestInvalid",
    "TopologyLink",
    "TopologyNode",
    "choices_of",
    "decode_section",
    "default_catalog_dir",
    "encode_section",
    "field_at",
    "from_json",
    "load_catalog",
    "plan_compute",
    "plan_price",
    "request_for_editing",
    "request_validate",
]

ProgressCallback = Callable[[str, int], None]


@dataclass(frozen=True)
class EngineOutcome:
    """`result` is the plan's JSON (what services store and the API serves); `engine_s` the wall time."""

    result: dict[str, Any]
    engine_s: float


def request_validate(data: object) -> PlanRequest:
    """Validate a raw request (raises sizing.RequestInvalid with every field error)."""
    return validate_request(data, load_catalog())


def plan_compute(
    *, request_data: object, price_snapshot: PriceSnapshot | None, progress: ProgressCallback | None = None
) -> EngineOutcome:
    """Validate and run the whole chain, price it, and return the plan JSON stamped with the price snapshot used
    (the catalog version is the engine's own stamp)."""
    catalog = load_catalog()
    started = time.perf_counter()

    def engine_progress(stage: str, percent: int) -> None:
        # The engine's "done" is not the end here: pricing follows, so report it as that stage.
        if progress:
            progress("costing" if stage == "done" else stage, min(percent, 95))

    request = validate_request(request_data, catalog)
    # Prices for the auto choice among systems (cost-aware ranking): the on-prem references with this request's own
    # overrides (they do not depend on the cloud snapshot); the engine stays pure and takes plain data.
    selection = selection_price_data(request, cost_inputs_for_snapshot(snapshot=None), catalog.systems)
    plan = run_plan(request, catalog, engine_progress, prices=SelectionPrices(**selection))
    priced = plan_price(result=plan, request=request, snapshot=price_snapshot)
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


def plan_price(*, result: PlanResult, request: PlanRequest, snapshot: PriceSnapshot | None) -> CostResult:
    """Price `result` (read only) with `snapshot`'s cloud prices and the current on-prem references, plus the
    request's own prices (`pricing.component_prices`, `pricing.parameters`), which apply to this plan only."""
    inputs = cost_inputs_for_snapshot(snapshot=snapshot)
    part_overrides, parameter_overrides = request_overrides(request)
    if part_overrides or parameter_overrides:
        inputs = replace(
            inputs,
            part_overrides={**inputs.part_overrides, **part_overrides},
            parameter_overrides={**inputs.parameter_overrides, **parameter_overrides},
        )
    return plan_costs(result, inputs)
