"""The capex range is an engine figure (`costs.onprem.capex_range`) with its explain entry. Worked by hand: when
every part of a DGX plan's BOM is priced by the user (basis "quote"), every line moves by the quote range of the
named assumptions (engine/data/assumptions/prices.toml: -6.5 % / +9 %, AACE 18R-97 Class 1 midpoints), and so do
the extras that are shares of the hardware (installation, freight, tax, spares, prepaid support; DGX systems bundle
their software), so low = capex x 0.935 and high = capex x 1.09, to the cents of per-line rounding.
(Django side: the plan is run through planner.adapter, as the worker runs it.)"""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest

from planner.adapter import plan_compute
from planner.outputs.plan_view import CAPEX_EXTRA_CATEGORIES

pytestmark = pytest.mark.django_db

REQUEST = {
    "workload": "training",
    "model": {"preset": "llama-3-8b"},
    "training": {"tokens": 1e12, "gpus": 64},
    "hardware": {"system": "dgx-h100"},
}


@pytest.fixture
def snapshot():
    from pricing.services import price_snapshot_load_fixtures

    return price_snapshot_load_fixtures()


def test_every_part_quoted_moves_the_capex_by_the_quote_range(snapshot):
    first = plan_compute(request_data=REQUEST, price_snapshot=snapshot).result
    quoted = {
        line["part_number"]: float(line["unit_price_usd"])
        for line in first["bom"]
        if line["category"] not in CAPEX_EXTRA_CATEGORIES and line.get("unit_price_usd") is not None
    }
    body = copy.deepcopy(REQUEST)
    body["pricing"] = {"component_prices": quoted}
    result = plan_compute(request_data=body, price_snapshot=snapshot).result
    onprem = result["costs"]["onprem"]
    capex = Decimal(onprem["capex_usd"])
    assert capex == Decimal(first["costs"]["onprem"]["capex_usd"])  # the same prices, now as the user's quotes
    band = onprem["capex_range"]
    # Each line's unit price is rounded to the cent before its quantity multiplies it.
    cents = Decimal("0.01") * (sum(Decimal(str(line["quantity"])) for line in result["bom"]) + len(result["bom"]))
    assert abs(Decimal(band["low_usd"]) - capex * Decimal("0.935")) <= cents
    assert abs(Decimal(band["high_usd"]) - capex * Decimal("1.09")) <= cents
    entry = result["explain"]["costs.onprem.capex_range"]
    assert "18R-97" in entry["source"] and entry["inputs"]["quote_range_percent"] == "-6.5 % / +9 %"
    assert entry["inputs"]["low_usd"] == band["low_usd"] and "/" not in entry["source"].split("(")[0]


def test_a_mixed_bom_lies_between_its_firmest_and_loosest_bases(snapshot):
    """List prices (-10 %/+12.5 %) and assumed prices (wider) mixed: the range is at least the list-price one."""
    onprem = plan_compute(request_data=REQUEST, price_snapshot=snapshot).result["costs"]["onprem"]
    capex, band = Decimal(onprem["capex_usd"]), onprem["capex_range"]
    assert Decimal(band["low_usd"]) <= capex * Decimal("0.935") and Decimal(band["high_usd"]) >= capex * Decimal("1.09")
    assert Decimal(band["low_usd"]) > 0
