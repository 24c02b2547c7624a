""" "Systems considered" as a buyer scans it: the deciding columns first, the others on demand, rows chosen-first
by the estimate that ranked them, a refused system's reason on a line of its own; nothing dropped from the JSON.

The expected values are read from the golden plans' stored candidates (the engine's figures) and formatted by hand
here ($51.3M, 43.5 %), not taken from the table's own code."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from planner.outputs.page_html import page_html
from planner.outputs.plan_view import plan_view

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "plans"


def _stored(name: str) -> dict:
    return json.loads((GOLDEN / f"{name}.json").read_text())


def _section(html: str) -> str:
    start = html.index('id="systems-considered"')
    return html[start : html.index("</section>", start)]


def _texts(fragment: str, tag: str) -> list[str]:
    cells = re.findall(rf"<{tag}\b[^>]*>(.*?)</{tag}>", fragment, flags=re.S)
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in cells]


def test_a_training_table_leads_with_the_deciding_columns_and_hides_the_rest():
    table = plan_view(_stored("train-70b-auto-90d")).candidates_table
    shown = [c.label for c in table.columns if not c.more]
    hidden = [c.label for c in table.columns if c.more]
    assert shown == ["System", "GPUs", "Days to train", "Build + energy", "Fits"]
    assert {"p10 - p90", "GPU", "Systems", "Steady state", "MFU", "IT power", "Facility power", "IT energy"} <= set(
        hidden
    )
    assert len(table.columns) <= 13


def test_each_system_shows_its_whole_run_range_and_the_chosen_one_is_the_plans():
    """The chosen system's p10 - p90 is the plan's own range (68.07 - 107.19 days, the headline figure's); the
    others carry theirs, and the median lies inside each."""
    stored = _stored("train-70b-auto-90d")
    table = plan_view(stored).candidates_table
    col = [c.label for c in table.columns].index("p10 - p90")
    chosen = table.rows[0]
    assert chosen.status == "chosen" and chosen.cells[col].text == "70.2 - 110.5"
    rng = stored["training"]["days_range"]
    assert chosen.cells[col].text == f"{rng['p10']:.1f} - {rng['p90']:.1f}"
    for c in stored["candidates"]:
        if c["feasible"]:
            assert c["days_p10"] < c["days"] < c["days_p90"], c["system"]


def test_rows_read_chosen_first_then_by_the_estimate_that_ranked_them():
    """GB200 NVL72 is chosen at $51.4M (51,365,068.19); the others follow from $52.9M (GB300) to the two A100
    systems (256.50M and 256.51M, shown to three figures as $256M and $257M), as the selection's explain lists
    them."""
    stored = _stored("train-70b-auto-90d")
    table = plan_view(stored).candidates_table
    by_cost = sorted(
        stored["explain"]["selection.system"]["inputs"]["selection_usd_by_system"].items(), key=lambda kv: kv[1]
    )
    first = table.rows[0]
    assert first.status == "chosen" and first.cells[0].text == "NVIDIA GB200 NVL72 rack"
    assert [cell.text for cell in first.cells[:5]] == ["NVIDIA GB200 NVL72 rack", "1,024", "88.0", "$51.4M", "chosen"]
    assert by_cost[0][0] == "gb200-nvl72" and by_cost[1][0] == "gb300-nvl72"
    assert table.rows[1].cells[0].text == "NVIDIA GB300 NVL72 rack" and table.rows[1].cells[3].text == "$52.9M"
    assert [row.cells[3].text for row in table.rows[-2:]] == ["$256M", "$257M"]
    # the A100 40GB system: MFU 0.46484 -> 46.5 %, IT energy 8.32 MW x 80.040 days x 24 h = 15,982 MWh, 1,280
    # systems, steady state 56.3 days
    a100 = next(row for row in table.rows if "A100 40GB" in row.cells[0].text)
    hidden = {c.label: cell.text for c, cell in zip(table.columns, a100.cells, strict=True) if c.more}
    assert hidden["MFU"] == "46.5 %" and hidden["IT energy"] == "15,982" and hidden["Systems"] == "1,280"
    assert hidden["Steady state"] == "56.3" and hidden["IT power"] == "8.32 MW"


def test_a_serving_table_shows_replicas_and_the_horizon_of_its_estimate():
    table = plan_view(_stored("serve-70b-auto")).candidates_table
    shown = [c.label for c in table.columns if not c.more]
    assert shown == ["System", "GPUs", "Replicas", "Build + energy", "Fits"]
    assert "over 3 years" in table.note  # the selection's explain: years = 3
    chosen = table.rows[0]
    assert chosen.status == "chosen" and chosen.cells[0].text == "NVIDIA DGX B200"
    assert chosen.cells[2].text == "8 x 4" and chosen.cells[3].text == "$1.65M"  # 1,650,688.15


def test_a_refused_system_says_why_on_its_own_line_in_the_page():
    stored = _stored("infeasible-deadline-1d")
    html = _section(page_html(1, plan_view(stored), {}, {}, "")["lead"])
    why = _texts(html, "tr")[-1]
    # The stored candidate's own reason, whole, after "Why not:" (its GPU figure moves with every recalibration).
    (refused,) = stored["candidates"]
    assert refused["reason"].startswith("global batch: the deadline needs about ")
    assert why == f"Why not: {refused['reason']}"
    assert 'colspan="' in html and "The request fixed the system" in html
    assert "show-more-columns" not in html  # a refused system alone: its hidden columns would hold only dashes
    row_heads = _texts(html, "th")
    assert "NVIDIA DGX A100 (8 x A100 80GB)" in row_heads


def test_an_infeasible_plan_says_why_once_in_the_summary_and_once_for_the_refused_system():
    """The reason was printed three times (summary, a card under Compute, the refused system's row): the card now
    lists only further reasons, so a one-reason plan reads it in the summary and beside the system it refuses."""
    stored = _stored("infeasible-deadline-1d")
    (reason,) = stored["problems"]
    lead = page_html(1, plan_view(stored), {}, {}, "")["lead"]
    core = reason.split(": ", 1)[1]  # after the system's name, as both places print it
    assert lead.count(core.split(";")[0]) == 2
    assert "Other reasons the target cannot be met" not in lead
    two = {**stored, "problems": [reason, "A second, made-up reason."]}
    lead = page_html(1, plan_view(two), {}, {}, "")["lead"]
    assert "Other reasons the target cannot be met" in lead and "A second, made-up reason." in lead
    assert lead.count(core.split(";")[0]) == 2  # the first still only in the summary and the system's row


def test_the_page_marks_hidden_columns_and_offers_the_toggle():
    html = _section(page_html(1, plan_view(_stored("train-70b-auto-90d")), {}, {}, "")["lead"])
    assert 'class="show-more-columns"' in html
    heads = re.findall(r'<th scope="col" class="([^"]*)"[^>]*>(.*?)</th>', html)
    hidden = [re.sub(r"<[^>]+>", "", text).strip() for css, text in heads if "more" in css.split()]
    assert hidden[:3] == ["p10 - p90 days", "GPU", "Systems"] and "MFU" in hidden
    assert "Dgx" not in html and "dgx-h100" not in html  # product names, never catalog ids


@pytest.mark.django_db
def test_the_json_and_the_api_keep_every_candidate_field(alice_client, user):
    """The page shows fewer columns; the stored result, its download and the API keep each candidate whole."""
    from django.urls import reverse

    from planner.models import Plan

    stored = _stored("train-70b-auto-90d")
    plan = Plan.objects.create(owner=user, name="auto", workload="training", request={}, result=stored)
    downloaded = json.loads(alice_client.get(reverse("planner:plan_result_json", args=[plan.pk])).content)
    assert downloaded["candidates"] == stored["candidates"]
    fields = {"gpu", "systems", "days_ideal", "days_p10", "days_p90", "mfu", "it_kw", "facility_kw", "it_energy_mwh",
              "search"}  # fmt: skip
    assert all(fields <= set(c) for c in downloaded["candidates"])
    api = alice_client.get(f"/api/plans/{plan.pk}/")
    assert api.status_code == 200 and api.json()["result"]["candidates"] == stored["candidates"]
