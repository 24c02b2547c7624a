"""The second polish round, in a real browser at 1440 and 390 px: "Systems considered" a buyer can scan (the
deciding columns fit, the rest one tick away), the cloud options table without a column off-screen, price
warnings a reader can scan, and the quotes form laid out like the other forms."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.test_plan_page import OVERFLOW_JS

pytestmark = pytest.mark.django_db(transaction=True)

AUTO_70B = {
    "workload": "training",
    "model": {"preset": "llama-3-70b"},
    "training": {"tokens": 15e12, "deadline_days": 90},
    "hardware": {"system": "auto"},
    "pricing": {"years": 3, "regions": ["us-east-1", "us-west-2"]},
}
# How far a table runs past the visible part of its scroller (0 when it fits).
TABLE_OVERRUN_JS = """
(selector) => {
  const table = document.querySelector(selector);
  const box = table.closest(".table-scroll");
  return table.getBoundingClientRect().width - box.clientWidth;
}
"""


@pytest.fixture
def auto_plan(logged_in, live_server, django_user_model):
    from planner.services import plan_create_synchronous
    from pricing.services import price_snapshot_load_fixtures

    price_snapshot_load_fixtures()
    owner = django_user_model.objects.get(username="eve")
    plan = plan_create_synchronous(owner=owner, request_data=AUTO_70B, name="70B auto")
    return f"{live_server.url}/plans/{plan.pk}/"


def test_systems_considered_fits_and_shows_more_columns_on_demand(logged_in, auto_plan, shot):
    page = logged_in
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(auto_plan, wait_until="domcontentloaded")
        card = page.locator("#systems-considered")
        card.scroll_into_view_if_needed()
        shot(f"polish-candidates-{width}")
        assert page.evaluate(TABLE_OVERRUN_JS, "table.candidates") <= 1, f"Systems considered scrolls at {width} px"
        heads = card.locator("thead th:visible").all_inner_texts()
        assert [h.split("\n")[0].strip() for h in heads][:2] == ["System", "GPUs"] and len(heads) == 5, heads
        expect(card.locator("tbody tr.chosen th")).to_have_text("NVIDIA GB200 NVL72 rack")
        assert page.evaluate(OVERFLOW_JS) == [], f"at {width} px"
    # the other figures are one tick away, in the same table
    page.set_viewport_size({"width": 1440, "height": 900})
    # a BOM part number is one unbroken line (it wrapped at its hyphen: "MSN2201-" / "CB2FC")
    broken = page.locator("table.bom td code").evaluate_all(
        "(els) => els.filter((el) => el.getClientRects().length > 1).map((el) => el.textContent)"
    )
    assert broken == [], broken
    mfu = page.locator("#systems-considered thead th", has_text="MFU")
    expect(mfu).to_be_hidden()
    page.get_by_label("More columns", exact=False).check()
    expect(mfu).to_be_visible()
    shot("polish-candidates-all-columns-1440")


def test_quotes_form_reads_like_the_other_forms_and_shows_errors_beside_the_field(logged_in, live_server, shot):
    page = logged_in
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/quotes/", wait_until="domcontentloaded")
        page.get_by_label("Vendor").fill("Acme Networks")
        page.get_by_label("Reference").fill("Q-2026-117")
        page.get_by_label("Quoted on").fill("2026-11-20")
        page.get_by_label("Quote file").set_input_files(
            files=[{"name": "bad.csv", "mimeType": "text/csv", "buffer": b"part_number,unit_price_usd\nzzz,5\n"}]
        )
        page.get_by_role("button", name="Upload quote").click()
        error = page.locator(".field.has-error .error")
        expect(error).to_contain_text("row 2, column part_number")
        shot(f"polish-quotes-{width}")
        # the error sits under its own input, inside the form's card, and nothing runs off the page
        field = page.locator(".field.has-error input[type=file]").bounding_box()
        box = error.first.bounding_box()
        assert box["y"] >= field["y"] + field["height"] - 1 and box["x"] >= field["x"] - 1
        assert page.evaluate(OVERFLOW_JS) == [], f"at {width} px"
        expect(page.get_by_label("Vendor")).to_have_value("Acme Networks")


def test_cloud_options_fit_1440_and_read_as_cards_on_a_phone(logged_in, auto_plan, shot):
    page = logged_in
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(auto_plan, wait_until="domcontentloaded")
    assert page.evaluate(TABLE_OVERRUN_JS, "table.cloud") <= 1, "the cloud table runs past its card at 1440 px"
    # every column heading is inside the visible card, the notes are lines under their rows
    box = page.locator("table.cloud").evaluate("(t) => t.closest('.table-scroll').getBoundingClientRect().right")
    rights = page.locator("table.cloud thead th").evaluate_all(
        "(ths) => ths.map((th) => th.getBoundingClientRect().right)"
    )
    assert max(rights) <= box + 1
    note = page.locator("table.cloud tr.cloud-note", has_text="interruptions over the job").first
    expect(note).to_be_visible()
    page.locator("table.cloud").scroll_into_view_if_needed()
    shot("polish-cloud-1440")
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(auto_plan, wait_until="domcontentloaded")
    expect(page.locator("table.cloud thead")).to_be_hidden()
    first = page.locator("table.cloud tr.cloud-row").first
    first.scroll_into_view_if_needed()
    shot("polish-cloud-390")
    for table in ("table.cloud", "#options", "#break-even", "#sensitivity", "#carbon", "table.figures"):
        assert page.evaluate(TABLE_OVERRUN_JS, table) <= 1, f"{table} scrolls sideways at 390 px"
    assert page.evaluate(OVERFLOW_JS) == []
    # each value keeps its label on a phone
    labels = first.locator("td").evaluate_all("(tds) => tds.map((td) => getComputedStyle(td, '::before').content)")
    assert '"Job cost"' in labels and '"Instance"' in labels
