"""The one place the Django side calls the pure sizing engine.

Keeps the catalog load, the pricing and the snapshot stamping in one function that the task, the `plan` command
and the tests share: the engine's typed result plus costing's parts make one final result, serialised once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Re-exported for planner.outputs, which reads stored plans only through this door: PlanResult, from_json, and
# decode_section / encode_section (an old plan read section by section; a section shown as its JSON).
from engine import PlanRequest, PlanResult, RequestInvalid, from_json, load_catalog, run_plan, to_json, validate_request  # noqa: F401
from engine.result import with_costs
from engine.result.codec import decode as decode_section  # noqa: F401
from engine.result.codec import encode as encode_section  # noqa: F401
from engine.search.selection import SelectionPrices
from pricing.models import PriceSnapshot
from pricing.planning import plan_price, selection_prices_for_request

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
    # Prices for the auto choice among systems (cost-aware ranking); the engine stays pure and takes plain data.
    prices = SelectionPrices(**selection_prices_for_request(request=request, system_ids=catalog.systems))
    plan = run_plan(request, catalog, engine_progress, prices=prices)
    priced = plan_price(result=plan, snapshot=price_snapshot)
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
