"""Running a finished plan again keeps its answer and makes a new plan that records it as parent and says what
changed. The "before" answer is set by hand here (the parent's capex stored as $1,000,000, as an older run with
other prices would have left it), so the change the page must report is known without reading the code's own
output: $1,000,000 -> the fresh run's capex."""

from __future__ import annotations

import copy

import pytest
from django.urls import reverse

from planner import services
from planner.models import Plan

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished(user, training_request, django_capture_on_commit_callbacks) -> Plan:
    from pricing.services import price_snapshot_load_fixtures

    price_snapshot_load_fixtures()
    with django_capture_on_commit_callbacks(execute=True):
        plan = services.plan_create(owner=user, request_data=training_request, name="seventy")
    plan.refresh_from_db()
    return plan


def test_run_again_makes_a_child_that_says_what_changed(finished, alice_client, django_capture_on_commit_callbacks):
    older = copy.deepcopy(finished.result)
    fresh_capex = older["costs"]["onprem"]["capex_usd"]
    older["costs"]["onprem"]["capex_usd"] = "1000000.00"
    Plan.objects.filter(pk=finished.pk).update(result=older)

    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(reverse("planner:plan_rerun", args=[finished.pk]))
    child = Plan.objects.get(parent=finished)
    assert response.status_code == 302 and response["Location"] == child.get_absolute_url()
    assert child.name == "seventy (re-run)" and child.request == finished.request
    assert child.result["costs"]["onprem"]["capex_usd"] == fresh_capex
    finished.refresh_from_db()
    assert finished.result["costs"]["onprem"]["capex_usd"] == "1000000.00"  # the answer relied on is kept

    page = alice_client.get(child.get_absolute_url()).content.decode()
    lineage = page[page.index('id="lineage"') : page.index("</section>", page.index('id="lineage"'))]
    assert f'href="{finished.get_absolute_url()}"' in lineage and "Inputs" not in lineage  # same request
    assert "Capex (BOM total): 1,000,000" in lineage
    assert f"{float(fresh_capex):,.0f}" in lineage


def test_a_plan_without_an_answer_runs_again_in_place(user, training_request):
    plan = Plan.objects.create(owner=user, name="never ran", workload="training", request=training_request)
    run = services.plan_rerun(plan=plan)
    assert run.plan == plan and not Plan.objects.filter(parent=plan).exists()
