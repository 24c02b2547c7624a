"""Phased roll-out (engine/costing/rollout.py): phases by scalable unit or by MW, each with its capacity, power,
spend and ready day; training starts when the job's GPUs are in, serving with the first phase. Hand-worked."""

from __future__ import annotations

import functools
import json
import math
from decimal import Decimal

import pytest

from engine import load_catalog, run_plan, validate_request
from engine.costing import plan_costs
from planner.adapter import cost_inputs
from pricing.references import price_references_load

REFS = cost_inputs(price_references_load())


def _body(rollout: dict, gpus: int = 2048, workload: str = "training") -> dict:
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-70b"},
        "training": {"tokens": 1e12, "gpus": gpus},
        "hardware": {"system": "dgx-h100"},
        "rollout": rollout,
    }
    if workload == "inference":
        body.pop("training")
        body["workload"] = "inference"
        body["inference"] = {"requests_per_s": 200, "prompt_tokens": 1000, "output_tokens": 250}
    return body


@functools.cache
def _priced(key: str):
    body = json.loads(key)
    catalog = load_catalog()
    plan = run_plan(validate_request(body, catalog), catalog)
    return plan, plan_costs(plan, REFS)


def priced(body: dict):
    return _priced(json.dumps(body, sort_keys=True))


def test_phases_by_scalable_unit():
    # 2,048 H100 GPUs = 256 DGX H100 = 8 SUs of 32 systems; 2 SUs per phase -> 4 phases of 64 systems (512 GPUs).
    plan, result = priced(_body({"by": "scalable_units", "per_phase": 2}))
    ro = result.costs.rollout
    assert plan.cluster.systems == 256 and plan.cluster.su_systems == 32
    assert [p.systems for p in ro.phases] == [64, 64, 64, 64]
    assert [p.cumulative_gpus for p in ro.phases] == [512, 1024, 1536, 2048]
    # Ready: time to capacity (84 days of server lead time + 28 build + 7 burn-in = 119) + (k - 1) x 91.
    assert [p.ready_days for p in ro.phases] == [119, 210, 301, 392]
    # Months of 30.4375 days: ceil(119 / 30.4375) = 4, 210 -> 7, 301 -> 10, 392 -> 13.
    assert [p.ready_month for p in ro.phases] == [4, 7, 10, 13]
    # Training needs all 2,048 GPUs: it starts with phase 4, on day 392.
    assert (ro.start_phase, ro.start_days) == (4, 392)
    # Spend sums to capex to the cent; power per phase is a quarter of the cluster's.
    assert sum(p.spend_usd for p in ro.phases) == result.costs.onprem.capex_usd
    assert ro.phases[0].facility_kw == pytest.approx(plan.power.facility_kw / 4, abs=1e-3)
    assert "costs.rollout" in result.explain


def test_phases_by_mw_and_months_between():
    plan, result = priced(_body({"by": "mw", "per_phase": 1.0, "months_between": 2}))
    ro = result.costs.rollout
    kw_per_system = plan.power.facility_kw / plan.cluster.systems
    per = math.floor(1000 / kw_per_system)
    assert ro.systems_per_phase == per
    assert len(ro.phases) == math.ceil(plan.cluster.systems / per)
    # Two months of 30.4375 days between phases.
    assert ro.interval_days == pytest.approx(60.875)
    assert ro.phases[1].ready_days - ro.phases[0].ready_days == pytest.approx(60.875)


def test_a_phase_smaller_than_one_system_delivers_one():
    plan, result = priced(_body({"by": "mw", "per_phase": 0.001}, gpus=16))
    ro = result.costs.rollout
    assert ro.systems_per_phase == 1 and len(ro.phases) == plan.cluster.systems
    assert "holds no whole system" in ro.notes[0]


def test_serving_starts_with_the_first_phase():
    plan, result = priced(_body({"by": "mw", "per_phase": 0.1}, workload="inference"))
    ro = result.costs.rollout
    assert len(ro.phases) > 1, plan.cluster.systems
    assert ro.start_phase == 1 and ro.start_days == ro.phases[0].ready_days


def test_the_owned_option_starts_when_training_can():
    # With phases the owned cluster's training starts on day 392 instead of 119: 273 days later.
    _, whole = priced({k: v for k, v in _body({"by": "scalable_units", "per_phase": 2}).items() if k != "rollout"})
    _, phased = priced(_body({"by": "scalable_units", "per_phase": 2}))

    def onprem(costs):
        return next(o for o in costs.comparison.options if o.option == "onprem_bought")

    assert onprem(phased.costs).start_days - onprem(whole.costs).start_days == pytest.approx(273)
    assert whole.costs.rollout is None


def test_spend_per_phase_rounds_to_the_cent():
    _, result = priced(_body({"by": "scalable_units", "per_phase": 3}))
    ro = result.costs.rollout
    # 256 systems in phases of 96: 96, 96, 64; the first two spend capex x 96 / 256 to the cent.
    assert [p.systems for p in ro.phases] == [96, 96, 64]
    capex = result.costs.onprem.capex_usd
    assert ro.phases[0].spend_usd == (capex * Decimal(96) / Decimal(256)).quantize(Decimal("0.01"))
