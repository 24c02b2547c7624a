"""The one place the Django side calls the pure sizing engine.

Keeps the catalog load and the snapshot/version stamping in one function that the task,
the `plan` command and the tests share.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine import PlanRequest, load_catalog, run_plan, validate_request
from engine.search.selection import SelectionPrices
from pricing.models import PriceSnapshot
from pricing.planning import plan_price, selection_prices_for_request

ProgressCallback = Callable[[str, int], None]


@dataclass(frozen=True)
class EngineOutcome:
    result: dict[str, Any]
    engine_s: float


def request_validate(data: object) -> PlanRequest:
    """Validate a raw request (raises sizing.RequestInvalid with every field error)."""
    return validate_request(data, load_catalog())


def plan_compute(
    *, request_data: object, price_snapshot: PriceSnapshot | None, progress: ProgressCallback | None = None
) -> EngineOutcome:
    """Validate and run the whole chain; stamp the result with the catalog and price snapshot used."""
    catalog = load_catalog()
    started = time.perf_counter()

    def engine_progress(stage: str, percent: int) -> None:
        # The engine's "done" is not the end here: pricing follows, so report it as that stage.
        if progress:
            progress("costing" if stage == "done" else stage, min(percent, 95))

    request = validate_request(request_data, catalog)
    # Prices for the auto choice among systems (cost-aware ranking); the engine stays pure and takes plain data.
    prices = SelectionPrices(**selection_prices_for_request(request=request.to_dict(), system_ids=catalog.systems))
    result = run_plan(request, catalog, engine_progress, prices=prices)
    plan_price(result=result, snapshot=price_snapshot)  # costs, BOM prices, costs.* explain (pricing app)
    engine_s = time.perf_counter() - started
    result["catalog_version"] = catalog.version
    result["price_snapshot"] = price_snapshot.summary_dict() if price_snapshot else None
    return EngineOutcome(result=result, engine_s=engine_s)
