"""The what-if panel's fields read back into request overrides: shown units turned into the request's, unchanged
fields left out, the deadline only for "re-plan"."""

from __future__ import annotations

from planner.whatif import DEADLINE, WhatIfField, overrides_from_post

FIELDS = [
    WhatIfField("pricing.utilization", "Utilisation", 0.8, 5, 100, 5, "%", "", scale=100),
    WhatIfField("pricing.component_prices.dgx-h100", "System", 270000.0, 54000, 540000, 1000, "$", ""),
    WhatIfField("pricing.parameters.cost_of_capital", "Capital", 0.08, 0, 30, 0.5, "% a year", "", scale=100),
    WhatIfField("pricing.years", "Horizon", 3.0, 1, 10, 1, "years", ""),
    WhatIfField(DEADLINE, "Deadline", 90.0, 1, 3650, 1, "days", "", resizes=True),
]


def test_shown_units_become_request_units():
    post = {
        "pricing.utilization": "60",  # 60 % -> 0.6
        "pricing.component_prices.dgx-h100": "250000",
        "pricing.parameters.cost_of_capital": "12.5",  # 12.5 % -> 0.125
        "pricing.years": "5",
        DEADLINE: "60",
    }
    assert overrides_from_post(post, FIELDS, deadline=False) == {
        "pricing": {
            "utilization": 0.6,
            "component_prices": {"dgx-h100": 250000.0},
            "parameters": {"cost_of_capital": 0.125},
            "years": 5,
        }
    }
    assert overrides_from_post(post, FIELDS, deadline=True)["training"] == {"deadline_days": 60.0}


def test_unchanged_and_empty_fields_are_left_out_and_text_is_passed_on_for_the_schema_to_name():
    post = {"pricing.utilization": "80", "pricing.years": "", "pricing.parameters.cost_of_capital": "lots"}
    assert overrides_from_post(post, FIELDS, deadline=False) == {"pricing": {"parameters": {"cost_of_capital": "lots"}}}


def test_shown_values_are_plain_numbers_a_person_types():
    # A GB200 NVL72 rack at $3.4M was shown as "3.4e+06" in the price field; 8 % of capital as 8.000000000000002.
    rack = WhatIfField("pricing.component_prices.gb200-nvl72", "Rack", 3_400_000.0, 680_000, 6_800_000, 1000, "$", "")
    assert rack.shown == "3400000"
    assert WhatIfField("p", "Price", 3_456_789.12, 0, 1e7, 1, "$", "").shown == "3456789.12"  # to the cent
    assert FIELDS[0].shown == "80" and FIELDS[2].shown == "8" and FIELDS[3].shown == "3"
    assert WhatIfField("site.electricity_usd_per_kwh", "Power", 0.08, 0, 1, 0.01, "$/kWh", "").shown == "0.08"
    # an untouched field posts back its shown text and is left out, so the plan's value is kept exactly
    assert overrides_from_post({rack.name: "3400000"}, [rack], deadline=False) == {}
