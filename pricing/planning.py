"""The glue between a computed plan and the pure costing: read prices from the database, price, merge.

`plan_price` is the one call `planner.adapter.plan_compute` makes after the sizing engine. It fills
`result["costs"]`, adds prices to `result["bom"]` lines when the plan has a BOM, and adds the `costs.*` entries
to `result["explain"]`. The request's own prices (`pricing.component_prices`, `pricing.parameters`,
`pricing.utilization`) apply to this plan only, on top of the shared references.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from engine.costing import plan_costs, request_overrides, selection_price_data

from .models import PriceSnapshot
from .selectors import cost_inputs_for_snapshot

__all__ = ["plan_price", "selection_prices_for_request"]


def plan_price(*, result: dict[str, Any], snapshot: PriceSnapshot | None) -> dict[str, Any]:
    """Price `result` in place with `snapshot`'s cloud prices and the current on-prem references; return it."""
    inputs = cost_inputs_for_snapshot(snapshot=snapshot)
    part_overrides, parameter_overrides = request_overrides(result)
    if part_overrides or parameter_overrides:
        inputs = replace(
            inputs,
            part_overrides={**inputs.part_overrides, **part_overrides},
            parameter_overrides={**inputs.parameter_overrides, **parameter_overrides},
        )
    priced = plan_costs(result, inputs)
    result["costs"] = priced.costs
    if priced.bom is not None:
        result["bom"] = priced.bom
    result.setdefault("explain", {}).update(priced.explain)
    if isinstance(result.get("not_modelled"), list) and "costs" in result["not_modelled"]:
        result["not_modelled"] = [stage for stage in result["not_modelled"] if stage != "costs"]
    return result


def selection_prices_for_request(*, request: Mapping[str, Any], system_ids: Iterable[str]) -> dict[str, Any]:
    """System prices, electricity, utilisation and years for ranking candidate systems before the plan is priced.

    Plain data (keys of `engine.search.selection.SelectionPrices`), from the current on-prem references with this
    request's own overrides. On-prem references do not depend on the cloud price snapshot, so none is read here.
    """
    return selection_price_data(request, cost_inputs_for_snapshot(snapshot=None), system_ids)
