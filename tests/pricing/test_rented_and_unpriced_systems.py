"""Plans on systems without a buyable price: no on-prem total, and a rented plan compares its own instance type.

An HGX H800 server has no public price (export-market part): a capex that summed the switches and cables but not
the servers would be off by most of the bill, so on-prem cost is not computed and the note says why. A p5.48xlarge
plan rents p5.48xlarge: its cloud rows are that instance type, priced from the fixture snapshot.
"""

from __future__ import annotations

import pytest


def _plan(system: str) -> dict:
    from planner.adapter import plan_compute
    from pricing.services import price_snapshot_load_fixtures

    body = {"workload": "training", "model": {"preset": "llama-3-8b"}, "training": {"tokens": 1e11, "gpus": 64},
            "hardware": {"system": system}}  # fmt: skip
    return plan_compute(request_data=body, price_snapshot=price_snapshot_load_fixtures()).result


@pytest.mark.django_db
def test_an_unpriced_server_gives_no_onprem_total():
    plan = _plan("hgx-h800")
    onprem = plan["costs"]["onprem"]
    assert onprem["capex_usd"] is None and onprem["tco_usd"] is None
    notes = " ".join(plan["costs"]["coverage"]["notes"])
    assert "has no sourced price: on-prem cost is not computed" in notes
    # The BOM is still listed, with its priced network lines and the unpriced server line.
    server = next(line for line in plan["bom"] if line["category"] == "compute")
    assert server["catalog_id"] == "hgx-h800" and server["unit_price_usd"] is None


@pytest.mark.django_db
def test_a_rented_plan_prices_its_instance_type():
    plan = _plan("aws-p5")
    assert plan["costs"]["onprem"]["capex_usd"] is None and "bom" not in plan
    aws_types = {row["instance_type"] for row in plan["costs"]["cloud"] if row["provider"] == "aws"}
    assert "p5.48xlarge" in aws_types
    # p5 rows price the plan's own sizing; every other AWS instance type is priced for the same job sized on its
    # own rented system (issue 14: same work, not same GPUs) ...
    for row in plan["costs"]["cloud"]:
        if row["instance_type"] == "p5.48xlarge":
            assert row["sized_on"]["system"] == "aws-p5" and row["sized_on"]["chosen"] is True
        elif row["provider"] == "aws":
            assert row["sized_on"]["system"].startswith("aws-") and row["sized_on"]["chosen"] is False
    # ... and the same H100 work is also priced at every other provider that rents H100s, on the plan's sizing.
    others = [row for row in plan["costs"]["cloud"] if row["provider"] != "aws"]
    names = {(row["provider"], row["instance_type"]) for row in others}
    assert ("azure", "Standard_ND96isr_H100_v5") in names and ("gcp", "a3-highgpu-8g") in names
    h100 = [row for row in others if row["sized_on"]["gpu"] == "h100-sxm"]
    assert h100 and all(row["sized_on"]["system"] == "aws-p5" for row in h100)
