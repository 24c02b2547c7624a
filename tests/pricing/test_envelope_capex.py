"""A training plan's envelope capex limit against the plan's own priced capex (engine/costing/envelope_check.py):
the envelope's search priced its builds, but the plan is priced afterwards (and again by a what-if), so the plan
says plainly whether its capex is within the limit."""

from __future__ import annotations

import functools
from dataclasses import replace
from decimal import Decimal

import pytest

from engine import load_catalog, run_plan, validate_request
from engine.costing import plan_costs
from engine.costing.envelope_check import capex_check
from planner.adapter import cost_inputs
from pricing.references import price_references_load

REFS = cost_inputs(price_references_load())
BODY = {
    "workload": "training",
    "model": {"preset": "llama-3-8b"},
    "training": {"tokens": 1e11, "gpus": 8},
    "hardware": {"system": "dgx-h100"},
    "envelope": {"capex_usd": 700_000},
}


def test_capex_check_words():
    assert "above the capex limit of $1.00M" in capex_check(1e6, Decimal("1200000"))
    # (1,000,000 - 800,000) / 1,000,000 = 20.0 % left.
    assert capex_check(1e6, Decimal("800000")).endswith("(20.0 % left).")
    assert "could not be checked" in capex_check(1e6, None)
    assert capex_check(None, Decimal(1)) is None


@functools.cache
def _plan():
    catalog = load_catalog()
    plan = run_plan(validate_request(BODY, catalog), catalog, cost_inputs=REFS)
    assert plan.feasible
    return plan


def test_priced_capex_within_the_limit_fills_the_envelope_row():
    result = plan_costs(_plan(), REFS)
    capex = result.costs.onprem.capex_usd
    assert capex <= Decimal(700_000)
    row = next(r for r in result.envelope.limits if r.key == "capex_usd")
    assert row.used == pytest.approx(float(capex))
    assert row.headroom == pytest.approx(700_000 - float(capex))
    assert result.envelope.within and "within the capex limit" in result.costs.envelope_capex


def test_a_dearer_price_afterwards_is_said_plainly():
    # The same plan re-priced with the DGX H100 at $900,000 (a what-if, a quote): capex is above $700,000.
    dearer = replace(REFS, part_overrides={"dgx-h100": Decimal("900000")})
    result = plan_costs(_plan(), dearer)
    assert result.costs.onprem.capex_usd > Decimal(900_000)
    assert "does not fit the envelope" in result.costs.envelope_capex
    assert not result.envelope.within and "above the capex limit of $700k" in result.envelope.sentence


def test_no_envelope_no_check():
    catalog = load_catalog()
    body = {k: v for k, v in BODY.items() if k != "envelope"}
    result = plan_costs(run_plan(validate_request(body, catalog), catalog), REFS)
    assert result.costs.envelope_capex is None and result.envelope is None
