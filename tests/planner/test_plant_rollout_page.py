"""The plan page's site-plant and roll-out card, from the stored plan."""

from __future__ import annotations

import pytest

from tests import samples

pytestmark = pytest.mark.django_db


@pytest.fixture
def phased_plan(user, django_capture_on_commit_callbacks):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-70b"},
        "training": {"tokens": 1e12, "gpus": 1024},
        "hardware": {"system": "dgx-h100"},
        "site": {"ambient_c": 10, "ownership": "owned"},
        "rollout": {"by": "scalable_units", "per_phase": 2},
        "pricing": {"years": 3, "regions": ["us-east-1"]},
    }
    return samples.priced_plan(user, body, "phased", django_capture_on_commit_callbacks)


def test_page_shows_the_plant_and_the_phases(alice_client, phased_plan):
    result = phased_plan.result
    # 1,024 GPUs = 128 DGX H100 = 4 SUs of 32; 2 SUs per phase -> 2 phases; training starts with the second.
    assert [p["systems"] for p in result["costs"]["rollout"]["phases"]] == [64, 64]
    assert result["costs"]["rollout"]["start_phase"] == 2
    html = alice_client.get(phased_plan.get_absolute_url()).content.decode()
    assert 'id="plant"' in html and "Site plant and roll-out" in html
    assert "Heat rejection at a design outdoor temperature of 10 °C" in html
    assert "2 (workload starts)" in html
    # An owned site: the three site lines are in the BOM, and no colocation is paid.
    parts = {line["part_number"] for line in result["bom"]}
    assert {"SITE-ELECTRICAL", "SITE-MECHANICAL", "SITE-BUILDING"} <= parts
    assert result["costs"]["onprem"]["opex_breakdown_usd_per_year"]["colocation"] == "0.00"


def test_report_carries_the_plant_and_the_phases(phased_plan):
    """The PDF is the page on paper: its HTML (rendered as the PDF renders it) has the site section."""
    from django.template.loader import render_to_string

    from planner.presenters import report_context

    html = render_to_string("planner/report.html", report_context(phased_plan))
    assert 'id="site"' in html and "Site: halls, plant and roll-out" in html
    # 2 phases of 64 DGX H100 (2 SUs of 32): 512 GPUs installed after the first, 1,024 after the second.
    assert "2 (work starts)" in html and ">512<" in html and ">1,024<" in html
    assert "Heat rejection, air loop" in html or "Heat rejection, liquid loop" in html
