"""An owned site's capex (engine/costing/site_capex.py): three lines per kW of IT load instead of colocation, with
the building's residual value after the hardware's life. Hand-worked from the fixture's parameters: $3,411,
$2,790 and $5,499 per kW (Cushman & Wakefield 2025: $11.7M per MW x 0.53 x 0.55, x 0.53 x 0.45, x 0.47)."""

from __future__ import annotations

import functools
from decimal import Decimal

import pytest

from engine import load_catalog, run_plan, validate_request
from engine.costing import plan_costs
from planner.adapter import cost_inputs
from pricing.references import price_references_load

REFS = cost_inputs(price_references_load())
BODY = {
    "workload": "training",
    "model": {"preset": "llama-3-8b"},
    "training": {"tokens": 1e11, "gpus": 8},
    "hardware": {"system": "dgx-h100"},
}


@functools.cache
def _priced(ownership: str):
    catalog = load_catalog()
    plan = run_plan(validate_request({**BODY, "site": {"ownership": ownership}}, catalog), catalog)
    return plan, plan_costs(plan, REFS)


def _site_lines(result):
    return {i.part_number: i for i in result.onprem.extras if i.category == "site"}


def test_colocation_buys_no_site_and_pays_rent():
    plan, result = _priced("colocation")
    assert _site_lines(result) == {}
    # IT kW x 163.44 USD per kW-month x 12.
    expected = (Decimal(str(plan.power.it_kw)) * Decimal("163.44") * 12).quantize(Decimal("0.01"))
    assert abs(result.onprem.colocation_usd_per_year - expected) <= Decimal("0.01")


def test_owned_site_buys_three_lines_per_kw_and_pays_no_rent():
    plan, result = _priced("owned")
    kw = round(plan.power.it_kw)
    lines = _site_lines(result)
    assert {p: (i.quantity, i.unit_price_usd) for p, i in lines.items()} == {
        "SITE-ELECTRICAL": (kw, Decimal("3411.00")),
        "SITE-MECHANICAL": (kw, Decimal("2790.00")),
        "SITE-BUILDING": (kw, Decimal("5499.00")),
    }
    site_usd = Decimal(11_700) * kw
    assert sum(i.extended_price_usd for i in lines.values()) == site_usd
    assert result.onprem.colocation_usd_per_year == Decimal("0.00")
    # Capex grows by exactly the site; the priced BOM carries the three lines.
    _, colo = _priced("colocation")
    assert result.onprem.capex_usd - colo.onprem.capex_usd == site_usd
    assert {"SITE-ELECTRICAL", "SITE-MECHANICAL", "SITE-BUILDING"} <= {b.part_number for b in result.bom}
    # Residual: hardware x 0.10 + site x (1 - 5 / 20 years).
    extra = result.onprem.residual_value_usd - colo.onprem.residual_value_usd
    assert extra == pytest.approx(site_usd * Decimal("0.75"), abs=Decimal("0.01"))


def test_an_owned_site_counts_against_an_envelope_capex_limit():
    # The envelope search prices each build with the plan's own rules: buying the site leaves fewer systems
    # inside the same $20M.
    catalog = load_catalog()

    def largest(ownership: str) -> int:
        body = {
            "workload": "capacity",
            "hardware": {"system": "dgx-h100"},
            "envelope": {"capex_usd": 20_000_000},
            "site": {"ownership": ownership},
        }
        plan = run_plan(validate_request(body, catalog), catalog, cost_inputs=REFS)
        assert plan.feasible and plan.envelope.binding == "capex_usd"
        # The plan's priced capex (its site lines included) is the figure the search held to the limit.
        assert plan_costs(plan, REFS).onprem.capex_usd <= Decimal(20_000_000)
        return plan.cluster.systems

    colocated, owned = largest("colocation"), largest("owned")
    assert 0 < owned < colocated


def test_owned_site_upkeep_replaces_the_hardware_support_rate_on_the_building():
    plan, result = _priced("owned")
    _, colo = _priced("colocation")
    site_usd = Decimal(11_700) * round(plan.power.it_kw)
    flows = {f.year: f for f in result.onprem.flows}
    colo_flows = {f.year: f for f in colo.onprem.flows}
    # Year 1 (support prepaid for 3 years): only the site's upkeep, 2.5 % of its cost.
    assert flows[1].maintenance_usd == (site_usd * Decimal("0.025")).quantize(Decimal("0.01"))
    # Year 4: the hardware's 10 % as when colocated (same hardware capex) plus the site's 2.5 %.
    assert flows[4].maintenance_usd - colo_flows[4].maintenance_usd == (site_usd * Decimal("0.025")).quantize(
        Decimal("0.01")
    )
