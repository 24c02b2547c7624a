"""Odd input and races found in review: each must give a clear answer, never a 500 or a wrong result."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from planner import recovery, services
from planner.adapter import request_for_editing
from planner.choices import RunStatus
from planner.models import Plan, PlanRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished_plan(user, training_request, django_capture_on_commit_callbacks) -> Plan:
    with django_capture_on_commit_callbacks(execute=True):
        plan = services.plan_create(owner=user, request_data=training_request, name="p")
    plan.refresh_from_db()
    return plan


def test_replan_with_every_assumption_posted_unchanged_makes_no_plan(alice_client, finished_plan):
    """The page posts every assumption field; values must round-trip (no thousands separators)."""
    page = alice_client.get(finished_plan.get_absolute_url()).content.decode()
    big = next(name for name, a in finished_plan.result["assumptions"].items() if abs(a["value"]) >= 1000)
    assert f'name="a__{big}" value="{finished_plan.result["assumptions"][big]["value"]}"' in page
    posted = {f"a__{name}": str(a["value"]) for name, a in finished_plan.result["assumptions"].items()}
    response = alice_client.post(reverse("planner:plan_replan", args=[finished_plan.pk]), posted, follow=True)
    assert "No assumption was changed" in response.content.decode() and Plan.objects.count() == 1


@pytest.mark.parametrize("ids", ["99999999999999999999,1", "²,1", "1,a", "-1,2"])
def test_compare_with_odd_ids_is_refused_cleanly(alice_client, ids):
    assert alice_client.get(reverse("planner:plan_compare"), {"ids": ids}).status_code == 302


@pytest.mark.parametrize("value", ["²", "99999999999999999999", "abc"])
def test_duplicate_with_odd_id_opens_an_empty_form(alice_client, value):
    response = alice_client.get(reverse("planner:plan_create"), {"from": value})
    assert response.status_code == 200 and not response.context["form"].initial


def test_empty_post_shows_field_errors(alice_client):
    response = alice_client.post(reverse("planner:plan_create"), {})
    assert response.status_code == 400 and response.context["form"].errors


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_issue(user=user)}")
    return client


@pytest.mark.parametrize("when", ["2024-02-30", "2024-01-01T25:00:00", "0001-01-01T00:00:00+01:00", "1969-12-31"])
def test_impossible_dates_are_400(api, when):
    response = api.get("/api/plans/", {"created_after": when})
    assert response.status_code == 400 and "created_after" in response.json()["errors"]


def test_absurdly_nested_json_is_400_everywhere(api, alice_client, tmp_path, capsys):
    deep = "[" * 5000
    assert api.post("/api/plans/", data=deep, content_type="application/json").status_code == 400
    form = {
        "workload": "training",
        "model_preset": "llama-3-8b",
        "hardware_system": "auto",
        "training_precision": "bf16",
        "inference_precision": "bf16",
        "request_json": deep,
    }
    errors = alice_client.post(reverse("planner:plan_create"), form).context["form"].errors
    assert "too deep" in " ".join(errors["request_json"])
    huge_int = '{"workload": "training", "x": ' + "1" * 5000 + "}"
    path = tmp_path / "bad.json"
    path.write_text(huge_int)
    with pytest.raises(SystemExit) as exited:
        call_command("plan", "--input", str(path), stdout=io.StringIO())
    assert exited.value.code == 2


def test_control_characters_in_name_are_a_field_error(api, training_request):
    training_request["name"] = "a\u0000b"
    response = api.post("/api/plans/", data=json.dumps(training_request), content_type="application/json")
    assert response.status_code == 400 and "name" in response.json()["errors"]


@pytest.mark.parametrize("name", ["\u202eexe.fdp", "a\u2066b\u2069c"])
def test_bidirectional_overrides_in_name_are_a_field_error(api, training_request, name):
    """A right-to-left override or an isolate would make the name read as something else in lists and file names."""
    training_request["name"] = name
    response = api.post("/api/plans/", data=json.dumps(training_request), content_type="application/json")
    assert response.status_code == 400
    assert response.json()["errors"]["name"] == ["name must not contain bidirectional override or isolate characters"]
    assert not Plan.objects.exists()


def test_a_right_to_left_name_with_direction_marks_is_kept(api, training_request):
    training_request["name"] = "\u05e9\u05dc\u05d5\u05dd\u200f 70B"  # Hebrew with a right-to-left mark: a real name
    response = api.post("/api/plans/", data=json.dumps(training_request), content_type="application/json")
    assert response.status_code == 202 and Plan.objects.get().name == training_request["name"]


def test_plan_list_queries_do_not_grow_with_plans(alice_client, user, training_request, django_assert_max_num_queries):
    for index in range(12):
        plan = Plan.objects.create(owner=user, name=f"p{index}", workload="training", request=training_request)
        PlanRun.objects.create(plan=plan)
    with django_assert_max_num_queries(6):
        assert alice_client.get(reverse("planner:plan_list")).status_code == 200


def test_duplicate_of_rich_request_leaves_fields_empty(alice_client, user, training_request):
    training_request["assumptions"] = {"gemm_efficiency_hopper": 0.5}
    plan = Plan.objects.create(owner=user, name="rich", workload="training", request=training_request)
    initial = alice_client.get(reverse("planner:plan_create"), {"from": plan.pk}).context["form"].initial
    # The JSON box holds the request as written (defaults left out): the same request once validated.
    shown = json.loads(initial["request_json"])
    assert "training_tokens" not in initial and shown == request_for_editing(training_request)
    assert shown["assumptions"] == {"gemm_efficiency_hopper": 0.5}


def test_lost_message_is_resent_once_per_window_even_with_two_sweepers(user, training_request, settings):
    settings.PLANNER_RUN_QUEUED_RESEND_AFTER_S = 300
    plan = Plan.objects.create(owner=user, name="q", workload="training", request=training_request)
    run = PlanRun.objects.create(plan=plan, sends=1, sent_at=timezone.now() - timedelta(seconds=301))
    first = recovery.plan_runs_recover_stale()
    second = recovery.plan_runs_recover_stale()  # a second worker sweeping right after
    run.refresh_from_db()
    assert (first["resent"], second["resent"], run.sends) == (1, 0, 2)


def test_rerun_refused_while_running_and_uses_newest_prices(alice_client, finished_plan):
    """A finished plan's re-run is a new plan (its parent the finished one, same request, newest prices); a plan
    whose own run is still going is not run again."""
    from pricing.models import PriceSnapshot

    newer = PriceSnapshot.objects.create(kind="live", source="test", fetched_at=timezone.now())
    before = finished_plan.price_snapshot
    run = services.plan_rerun(plan=finished_plan)
    child = run.plan
    assert child.parent == finished_plan and child.request == finished_plan.request and child.price_snapshot == newer
    finished_plan.refresh_from_db()
    assert finished_plan.price_snapshot == before and finished_plan.runs.count() == 1  # its answer is kept
    with pytest.raises(services.RunInProgress):
        services.plan_rerun(plan=child)
    response = alice_client.post(reverse("planner:plan_rerun", args=[child.pk]), follow=True)
    assert "already being run" in response.content.decode()
    assert child.runs.count() == 1


def test_a_superseded_delivery_cannot_finish_the_run(user, training_request):
    """The sweeper re-queued the run and another delivery claimed it: the old worker's result is dropped."""
    plan = Plan.objects.create(owner=user, name="r", workload="training", request=training_request)
    run = PlanRun.objects.create(plan=plan, status=RunStatus.RUNNING, claimed_by="new-delivery", attempts=2)
    assert services.plan_run_execute(run_id=run.pk, claim_token="old-delivery") == "skipped:running"
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.claimed_by == "new-delivery"
