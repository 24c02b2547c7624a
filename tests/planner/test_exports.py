"""Exports procurement can use (issue 14): the BOM CSV's columns and totals, the workbook's sheets and totals, and
formula-injection escaping in every cell of both."""

from __future__ import annotations

import copy
import csv
import io
from decimal import Decimal

import pytest
from django.urls import reverse

from planner import services
from planner.adapter import plan_compute
from planner.outputs.bom_csv import COLUMNS, FORMULA_TRIGGERS, bom_csv
from planner.outputs.bom_xlsx import XLSX_AVAILABLE, workbook_sheets
from planner.outputs.plan_view import PlanView

BODY = {
    "workload": "training",
    "model": {"preset": "llama-3-8b"},
    "training": {"tokens": 1e11, "gpus": 64},
    "hardware": {"system": "dgx-h100"},
    "pricing": {"years": 3, "regions": ["us-east-1"], "component_prices": {"MQM9700-NS2F": 10.005}},
}
EXTRA = {"services", "tax", "spares", "support", "software"}


@pytest.fixture
def stored(db) -> dict:
    return plan_compute(request_data=BODY, price_snapshot=None, plan_date="2026-11-26").result


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_columns_basis_lead_times_and_total_tie_to_capex(stored):
    view = PlanView(stored)
    rows = _csv_rows(bom_csv(view.bom_lines, view.lead_times))
    assert {"price_basis", "source", "as_of", "lead_time_days", "currency"} <= set(rows[0])
    assert list(rows[0]) == COLUMNS
    capex = Decimal(stored["costs"]["onprem"]["capex_usd"])
    # the odd-cent override (10.005 -> 10.01 x quantity) still ties: lines add to capex to the cent
    assert sum(Decimal(r["extended_price"]) for r in rows) == capex
    qm = next(r for r in rows if r["part_number"] == "MQM9700-NS2F")
    assert qm["unit_price"] == "10.01" and qm["price_basis"] == "user_override"
    assert Decimal(qm["extended_price"]) == Decimal(qm["quantity"]) * Decimal("10.01")
    dgx = next(r for r in rows if r["category"] == "compute")
    # DGX servers: the named lead time of 8-GPU servers (84 days, TSMC via DigiTimes 2024-04); fabric parts 84 too
    assert (dgx["lead_time_days"], dgx["price_basis"], dgx["as_of"]) == ("84", "public_estimate", "2023-05-01")
    assert "SemiAnalysis" in dgx["source"]
    assert qm["lead_time_days"] == "84"
    support = next(r for r in rows if r["category"] == "support")
    assert support["price_basis"] == "assumption" and support["currency"] == "USD" and support["lead_time_days"] == ""
    assert {r["category"] for r in rows} >= {"services", "spares", "support"}


def test_workbook_sheets_and_totals(stored):
    view = PlanView(stored)
    sheets = {s.name: s for s in workbook_sheets(view)}
    assert list(sheets) == ["BOM", "Cost summary", "Assumptions", "Options"]
    bom = sheets["BOM"].rows
    header, lines, total = bom[0], bom[1:-1], bom[-1]
    ext = header.index("extended_price")
    capex = Decimal(stored["costs"]["onprem"]["capex_usd"])
    assert total[ext] == capex == sum(row[ext] for row in lines)
    assert len(lines) == len(stored["bom"])
    summary = {row[0]: row[1] for row in sheets["Cost summary"].rows[1:]}
    assert summary["Capex (BOM total: hardware and the lines beyond it)"] == capex
    assert summary["Job cost on the owned cluster (GPU-hours x cost per GPU-hour)"] == Decimal(
        stored["costs"]["onprem"]["job_usd_shared"]
    )
    names = {row[0] for row in sheets["Assumptions"].rows[1:]}
    assert {"cost_of_capital", "useful_life_years", "residual_value_fraction"} <= names
    options = [row for row in sheets["Options"].rows[1:] if row and row[0] == row[0] and len(row) == 7]
    assert len(options) == len(stored["costs"]["comparison"]["options"])


def _hostile(stored: dict) -> dict:
    plan = copy.deepcopy(stored)
    plan["bom"][0]["description"] = "=cmd|' /C calc'!A0"
    plan["bom"][1]["part_number"] = "+1+1"
    plan["bom"][2]["price_source"] = "@SUM(A1:A9)"
    plan["bom"][3]["manufacturer"] = "-2+3"
    name = next(iter(plan["costs"]["parameters"]))
    plan["costs"]["parameters"][name]["source"] = '=HYPERLINK("http://x")'
    plan["costs"]["comparison"]["options"][0]["label"] = "=1+2"
    plan["assumptions"][next(iter(plan["assumptions"]))]["source"] = "\t=1"
    return plan


def test_no_cell_of_the_csv_or_the_workbook_starts_a_formula(stored):
    view = PlanView(_hostile(stored))
    for row in _csv_rows(bom_csv(view.bom_lines, view.lead_times)):
        for key, value in row.items():
            assert not value.startswith(FORMULA_TRIGGERS) or key in {"unit_price", "extended_price"}, (key, value)
    seen = 0
    for sheet in workbook_sheets(view):
        for row in sheet.rows:
            for cell in row:
                if isinstance(cell, str):
                    assert not cell.startswith(FORMULA_TRIGGERS), (sheet.name, cell)
                    seen += cell.startswith("'")
    assert seen >= 7  # every planted string was escaped, not dropped


@pytest.mark.django_db
def test_xlsx_endpoints(alice_client, user):
    plan = services.plan_create_synchronous(owner=user, request_data=BODY, name="xlsx")
    api = alice_client.get(reverse("api:plan-bom-xlsx", args=[plan.pk]))
    page = alice_client.get(reverse("planner:plan_bom_xlsx", args=[plan.pk]))
    detail = alice_client.get(plan.get_absolute_url()).content.decode()
    if XLSX_AVAILABLE:
        assert api.status_code == page.status_code == 200
        assert api["Content-Type"].startswith("application/vnd.openxmlformats")
        assert "Workbook (XLSX)" in detail
    else:
        assert api.status_code == page.status_code == 501
        assert "openpyxl" in api.json()["detail"] if "detail" in api.json() else "openpyxl" in str(api.json())
        assert "openpyxl" in page.content.decode()
        assert "Workbook (XLSX)" not in detail
