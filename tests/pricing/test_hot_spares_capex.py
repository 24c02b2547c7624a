"""The hot spares of an elastic-recovery build are bought: a BOM line priced like the systems, in the capex, and
paid for by the working GPUs' hours (spares run no work).

Hand figures: 16,384 GPUs of DGX H100 = 2,048 systems; 15 spares (tests/engine/test_hot_spares.py works the
Poisson p99 of 2,048 x 24 h / 6,335 h = 7.76 systems down); the DGX H100 reference price is $270,000
(SemiAnalysis, May 2023: fixtures/prices/components.json), so the spares' line is 15 x 270,000 = $4,050,000.00.
"""

from __future__ import annotations

import functools
import json
from decimal import Decimal

from engine import load_catalog, run_plan, validate_request
from engine.costing import plan_costs
from engine.costing.onprem import EXTRA_CATEGORIES
from planner.adapter import cost_inputs
from pricing.references import price_references_load
from tests.samples import elastic_16k_request


@functools.cache
def _priced(checkpointing: str) -> dict:
    catalog = load_catalog()
    plan = run_plan(validate_request(elastic_16k_request(checkpointing), catalog), catalog)
    return json.loads(json.dumps(plan_costs(plan, cost_inputs(price_references_load())).to_json()))


def test_the_spares_line_is_priced_like_the_systems_and_counted_in_capex():
    plan = _priced("elastic")
    system, spares = [line for line in plan["bom"] if line["category"] == "compute"]
    assert (system["quantity"], spares["quantity"]) == (2048, 15)
    assert spares["unit_price_usd"] == system["unit_price_usd"] == "270000.00"
    assert spares["extended_price_usd"] == "4050000.00"
    onprem = plan["costs"]["onprem"]
    # Hardware = every priced hardware line, the spares' included (the capex lines beyond it come after).
    hardware = [Decimal(x["extended_price_usd"]) for x in plan["bom"] if x["category"] not in EXTRA_CATEGORIES]
    assert Decimal(onprem["hardware_usd"]) == sum(hardware)
    assert Decimal(onprem["capex_usd"]) == sum(Decimal(x["extended_price_usd"]) for x in plan["bom"])
    # The spares add at least their own price to the hardware (their racks, ports and cables add more).
    without = _priced("asynchronous")["costs"]["onprem"]
    assert Decimal(onprem["hardware_usd"]) - Decimal(without["hardware_usd"]) >= Decimal("4050000.00")


def test_the_cost_per_gpu_hour_is_over_the_working_gpus():
    # 2,063 systems x 8 = 16,504 GPUs installed; 120 of them spares, so 16,384 deliver GPU-hours.
    plan = _priced("elastic")
    entry = plan["explain"]["costs.onprem.usd_per_gpu_hour"]
    assert entry["inputs"]["gpus"] == 16_384
