"""The main loop in a real browser: log in, plan from a preset, watch it finish, read the result;
a bad number shows a field error."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.django_db(transaction=True)


def test_plan_from_preset(logged_in, live_server, shot):
    page = logged_in
    expect(page.get_by_role("heading", name="My plans")).to_be_visible()
    page.get_by_role("link", name="New plan").first.click()
    shot("new-plan")
    page.get_by_label("Model").select_option("llama-3-8b")
    page.get_by_label("Tokens to train").fill("2e12")
    page.get_by_label("Deadline (days)").fill("30")
    page.get_by_label("System").select_option("dgx-h100")
    page.get_by_label("Name").fill("8B on H100 in a month")
    page.get_by_role("button", name="Plan it").click()
    expect(page.get_by_role("heading", name="8B on H100 in a month")).to_be_visible()
    expect(page.locator("#run-status")).to_have_text("Succeeded", timeout=20_000)
    expect(page.get_by_text("How each figure was derived")).to_be_visible()
    # The system by its catalog name, never its id.
    expect(page.locator("section.card", has_text="Cluster").first).to_contain_text("NVIDIA DGX H100")
    # The frontier chart is drawn by the locally served plotly.js (no CDN).
    expect(page.locator("#chart-frontier .main-svg").first).to_be_visible()
    expect(page.locator("#chart-frontier")).to_contain_text("Time to train vs GPUs")
    # Server-side SVG diagrams: the fabric by tier and the rack elevations.
    expect(page.locator("#diagram-topology svg")).to_contain_text("leaf")
    expect(page.locator("#diagram-racks svg")).to_contain_text("Compute x")
    shot("plan-result")
    page.get_by_role("link", name="My plans").click()
    expect(page.get_by_role("link", name="8B on H100 in a month")).to_be_visible()


def test_bad_input_shows_field_error(logged_in, live_server):
    page = logged_in
    page.goto(f"{live_server.url}/plans/new/")
    page.get_by_label("Tokens to train").fill("-5")
    page.get_by_role("button", name="Plan it").click()
    error = page.locator(".field.has-error", has=page.get_by_label("Tokens to train"))
    expect(error).to_contain_text("training.tokens must be > 0")
