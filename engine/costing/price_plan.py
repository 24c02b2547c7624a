"""The costing entry points: `plan_costs` prices one plan; `selection_price_data` gives the sizing engine the
on-prem prices it ranks candidate systems with. Both apply a request's own prices the same way.

PURE Python: no Django, boto3 or network (a subprocess test enforces it). Inputs are plain dataclasses (cloud
prices from a snapshot, part prices, named parameters, grid intensities, Spot Advisor bands) and the typed plan,
read once into a `CostJob`; the output is the typed `costs` section with money rounded once (money.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import date
from decimal import Decimal
from typing import Any

from engine.request.spec import PlanRequest
from engine.result.costs import DAYS_BASIS_P50, Comparison, Costs
from engine.result.plan import PlanResult

from .capex_range import capex_range
from .carbon import carbon
from .comparison import DAYS_BASIS_P90, DEADLINE_RULE, DEADLINE_RULE_P90, break_even, cheapest, option_result
from .envelope_check import capex_check, priced_envelope
from .evaluation import Evaluation, evaluate
from .explain import costs_explain
from .explain_verdict import verdict_explain
from .freshness import DEFAULT_STALE_AFTER_DAYS, STALE_PARAMETER, price_warning_headlines, price_warnings
from .inputs import CostInputs, Scales, cost_job_from_result, request_terms
from .npv import NPV_BASIS, npv_options
from .onprem import price_index
from .ownership import onprem_section
from .parameters import Params
from .result import CostResult
from .rollout import rollout_explain
from .sensitivity import deadline_note, sensitivity
from .series import cumulative_series
from .verdict import verdict

__all__ = ["MONEY_FORMAT", "plan_costs", "selection_price_data"]

MONEY_FORMAT = (
    "Amounts are decimal strings with 2 decimals; hourly rates keep the snapshot's 6 decimals. "
    "JSON has no decimal type; parse them as decimals, not floats."
)
NOTHING_TO_PRICE = "The plan is infeasible or has no cluster: nothing to price."


def _comparison(ev: Evaluation) -> Comparison:
    o = ev.onprem
    rows = [p for p in ev.rows if p.usable]
    ranked = sorted(ev.options, key=lambda x: (not x.obtainable, x.job_usd))
    return Comparison(
        options=tuple(opt for opt in (option_result(x, ev.plan_date) for x in ranked) if opt is not None),
        **cheapest(ev.options, ev.job.deadline_days, ev.plan_date),
        deadline_rule=DEADLINE_RULE_P90 if ev.job.deadline_percentile == "p90" else DEADLINE_RULE,
        deadline_percentile=ev.job.deadline_percentile if ev.job.deadline_days is not None else None,
        days_basis=DAYS_BASIS_P90 if ev.job.deadline_percentile == "p90" else DAYS_BASIS_P50,
        break_even=tuple(break_even(o, ev.job, p) for p in rows) if o.capex_usd is not None else (),
        cumulative=cumulative_series(ev),
        npv=npv_options(ev),
        npv_basis=NPV_BASIS if ev.onprem.npv_usd is not None else None,
    )


def _price_warnings(ev: Evaluation, inputs: CostInputs) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Old or assumed cloud prices behind this plan's rows: the full sentences (`freshness.price_warnings`) and
    their headlines, in the same order."""
    priced_on = date.fromisoformat(inputs.priced_on) if inputs.priced_on else None
    limit = int(ev.params[STALE_PARAMETER]) if STALE_PARAMETER in ev.params.base else DEFAULT_STALE_AFTER_DAYS
    rows = [p.row for p in ev.rows]
    return (
        price_warnings(rows, priced_on=priced_on, stale_after_days=limit),
        price_warning_headlines(rows, priced_on=priced_on, stale_after_days=limit),
    )


def plan_costs(result: PlanResult, inputs: CostInputs, *, with_sensitivity: bool = True) -> CostResult:
    """Price one plan. An infeasible plan gets `costs` with only a note (nothing to price).

    `with_sensitivity=False` leaves out the sensitivity table (ten more evaluations, most of the time): a what-if
    that moves the inputs itself needs the costs and the verdict, not the table of what else would move them.
    """
    job = cost_job_from_result(result)
    if job is None:
        return CostResult(costs=Costs(currency="USD", available=False, note=NOTHING_TO_PRICE), bom=None, explain={})
    ev = evaluate(job, inputs, Scales())
    comparison = _comparison(ev)
    limit = _capex_limit(result)
    capex_band, capex_band_explain = capex_range(ev, inputs)  # two on-prem passes, cheap: a what-if keeps it too
    warnings, headlines = _price_warnings(ev, inputs)
    decided = verdict(ev, comparison.break_even)
    table = deadline_note(sensitivity(ev, inputs), ev, decided) if with_sensitivity else None
    costs = Costs(
        currency="USD",
        available=True,
        money_format=MONEY_FORMAT,
        coverage=ev.onprem.coverage,
        parameters=ev.params.report(),
        onprem=replace(onprem_section(ev.onprem, job, ev.params), capex_range=capex_band),
        cloud=tuple(p.row for p in ev.rows),
        cloud_notes=(*ev.cloud_notes, *([inputs.snapshot_note] if inputs.snapshot_note else [])),
        price_warnings=warnings,
        price_warning_headlines=headlines,
        comparison=comparison,
        sensitivity=table,
        carbon=carbon(ev, inputs),
        time_to_capacity=ev.capacity if ev.onprem.capex_usd is not None else None,
        verdict=decided,
        rollout=ev.rollout,
        envelope_capex=capex_check(limit, ev.onprem.capex_usd),
    )
    bom = None if ev.onprem.bom is None else tuple(ev.onprem.bom)
    explain = {
        **costs_explain(ev, costs),
        **capex_band_explain,
        **verdict_explain(ev, costs),
        **rollout_explain(ev.rollout),
    }
    envelope = priced_envelope(result.envelope, limit, ev.onprem.capex_usd)
    return CostResult(costs=costs, bom=bom, explain=explain, onprem=ev.onprem, job=job, envelope=envelope)


def _capex_limit(result: PlanResult) -> float | None:
    """The request's envelope capex limit (training and inference plans; a capacity plan's search is its own)."""
    if result.workload == "capacity":
        return None
    envelope = (result.request or {}).get("envelope") or {}
    limit = envelope.get("capex_usd")
    return float(limit) if limit is not None else None


def selection_price_data(request: PlanRequest, inputs: CostInputs, system_ids: Iterable[str]) -> dict[str, Any]:
    """Plain data for the sizing engine's cost-aware system choice (`engine.search.selection.SelectionPrices`).

    `request` is the validated request; its `pricing.component_prices`, `pricing.parameters`,
    `pricing.utilization` and `site.electricity_usd_per_kwh` apply exactly as in `plan_price`. Systems without a
    reference price or an override are left out of `system_usd` (the engine then falls back to its energy rule).
    """
    terms = request_terms(request)
    inputs = replace(
        inputs,
        part_overrides={**inputs.part_overrides, **terms.part_overrides},
        parameter_overrides={**inputs.parameter_overrides, **terms.parameter_overrides},
    )
    index = price_index(inputs)
    params = Params(inputs, terms)
    system_usd: dict[str, float] = {}
    overridden: list[str] = []
    quoted: list[str] = []
    for system_id in system_ids:
        price = index.get(system_id)
        if price is not None:
            system_usd[system_id] = float(price.unit_price_usd)
            if system_id in index.overrides:
                overridden.append(system_id)
            elif system_id in index.quotes:
                quoted.append(system_id)
    report = params.report()
    system_source = (
        "each system's dated price reference (vendor list prices and published quotes; the BOM shows each line's "
        "source)"
    )
    if overridden:
        system_source += f"; prices given with this plan override {', '.join(overridden)}"
    if quoted:
        system_source += f"; its owner's vendor quotes price {', '.join(quoted)}"
    return {
        "system_usd": system_usd,
        "electricity_usd_per_kwh": float(params["electricity_usd_per_kwh"]),
        "utilization": float(min(Decimal(1), params["utilization"])),
        "years": params.years,
        "sources": {
            "system_usd": system_source,
            "electricity_usd_per_kwh": str(report["electricity_usd_per_kwh"].source),
            "utilization": str(report["utilization"].source),
            "years": "the horizon given in the request (years)",
            "pue": (
                "the site PUE given in the request, else the PUE assumption for the cooling method (The Green Grid, "
                "'PUE: A Comprehensive Examination of the Metric', White Paper 49, 2012)"
            ),
        },
    }
