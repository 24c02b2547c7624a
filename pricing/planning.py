"""The glue between a computed plan and the pure costing: read prices from the database, price, return the parts.

`plan_price` is the one call `planner.adapter.plan_compute` makes after the sizing engine. It takes the typed
`PlanResult` and returns the typed priced parts (`costs`, the BOM lines with prices when the plan has a BOM, and
the `costs.*` explain entries) without touching the plan; `engine.result.with_costs` puts them into a new result.
The request's own prices (`pricing.component_prices`, `pricing.parameters`, `pricing.utilization`) apply to this
plan only, on top of the shared references.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from engine.costing import plan_costs, plan_request, request_overrides, selection_price_data
from engine.request.spec import PlanRequest
from engine.result import BomLine, Costs, ExplainEntry, PlanResult

from .models import PriceSnapshot
from .selectors import cost_inputs_for_snapshot

__all__ = ["PricedParts", "plan_price", "selection_prices_for_request"]


@dataclass(frozen=True)
class PricedParts:
    """What costing adds to a plan: the typed `costs` section (Decimal money), the priced BOM lines (None when the
    plan has no BOM) and the `costs.*` explain entries."""

    costs: Costs
    bom: tuple[BomLine, ...] | None
    explain: Mapping[str, ExplainEntry]


def plan_price(*, result: PlanResult, snapshot: PriceSnapshot | None) -> PricedParts:
    """Price `result` (read only) with `snapshot`'s cloud prices and the current on-prem references."""
    inputs = cost_inputs_for_snapshot(snapshot=snapshot)
    part_overrides, parameter_overrides = request_overrides(plan_request(result))
    if part_overrides or parameter_overrides:
        inputs = replace(
            inputs,
            part_overrides={**inputs.part_overrides, **part_overrides},
            parameter_overrides={**inputs.parameter_overrides, **parameter_overrides},
        )
    priced = plan_costs(result, inputs)
    return PricedParts(costs=priced.costs, bom=priced.bom, explain=priced.explain)


def selection_prices_for_request(*, request: PlanRequest, system_ids: Iterable[str]) -> dict[str, Any]:
    """System prices, electricity, utilisation and years for ranking candidate systems before the plan is priced.

    Plain data (keys of `engine.search.selection.SelectionPrices`), from the current on-prem references with this
    request's own overrides. On-prem references do not depend on the cloud price snapshot, so none is read here.
    """
    return selection_price_data(request, cost_inputs_for_snapshot(snapshot=None), system_ids)
