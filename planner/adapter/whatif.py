"""The adapter's what-if half: a stored plan re-priced with `pricing`/`site` overrides, costing only.

Why apart: the what-if reads only the sections costing needs (`COSTED_SECTIONS`), keeps the snapshot's costing
inputs for a few seconds (a slider sends tens of requests a minute) and answers only the fields asked for; none of
that touches a new plan's run.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC
from typing import Any

from engine import RequestInvalid, load_catalog, validate_request
from engine.costing import CostInputs
from engine.result import Costs, PlanResult, from_json
from engine.result.codec import encode as encode_section
from engine.result.projection import FieldTree, UnknownField, encode_fields, field_tree
from planner.adapter.prices import cost_inputs_for_snapshot, plan_price
from pricing.models import PriceSnapshot
from pricing.records import PartPriceRecord

__all__ = ["COSTED_SECTIONS", "WhatIfFields", "decode_costed", "plan_whatif", "whatif_fields"]

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
