"""In a real browser: download the BOM CSV and the PDF report and check their contents; compare two plans."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from pathlib import Path

import pytest
from playwright.sync_api import expect
from pypdf import PdfReader

from planner.adapter import usd_text

pytestmark = pytest.mark.django_db(transaction=True)


def _plan(page, live_server, *, name: str, preset: str, system: str, deadline: str) -> str:
    page.goto(f"{live_server.url}/plans/new/")
    page.get_by_label("Name").fill(name)
    page.get_by_label("Model").select_option(preset)
    page.get_by_label("Tokens to train").fill("1e12")
    page.get_by_label("Deadline (days)").fill(deadline)
    page.get_by_label("System").select_option(system)
    page.get_by_role("button", name="Plan it").click()
    expect(page.locator("#run-status")).to_have_text("Succeeded", timeout=20_000)
    return page.url


def test_downloads_and_compare(logged_in, live_server, shot):
    from pricing.services import price_snapshot_load_fixtures

    price_snapshot_load_fixtures()
    page = logged_in
    first = _plan(page, live_server, name="8B on H100", preset="llama-3-8b", system="dgx-h100", deadline="20")
    expect(page.locator("#costs")).to_contain_text("Build or rent")
    shot("plan-costs")

    with page.expect_download() as csv_download:
        page.get_by_role("link", name="BOM (CSV)").click()
    rows = list(csv.DictReader(io.StringIO(Path(csv_download.value.path()).read_text(encoding="utf-8"))))
    assert rows[0]["line_no"] == "1" and rows[0]["category"] == "compute" and rows[0]["currency"] == "USD"
    priced = [row for row in rows if row["extended_price"]]
    # Extended price is quantity x unit price, to the cent, on every priced line.
    for row in priced:
        assert Decimal(row["extended_price"]) == (Decimal(row["quantity"]) * Decimal(row["unit_price"])).quantize(
            Decimal("0.01")
        )

    # The report is rendered on this download (seconds of CPU, more on a busy machine): wait as the page test does.
    with page.expect_download(timeout=180_000) as pdf_download:
        page.get_by_role("link", name="Report (PDF)").click(timeout=180_000)
    data = Path(pdf_download.value.path()).read_bytes()
    assert data.startswith(b"%PDF-")
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(data)).pages)
    assert "8B on H100" in text and "Bill of materials" in text
    if len(priced) == len(rows):  # fully priced: the report's total equals the CSV's sum
        total = sum(Decimal(row["extended_price"]) for row in rows)
        assert f"Total ({len(rows)} lines) {usd_text(total)}" in text  # money to 3 significant figures

    second = _plan(page, live_server, name="8B on B200", preset="llama-3-8b", system="dgx-b200", deadline="20")
    first_id, second_id = first.rstrip("/").split("/")[-1], second.rstrip("/").split("/")[-1]
    page.goto(f"{live_server.url}/")
    page.get_by_label("Compare 8B on H100").check()
    page.get_by_label("Compare 8B on B200").check()
    page.get_by_role("button", name="Compare selected").click()
    page.wait_for_url("**/plans/compare/**")
    assert {first_id, second_id} == set(page.url.split("ids=")[1].replace("%2C", ",").split(","))
    table = page.locator("table.compare")
    expect(table).to_contain_text("NVIDIA DGX H100")
    expect(table).to_contain_text("NVIDIA DGX B200")
    shot("compare")
