"""The verdict is one field of the stored plan (`costs.verdict`): the page, the PDF and the API show the same
sentence and figures, none re-derives them."""

from __future__ import annotations

import copy
import html
import io
import re
from decimal import Decimal
from functools import cache

import pytest
from django.urls import reverse
from pypdf import PdfReader
from rest_framework.test import APIClient

from planner import services
from planner.adapter import usd_text
from tests.samples import TRAINING_REQUEST

pytestmark = pytest.mark.django_db


def _words(text: str) -> str:
    """Text with every run of whitespace as one space, and none after a hyphen (PDF extraction breaks lines where
    the layout does, also after the hyphen of "GPU-hour")."""
    return re.sub(r"-\s+", "-", re.sub(r"\s+", " ", text)).strip()


@pytest.fixture(scope="module")
def _shared_plan(django_db_setup, django_db_blocker):
    """Alice and one priced plan, made once for this module's tests, which only read them: planning and rendering
    the report (kept by the report cache after the first download) are the costly part. Made inside a transaction
    rolled back after the module's last test (each test's own changes roll back to a savepoint inside it), so no
    other test sees them."""
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.test import TestCase

    from pricing.services import price_snapshot_load_fixtures

    with django_db_blocker.unblock(), transaction.atomic():
        user = get_user_model().objects.create_user(username="alice", password="correct-horse-battery")
        price_snapshot_load_fixtures()
        with TestCase.captureOnCommitCallbacks(execute=True):
            plan = services.plan_create(owner=user, request_data=copy.deepcopy(TRAINING_REQUEST), name="verdict")
        yield user, plan
        transaction.set_rollback(True)


@pytest.fixture
def user(_shared_plan):
    return _shared_plan[0]


@pytest.fixture
def priced_plan(_shared_plan):
    plan = _shared_plan[1]
    plan.refresh_from_db()
    return plan


@cache
def _pdf_text(pdf: bytes) -> str:
    """The PDF's text with _words' spacing; the same report bytes are read once."""
    return _words(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages))


def test_verdict_is_identical_in_page_pdf_and_api(alice_client, user, priced_plan):
    api = APIClient()
    api.force_authenticate(user)
    stored = api.get(f"/api/plans/{priced_plan.pk}/").json()["result"]["costs"]["verdict"]
    sentence = stored["sentence"]
    assert stored["choice"] in ("build", "rent") and sentence.startswith(stored["choice"].capitalize() + ":")
    # the figures the sentence names are the stored ones
    # money as people read it: three significant figures ($56.9M), the one rule of engine/costing/money.py
    assert usd_text(Decimal(stored["job_usd"])) in sentence and stored["option"] in sentence
    assert stored["runner_up"] is not None and stored["runner_up"]["label"] in sentence

    page = alice_client.get(reverse("planner:plan_detail", args=[priced_plan.pk])).content.decode()
    shown = re.search(r'<p class="verdict-sentence">(.*?)</p>', page, re.S)
    assert shown is not None
    assert html.unescape(shown.group(1)).strip() == sentence

    pdf = alice_client.get(reverse("planner:plan_report_pdf", args=[priced_plan.pk])).content
    text = _pdf_text(pdf)
    assert _words(sentence) in text


def test_onprem_job_cost_tco_and_npv_are_one_labelled_figure_everywhere(alice_client, user, priced_plan):
    """Issue 14: the page once said the on-prem job cost one figure and the PDF another (shared cluster vs bought
    outright). Both now show both, labelled, with the stored figures the API serves."""
    api = APIClient()
    api.force_authenticate(user)
    onprem = api.get(f"/api/plans/{priced_plan.pk}/").json()["result"]["costs"]["onprem"]
    shared, bought = Decimal(onprem["job_usd_shared"]), Decimal(onprem["job_usd"])
    tco, npv = Decimal(onprem["tco_usd"]), Decimal(onprem["finance"]["npv_usd"])
    assert bought > shared  # buying for one job pays the capex less resale; the owned cluster charges its share

    page = _words(html.unescape(alice_client.get(priced_plan.get_absolute_url()).content.decode()))
    for label, value in (
        ("Job cost on the owned cluster", shared),
        ("Bought for this job alone", bought),
        ("(nominal)", tco),
    ):
        assert re.search(re.escape(label) + r".{0,200}?" + re.escape(usd_text(value)), page), label
    assert f"NPV of owning over {onprem['years']} years: {usd_text(npv)}" in page

    pdf = alice_client.get(reverse("planner:plan_report_pdf", args=[priced_plan.pk])).content
    text = _pdf_text(pdf)
    assert f"Job cost on the owned cluster (GPU-hours x cost per GPU-hour) {usd_text(shared)}" in text
    assert f"Bought for this job alone (capex + running costs \u2212 resale) {usd_text(bought)}" in text
    assert f"TCO over {onprem['years']} years (nominal) {usd_text(tco)}" in text
    assert f"NPV of owning over {onprem['years']} years {usd_text(npv)}" in text


def test_price_warnings_lead_with_a_headline_and_keep_the_full_text_on_the_page_and_in_the_pdf(
    alice_client, priced_plan
):
    """Each warning is a short line a reader scans (provider, what is wrong) with its full sentence one click away
    on the page, and the headline in bold before the sentence in the PDF."""
    costs = priced_plan.result["costs"]
    warnings, headlines = costs["price_warnings"], costs["price_warning_headlines"]
    assert warnings and len(headlines) == len(warnings)
    for headline, warning in zip(headlines, warnings, strict=True):
        provider = headline.split(":")[0]
        assert warning.startswith(provider + " ") and len(headline) < len(warning) / 2
        assert re.search(r"(days old|assumption)", headline)
    page = alice_client.get(priced_plan.get_absolute_url()).content.decode()
    block = page[page.index('id="price-warnings"') : page.index("</div>", page.index('id="price-warnings"'))]
    pairs = re.findall(r"<details><summary>(.*?)</summary><p class=\"hint\">(.*?)</p></details>", block, flags=re.S)
    assert [(h, w) for h, w in pairs] == [
        (html.escape(h), html.escape(w)) for h, w in zip(headlines, warnings, strict=True)
    ]
    pdf = alice_client.get(reverse("planner:plan_report_pdf", args=[priced_plan.pk])).content
    text = _pdf_text(pdf)
    for headline, warning in zip(headlines, warnings, strict=True):
        assert _words(f"{headline}. {warning}") in text


def test_a_plan_stored_before_headlines_shows_the_opening_words_as_its_headline():
    from planner.outputs.formatting import price_warning_items

    old = "AWS prices older than 180 days (the cost parameter for stale cloud prices): p5.48xlarge ... rows."
    assumed = "RunPod assumptions, not published prices: 8 x H100 SXM5 80GB on-demand. Refresh or replace them."
    items = price_warning_items([old, assumed], None)
    assert [i["headline"] for i in items] == [
        "AWS prices older than 180 days",
        "RunPod assumptions, not published prices",
    ]
    assert [i["text"] for i in items] == [old, assumed]


def test_a_neocloud_contract_reads_as_a_contract_and_time_to_capacity_has_one_parenthesis(alice_client, priced_plan):
    """The verdict and the options call a neocloud's reserved term a contract; the cloud and break-even tables said
    "3-year reserved" for the same row. Time to capacity named the bounding part class inside a parenthesis that
    itself ended in one ("(NVIDIA GB200 NVL72 rack (rack-scale systems))")."""
    raw = alice_client.get(priced_plan.get_absolute_url()).content.decode()
    contracts = [r for r in priced_plan.result["costs"]["cloud"] if r.get("provider") == "contract"]
    assert contracts and all(r["purchase"].startswith("reserved_") for r in contracts)
    cell = r'<td data-label="Provider">Neocloud contract</td>.*?<td data-label="Purchase">(.*?)</td>'
    terms = re.findall(cell, raw, flags=re.S)
    assert len(terms) >= len(contracts) and all(t.endswith("-year contract") for t in terms), terms
    page = _words(html.unescape(re.sub(r"<[^>]+>", " ", raw)))
    assert re.search(r"days of procurement, set by the lead time of the [^()]+( \([^()]+\))?, \d+ days of build", page)


def test_break_even_cells_say_on_which_side_owning_is_cheaper(alice_client, priced_plan):
    """Against pay-per-use, owning wins above its break-even; against a term paid whatever the use, below it (the
    term's price does not grow with use, owning's energy does). Each row's cell names its own side, as the
    comparison stores it, on the page and in the PDF."""
    rows = priced_plan.result["costs"]["comparison"]["break_even"]
    sides = {row["onprem_cheaper"] for row in rows if row["break_even_utilization"] is not None}
    assert sides <= {"above", "below"} and sides
    raw = alice_client.get(priced_plan.get_absolute_url()).content.decode()
    table = raw[raw.index('id="break-even"') :]
    table = table[: table.index("</table>")]
    for side in sides:
        assert f"owning cheaper {side} " in table, side
    assert "busier than this share" not in raw


def test_the_report_lists_its_sections_with_the_page_each_starts_on(alice_client, priced_plan):
    """A 40-odd-page report: its first page lists the sections, each with the page its heading is on, read back
    from the PDF's own pages (the bill of materials had to be found by leafing through the option tables)."""
    pdf = alice_client.get(reverse("planner:plan_report_pdf", args=[priced_plan.pk])).content
    pages = [_words(p.extract_text()) for p in PdfReader(io.BytesIO(pdf)).pages]
    assert "Contents" in pages[0]
    for heading in ("Build or rent: costs and options", "Bill of materials", "How each figure was derived"):
        # the first page after the contents whose text holds the heading (the contents itself is on page 1)
        on = next(i for i, text in enumerate(pages[1:], start=2) if heading in text)
        assert re.search(re.escape(heading) + r"[ .]*" + str(on) + r"\b", pages[0]), (heading, on)
