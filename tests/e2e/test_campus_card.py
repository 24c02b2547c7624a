"""A build larger than one data hall: the plan page shows its halls, buildings and the longest runs (issue 17)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.django_db(transaction=True)


def test_campus_card_in_the_browser(logged_in, live_server, shot):
    page = logged_in
    page.goto(f"{live_server.url}/plans/new/")
    page.get_by_label("Workload").select_option("capacity")
    page.get_by_label("System").select_option("gb200-nvl72")
    # 50 MW of facility power is about 41 MW of IT load: more than one 32 MW hall.
    page.get_by_label("Facility power limit (MW)").fill("50")
    page.get_by_label("Name").fill("GB200 in 50 MW")
    page.get_by_role("button", name="Plan it").click()
    expect(page.locator("#run-status")).to_have_text("Succeeded", timeout=60_000)
    page.reload()
    card = page.locator("#campus")
    expect(card).to_contain_text("2 data halls in 1 building")
    expect(card).to_contain_text("Hall to hall")
    card.scroll_into_view_if_needed()
    shot("campus-card")
    card.screenshot(path=str(shot("campus-card").with_name("campus-card-only.png")))
