"""Running a finished plan again keeps its answer and makes a new plan that records it as parent and says what
changed. The "before" answer is set by hand here (the parent's capex stored as $1,000,000, as an older run with
other prices would have left it), so the change the page must report is known without reading the code's own
output: $1,000,000 -> the fresh run's capex."""

from __future__ import annotations

import copy

import pytest
from django.urls import reverse

from planner import services
from planner.choices import RunStatus
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


def test_run_again_twice_while_the_first_rerun_is_queued_gives_that_one_child(finished, alice_client):
    """A double click: the second post redirects to the child the first one queued (no task runs here, so it stays
    queued); once that child has finished, run again makes a new child."""
    url = reverse("planner:plan_rerun", args=[finished.pk])
    first = alice_client.post(url)
    second = alice_client.post(url)
    children = list(Plan.objects.filter(parent=finished))
    assert len(children) == 1
    child = children[0]
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"] == child.get_absolute_url()
    assert child.runs.count() == 1 and child.runs.get().status == RunStatus.QUEUED

    child.runs.update(status=RunStatus.SUCCEEDED)  # the re-run finished: it no longer stands in for a new one
    third = alice_client.post(url)
    newest = Plan.objects.filter(parent=finished).exclude(pk=child.pk).get()
    assert third["Location"] == newest.get_absolute_url()
    assert Plan.objects.filter(parent=finished).count() == 2


def test_a_queued_what_if_child_does_not_stand_in_for_a_rerun(finished, alice_client):
    """A child with another request (a what-if at another electricity price) is another question: run again still
    makes its own re-run."""
    what_if = services.plan_derive(plan=finished, overrides={"site": {"electricity_usd_per_kwh": 0.2}})
    assert what_if.runs.get().status == RunStatus.QUEUED
    response = alice_client.post(reverse("planner:plan_rerun", args=[finished.pk]))
    rerun = Plan.objects.filter(parent=finished).exclude(pk=what_if.pk).get()
    assert response["Location"] == rerun.get_absolute_url() and rerun.request == finished.request
