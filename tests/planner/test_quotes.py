"""Vendor quotes (issue 14): an uploaded quote overrides the catalog's prices in its owner's plans only, shown as
"quote" in the BOM with who/when/source; every bad row is refused with its row and column; owner-only."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from planner import services
from planner.adapter import price_key_known
from planner.models import VendorQuote
from planner.quotes import QuoteInvalid, parse_quote

BODY = {
    "workload": "training",
    "model": {"preset": "llama-3-8b"},
    "training": {"tokens": 1e11, "gpus": 64},
    "hardware": {"system": "dgx-h100"},
    "pricing": {"years": 3, "regions": ["us-east-1"]},
}
GOOD = b'part_number,description,unit_price_usd,currency\r\nMQM9700-NS2F,QM9700 (quoted),"41,234.565",USD\r\n'


def _known(key: str) -> bool:
    return key in {"MQM9700-NS2F", "qm9700", "dgx-h100"}


# ------------------------------------------------------------------------------------------------ the parser


def test_a_good_csv_gives_its_rows():
    (row,) = parse_quote(GOOD, "quote.csv", _known)
    assert (row.row, row.part, row.unit_price_usd, row.description) == (
        2,
        "MQM9700-NS2F",
        Decimal("41234.565"),
        "QM9700 (quoted)",
    )


def test_every_bad_row_is_named_by_row_and_column():
    text = (
        "Catalog_ID,Unit_Price_USD,Currency\n"
        "qm9700,-3,USD\n"
        "nope,100,USD\n"
        "dgx-h100,abc,USD\n"
        "qm9700,10,EUR\n"
        ",,\n"  # a blank line is skipped
    )
    with pytest.raises(QuoteInvalid) as info:
        parse_quote(text.encode(), "q.csv", _known)
    errors = info.value.errors
    assert "row 2, column unit_price_usd: must be a positive price in USD" in errors
    assert any(e.startswith("row 3, column catalog_id: 'nope' is neither") for e in errors)
    assert "row 4, column unit_price_usd: 'abc' is not a number" in errors
    assert any(e.startswith("row 5, column currency: only USD") for e in errors)
    assert len(errors) == 4


def test_missing_columns_duplicates_and_empty_files_are_refused():
    with pytest.raises(QuoteInvalid, match="row 1: no unit_price_usd column"):
        parse_quote(b"part_number,price\nqm9700,1\n", "q.csv", _known)
    with pytest.raises(QuoteInvalid, match=r"row 3, column part_number: 'qm9700' is quoted twice \(rows 2 and 3\)"):
        parse_quote(b"part_number,unit_price_usd\nqm9700,1\nqm9700,2\n", "q.csv", _known)
    with pytest.raises(QuoteInvalid, match="the file is empty"):
        parse_quote(b"", "q.csv", _known)
    with pytest.raises(QuoteInvalid, match="not UTF-8"):
        parse_quote(b"\xff\xfe\x00", "q.csv", _known)
    with pytest.raises(QuoteInvalid, match="not readable CSV"):
        parse_quote(b'part_number,unit_price_usd\n"' + b"x" * 200_000 + b'",1\n', "q.csv", _known)


def test_xlsx_needs_openpyxl_or_says_so():
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        with pytest.raises(QuoteInvalid, match="upload the quote as CSV"):
            parse_quote(b"PK\x03\x04", "q.xlsx", _known)
    else:
        with pytest.raises(QuoteInvalid, match="not a readable XLSX"):
            parse_quote(b"not a zip", "q.xlsx", _known)


# ------------------------------------------------------------------------------------------------ end to end


@pytest.fixture
def prices():
    from pricing.services import price_snapshot_load_fixtures

    return price_snapshot_load_fixtures()


def _qm(plan) -> dict:
    return {line["part_number"]: line for line in plan.result["bom"]}["MQM9700-NS2F"]


@pytest.mark.django_db
def test_an_uploaded_quote_prices_its_owners_plans_only(alice_client, user, other_user, prices):
    assert price_key_known("MQM9700-NS2F") and not price_key_known("MQM9700")
    upload = SimpleUploadedFile("acme.csv", GOOD, content_type="text/csv")
    form = {"vendor": "Acme Networks", "reference": "Q-2026-117", "quoted_on": "2026-11-20", "file": upload}
    response = alice_client.post(reverse("planner:quote_list"), form)
    assert response.status_code == 302
    quote = VendorQuote.objects.get(owner=user)
    assert quote.lines.get().unit_price_usd == Decimal("41234.57")  # to the cent, half up

    mine = services.plan_create_synchronous(owner=user, request_data=BODY, name="quoted")
    line = _qm(mine)
    assert (line["unit_price_usd"], line["price_basis"], line["price_confidence"]) == ("41234.57", "quote", "quote")
    assert "Acme Networks" in line["price_source"] and "Q-2026-117" in line["price_source"]
    assert "alice" in line["price_source"] and line["price_as_of"] == "2026-11-20"
    assert Decimal(line["extended_price_usd"]) == line["quantity"] * Decimal("41234.57")
    # the BOM still ties to capex to the cent with the odd-cent quote
    total = sum(Decimal(x["extended_price_usd"]) for x in mine.result["bom"])
    assert total == Decimal(mine.result["costs"]["onprem"]["capex_usd"])

    theirs = services.plan_create_synchronous(owner=other_user, request_data=BODY, name="catalog")
    assert _qm(theirs)["unit_price_usd"] == "50000.00" and _qm(theirs)["price_basis"] == "public_estimate"

    # a price in the plan's own request wins over the quote; a switched-off quote prices nothing
    body = {**BODY, "pricing": {**BODY["pricing"], "component_prices": {"qm9700": 45000}}}
    assert _qm(services.plan_create_synchronous(owner=user, request_data=body))["price_basis"] == "user_override"
    alice_client.post(reverse("planner:quote_active", args=[quote.pk]), {"active": "0"})
    assert _qm(services.plan_create_synchronous(owner=user, request_data=BODY))["price_basis"] == "public_estimate"


@pytest.mark.django_db
def test_a_bad_upload_lists_its_rows_and_stores_nothing(alice_client, user):
    bad = SimpleUploadedFile("bad.csv", b"part_number,unit_price_usd\nMQM9700-NS2F,=1+1\nzzz,5\n")
    form = {"vendor": "Acme", "reference": "Q1", "quoted_on": "2026-11-20", "file": bad}
    response = alice_client.post(reverse("planner:quote_list"), form)
    assert response.status_code == 400
    page = response.content.decode()
    assert "row 2, column unit_price_usd" in page and "row 3, column part_number" in page
    assert not VendorQuote.objects.exists()


@pytest.mark.django_db
def test_quotes_are_owner_only(client, user, other_user):
    quote = VendorQuote.objects.create(owner=user, vendor="Acme", reference="Q1", quoted_on="2026-11-20")
    client.force_login(other_user)
    assert client.post(reverse("planner:quote_active", args=[quote.pk]), {"active": "0"}).status_code == 404
    assert "Acme" not in client.get(reverse("planner:quote_list")).content.decode()
    quote.refresh_from_db()
    assert quote.active


@pytest.mark.django_db
def test_the_quote_form_is_laid_out_like_the_other_forms_with_each_error_beside_its_field(alice_client, user):
    """Labels tied to inputs, help text under each, a date picker, a file chooser for CSV/XLSX, the CSRF token, and
    a bad file's row errors inside the file field's own block (not in a list at the top of the form)."""
    import re

    page = alice_client.get(reverse("planner:quote_list")).content.decode()
    assert 'name="csrfmiddlewaretoken"' in page
    for name, label in (
        ("vendor", "Vendor"),
        ("reference", "Reference"),
        ("quoted_on", "Quoted on"),
        ("file", "Quote file"),
    ):
        assert re.search(rf'<p class="field">\s*<label for="id_{name}">{label}</label>', page), name
    assert re.search(r'<input type="date" name="quoted_on"', page)
    assert 'accept=".csv,.xlsx,text/csv"' in page and '<small class="help">Who quoted' in page

    bad = SimpleUploadedFile("bad.csv", b"part_number,unit_price_usd\nzzz,5\n")
    form = {"vendor": "Acme", "reference": "Q1", "quoted_on": "2026-11-20", "file": bad}
    page = alice_client.post(reverse("planner:quote_list"), form).content.decode()
    block = re.search(r'<p class="field has-error">(.*?)</p>', page, flags=re.S).group(1)
    assert 'for="id_file"' in block and "row 2, column part_number" in block
    assert 'value="Acme"' in page  # what was typed stays in the form
