"""The adapter's pricing half: the pricing app's plain records (`pricing.records`) into the engine's costing
inputs, and a plan priced with them.

Why apart: the pricing app says where prices come from and never builds engine types; this module alone knows
both sides, and the plan run (`planner.adapter.plan_compute`) and the what-if (`planner.adapter.whatif`) price
through it the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import TypeVar

from django.utils import timezone

from engine import PlanRequest
from engine.costing import (
    CloudPrice,
    CostInputs,
    CostParameter,
    PartPrice,
    SpotBand,
    plan_costs,
    request_overrides,
    selection_price_data,
)
from engine.result import BomLine, Costs, ExplainEntry, PlanResult
from engine.result.envelope import EnvelopeSummary
from engine.search.selection import SelectionPrices
from pricing.models import PriceSnapshot
from pricing.records import CloudPriceRecord, PartPriceRecord, PriceBook, PriceReferences
from pricing.selectors import price_book_for_snapshot, price_references_current

__all__ = ["PricedParts", "cost_inputs", "cost_inputs_for_snapshot", "plan_price", "selection_prices_for_request"]

_Engine = TypeVar("_Engine")

# ----------------------------------------------------------------------------- pricing records -> costing inputs


def _as_engine(engine_type: type[_Engine], record: object) -> _Engine:
    """The engine dataclass with the record's values. The pricing records use the engine's field names, so a
    renamed field fails here at once (AttributeError) rather than pricing with a default."""
    return engine_type(**{f.name: getattr(record, f.name) for f in fields(engine_type)})  # type: ignore[arg-type]


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
