"""A capacity plan in a real browser: the model hides, the envelope fields plan the largest cluster inside them,
and the plan page names the binding limit."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.django_db(transaction=True)


def test_capacity_plan_in_the_browser(logged_in, live_server, shot):
    page = logged_in
    page.goto(f"{live_server.url}/plans/new/")
    page.get_by_label("Workload").select_option("capacity")
    expect(page.get_by_label("Model")).to_be_hidden()
    expect(page.get_by_label("Tokens to train")).to_be_hidden()
    page.get_by_label("System").select_option("gb200-nvl72")
    page.get_by_label("Facility power limit (MW)").fill("5")
    page.get_by_label("Name").fill("GB200 in 5 MW")
    shot("capacity-form")
    page.get_by_role("button", name="Plan it").click()
    expect(page.get_by_role("heading", name="GB200 in 5 MW")).to_be_visible()
    expect(page.locator("#run-status")).to_have_text("Succeeded", timeout=30_000)
    page.reload()
    card = page.locator("#envelope")
    expect(card).to_contain_text("Binding limit")
    expect(card).to_contain_text("(binding)")
    shot("capacity-result")
