"""What a demanding reader tripped on in the review round, in a real browser: the plan list, compare and prices pages
scrolling sideways on a phone, a refused system's reason clipped in "Systems considered", a liquid-cooled plan's
CDU name running out of its card, an infeasible plan's empty sections, a catalog id in the plan list, the what-if
price field in exponent form, and cloud instance ids without the hardware they are."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.test_plan_page import OVERFLOW_JS

pytestmark = pytest.mark.django_db(transaction=True)

# Llama 3 405B on 15T tokens in one day on DGX H100: no cluster can (the global batch caps data parallelism).
INFEASIBLE = {
    "workload": "training",
    "model": {"preset": "llama-3-405b"},
    "training": {"tokens": 15e12, "deadline_days": 1},
    "hardware": {"system": "dgx-h100"},
}
# A small liquid-cooled plan: one GB200 NVL72 rack (a CDU, the cooling card's longest value).
LIQUID = {
    "workload": "training",
    "model": {"preset": "llama-3-8b"},
    "training": {"tokens": 1e11, "gpus": 72},
    "hardware": {"system": "gb200-nvl72"},
}
AIR = {
    "workload": "training",
    "model": {"preset": "llama-3-8b"},
    "training": {"tokens": 1e12, "deadline_days": 20},
    "hardware": {"system": "dgx-h100"},
}
SIDEWAYS_JS = "() => document.documentElement.scrollWidth - window.innerWidth"
# Each refused system's reason (its own full-width row under the system in "Systems considered") whose text runs
# past its cell or past the visible part of the table's scroller.
CLIPPED_REASONS_JS = """
() => {
  const table = document.querySelector("table.candidates");
  const cells = [...table.querySelectorAll("tbody tr.why td")];
  const box = table.closest(".table-scroll").getBoundingClientRect();
  const clipped = cells.filter((td) => {
    const cell = td.getBoundingClientRect();
    return td.scrollWidth > td.clientWidth + 1 || cell.right > box.right + 1;
  });
  return [cells.length, ...clipped.map((td) => td.textContent.slice(0, 60))];
}
"""


@pytest.fixture
def plans(logged_in, django_user_model):
    from planner.services import plan_create_synchronous
    from pricing.services import price_snapshot_load_fixtures

    price_snapshot_load_fixtures()
    owner = django_user_model.objects.get(username="eve")
    made = {
        name: plan_create_synchronous(owner=owner, request_data=request, name=name)
        for name, request in (("405B in a day", INFEASIBLE), ("8B on one GB200 rack", LIQUID), ("8B on H100", AIR))
    }
    return {name: plan.pk for name, plan in made.items()}


def test_list_compare_and_prices_do_not_scroll_sideways_on_a_phone(logged_in, live_server, plans, shot):
    page = logged_in
    page.set_viewport_size({"width": 390, "height": 900})
    ids = ",".join(str(pk) for pk in plans.values())
    for path in ("/", f"/plans/compare/?ids={ids}", "/prices/"):
        page.goto(f"{live_server.url}{path}", wait_until="domcontentloaded")
        shot(f"review-{path.strip('/').split('/')[-1].split('?')[0] or 'list'}-390")
        assert page.evaluate(SIDEWAYS_JS) <= 1, f"{path} scrolls sideways at 390 px"
    # the infeasible plan's reason in the list names the product, not the catalog id
    page.goto(f"{live_server.url}/", wait_until="domcontentloaded")
    reason = page.locator(".status-reason").first
    expect(reason).to_contain_text("NVIDIA DGX H100: global batch")
    assert "dgx-h100" not in reason.inner_text()


def test_infeasible_plan_reads_whole_and_says_why_sections_are_empty(logged_in, live_server, plans, shot):
    page = logged_in
    url = f"{live_server.url}/plans/{plans['405B in a day']}/"
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(url, wait_until="domcontentloaded")
        shot(f"review-infeasible-{width}")
        reasons, *clipped = page.evaluate(CLIPPED_REASONS_JS)
        assert reasons >= 1 and clipped == [], f"a reason is clipped at {width} px: {clipped}"
        assert page.evaluate(OVERFLOW_JS) == [], f"at {width} px"
    expect(page.locator("#network .empty-section")).to_contain_text("No cluster was sized")
    expect(page.locator("#facility .empty-section")).to_contain_text("no power or cooling")


def test_liquid_cooled_plan_cards_hold_their_text_and_prices_read_as_numbers(logged_in, live_server, plans, shot):
    page = logged_in
    url = f"{live_server.url}/plans/{plans['8B on one GB200 rack']}/"
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(url, wait_until="domcontentloaded")
    expect(page.locator("#stage-cooling")).to_contain_text("coolant distribution unit")
    shot("review-liquid-1440")
    assert page.evaluate(OVERFLOW_JS) == []
    # the what-if system price is typed as a person types it: 3400000, not 3.4e+06
    values = page.locator(".whatif-field input[type=number]").evaluate_all("(els) => els.map((e) => e.value)")
    assert values and not [v for v in values if "e" in v.lower()], values
    # every cloud instance id comes with what it is; the break-even table also says whose it is
    cloud = page.locator("table.cloud tbody td:nth-child(3)").all_inner_texts()
    assert cloud and all("(" in text and " x " in text for text in cloud), cloud[:5]
    aws = [text for text in cloud if text.startswith("p5.48xlarge")]
    assert aws and aws[0] == "p5.48xlarge (8 x H100 SXM5 80GB)"
    expect(page.locator("#break-even thead")).to_contain_text("Provider")
