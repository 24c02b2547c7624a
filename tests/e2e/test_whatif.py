"""The what-if panel in a real browser: moving the GPU system price past the break-even flips the verdict in
place (through POST /api/plans/{id}/whatif/ with the session and its CSRF token), and moving it back restores it."""

from __future__ import annotations

import copy
import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from planner import services
from planner.adapter import usd_text
from tests.e2e.conftest import ARTEFACTS
from tests.samples import INFERENCE_REQUEST

pytestmark = pytest.mark.django_db(transaction=True)

SYSTEM = "dgx-h100"
SERVING = {
    **copy.deepcopy(INFERENCE_REQUEST),
    "model": {"preset": "llama-3-70b"},
    "inference": {**INFERENCE_REQUEST["inference"], "requests_per_s": 200},
    "hardware": {"system": SYSTEM},
}


def _build_price(plan) -> Decimal:
    """A system price below which building must win, worked out from the plan's own figures as in
    tests/api/test_whatif_api.py: the capital charge alone falls by qty x dp x (1 - 0.1 x 1.08^-5) x 0.08 /
    (1 - 1.08^-5) per year, times the job's share of the cluster's year, and must close the gap to the rent."""
    costs = plan.result["costs"]
    rent = min(
        Decimal(o["job_usd"]) for o in costs["comparison"]["options"] if o["obtainable"] and o["choice"] == "rent"
    )
    owned = Decimal(next(o for o in costs["comparison"]["options"] if o["option"] == "onprem_shared")["job_usd"])
    line = next(line for line in plan.result["bom"] if line["category"] == "compute")
    p0, qty = Decimal(line["unit_price_usd"]), Decimal(line["quantity"])
    share = Decimal(plan.result["inference"]["gpus"]) / (
        Decimal(plan.result["cluster"]["gpus"]) * Decimal(costs["onprem"]["utilization"])
    )
    r, discount = Decimal("0.08"), Decimal("1.08") ** -5
    slope = share * qty * (1 - Decimal("0.1") * discount) * r / (1 - discount)
    return ((p0 - (owned - rent) / slope) * Decimal("0.97")).quantize(Decimal(1))


def test_moving_the_system_price_flips_the_verdict_in_place(logged_in, live_server, django_user_model):
    from pricing.services import price_snapshot_load_fixtures

    price_snapshot_load_fixtures()
    page = logged_in
    plan = services.plan_create_synchronous(
        owner=django_user_model.objects.get(username="eve"), request_data=SERVING, name="serving 70B"
    )
    assert plan.result["costs"]["verdict"]["choice"] == "rent"
    page.goto(f"{live_server.url}{plan.get_absolute_url()}")
    choice = page.locator("#whatif-choice")
    assert choice.inner_text() == "rent"
    # The panel's money reads as the rest of the page does (three significant figures: "$840k", "$5.30"), never
    # "$839.10k" beside the summary's "$840k".
    onprem = plan.result["costs"]["onprem"]
    expect(page.locator("#whatif-capex")).to_have_text(usd_text(onprem["capex_usd"]))
    expect(page.locator("#whatif-rate")).to_have_text(usd_text(onprem["usd_per_gpu_hour"]))
    expect(page.locator("#whatif-owned")).to_have_text(usd_text(onprem["job_usd_shared"]))
    expect(page.locator("#whatif-cheapest")).to_have_text(
        usd_text(plan.result["costs"]["comparison"]["cheapest"]["job_usd"])
    )
    field = page.locator(f"input[name='pricing.component_prices.{SYSTEM}']")
    field.fill(str(_build_price(plan)))
    expect(choice).to_have_text("build", timeout=15000)  # CSP forbids eval, so no wait_for_function strings
    assert "(what-if)" in page.locator("#whatif-state").inner_text()
    assert page.locator("#whatif-sentence").inner_text().startswith("Build")
    assert page.locator("#whatif-capex").inner_text().startswith("$")
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.locator("#whatif").screenshot(path=str(ARTEFACTS / "whatif-build.png"))  # the panel (the page is long)

    # The slider moves the same field: dragging the price back up restores renting.
    page.locator(f"#{field.get_attribute('id')}-range").fill(str(int(Decimal(field.get_attribute("data-default")) * 2)))
    expect(choice).to_have_text("rent", timeout=15000)
    expect(page.locator("#whatif-capex")).not_to_have_text(usd_text(onprem["capex_usd"]), timeout=15000)
    for figure in ("#whatif-capex", "#whatif-owned", "#whatif-rate", "#whatif-cheapest"):
        shown = page.locator(figure).inner_text()
        assert len(re.sub(r"\D", "", shown)) <= 3, f"{figure} shows {shown}: more figures than the prices support"

    page.locator("#whatif-reset").click()
    expect(page.locator("#whatif-state")).to_have_text("(as planned)", timeout=15000)
    assert choice.inner_text() == "rent"
