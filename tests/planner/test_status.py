"""A plan's status tells the truth: succeeded, infeasible (with the plan's own reason) or failed, in the list, its
search and status filter, the API (`status`, `status_reason`, `?status=`) and for plans stored before (migration)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from rest_framework.test import APIClient

from planner import services
from planner.choices import RunStatus
from planner.models import PlanRun

pytestmark = pytest.mark.django_db

# 15T tokens of Llama 3 405B in 2 days on A100s: no cluster the engine may build gets there (its own message says
# the shortest achievable time), so the plan is an answer "cannot be met", not an error.
IMPOSSIBLE = {
    "workload": "training",
    "model": {"preset": "llama-3-405b"},
    "training": {"tokens": 15e12, "deadline_days": 2},
    "hardware": {"system": "dgx-a100-80gb"},
}


@pytest.fixture
def plans(user, training_request):
    from pricing.services import price_snapshot_load_fixtures

    price_snapshot_load_fixtures()
    ok = services.plan_create_synchronous(owner=user, request_data=training_request, name="feasible 70B")
    bad = services.plan_create_synchronous(owner=user, request_data=IMPOSSIBLE, name="405B in two days")
    failed = services.plan_create(owner=user, request_data=training_request, name="broken run")
    run = failed.runs.get()
    services.plan_run_fail(run_id=run.pk, message="The planner hit an internal error (reference abcd1234).")
    return ok, bad, failed


def _api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_issue(user=user)}")
    return client


def test_runs_finish_with_the_status_their_plan_earns(plans):
    ok, bad, failed = plans
    assert ok.runs.get().status == RunStatus.SUCCEEDED and ok.runs.get().reason == ""
    run = bad.runs.get()
    assert run.status == RunStatus.INFEASIBLE
    assert "shortest achievable time" in run.reason and "deadline 2 days" in run.reason
    assert run.is_finished and run.status_dict()["reason"] == run.reason
    assert failed.runs.get().status == RunStatus.FAILED


def test_a_failure_never_overwrites_an_infeasible_answer(plans):
    _, bad, _ = plans
    run = bad.runs.get()
    services.plan_run_fail(run_id=run.pk, message="late sweep")
    run.refresh_from_db()
    assert run.status == RunStatus.INFEASIBLE


def test_list_shows_infeasible_with_its_reason_not_a_green_success(alice_client, plans):
    page = alice_client.get("/").content.decode()
    row = page[page.index("405B in two days") :].split("</tr>")[0]
    assert "status-infeasible" in row and "Infeasible" in row and "Succeeded" not in row
    assert "status-reason" in row and "the deadline needs" in row  # the reason in words, cut to one line
    failed_row = page[page.index("broken run") :].split("</tr>")[0]
    assert "status-failed" in failed_row and "internal error" in failed_row


def test_list_filter_and_search(alice_client, plans):
    only = alice_client.get("/", {"status": "infeasible"}).content.decode()
    assert "405B in two days" in only and "feasible 70B" not in only and "broken run" not in only
    done = alice_client.get("/", {"status": "succeeded"}).content.decode()
    assert "feasible 70B" in done and "405B in two days" not in done
    by_reason = alice_client.get("/", {"q": "shortest achievable"}).content.decode()
    assert "405B in two days" in by_reason and "feasible 70B" not in by_reason
    ignored = alice_client.get("/", {"status": "bogus"}).content.decode()  # unknown: no filter, not an error
    assert "405B in two days" in ignored and "feasible 70B" in ignored


def test_api_status_reason_and_filter(user, plans):
    _, bad, _ = plans
    api = _api(user)
    listing = {row["name"]: row for row in api.get("/api/plans/").json()["results"]}
    assert listing["405B in two days"]["status"] == "infeasible"
    assert "shortest achievable time" in listing["405B in two days"]["status_reason"]
    assert listing["feasible 70B"]["status"] == "succeeded" and listing["feasible 70B"]["status_reason"] is None
    assert listing["broken run"]["status"] == "failed" and "internal error" in listing["broken run"]["status_reason"]
    infeasible = api.get("/api/plans/", {"status": "infeasible"}).json()
    assert [row["id"] for row in infeasible["results"]] == [bad.pk]
    detail = api.get(f"/api/plans/{bad.pk}/").json()
    assert detail["run"]["status"] == "infeasible" and detail["run"]["reason"] == detail["status_reason"]
    bad_filter = api.get("/api/plans/", {"status": "done"})
    assert bad_filter.status_code == 400 and "status" in bad_filter.json()["errors"]


def test_openapi_lists_infeasible(client):
    schema = client.get("/api/schema/?format=json").json()
    assert "infeasible" in schema["components"]["schemas"]["RunStatusEnum"]["enum"]
    params = {p["name"]: p for p in schema["paths"]["/api/plans/"]["get"]["parameters"]}
    assert "infeasible" in params["status"]["schema"]["enum"]


BEFORE = [("planner", "0007_plan_status_parent")]
AFTER = [("planner", "0008_derive_infeasible_runs")]


@pytest.mark.django_db(transaction=True)
def test_migration_marks_stored_infeasible_plans():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    owner = old.get_model("auth", "User").objects.create(username="legacy", password="!")
    Plan, Run = old.get_model("planner", "Plan"), old.get_model("planner", "PlanRun")
    reason = "dgx-a100-80gb: cluster size: the deadline needs about 9588497 GPUs"
    bad = Plan.objects.create(
        owner=owner, name="old infeasible", workload="training", request={}, result={"feasible": False,
        "problems": [reason]},
    )  # fmt: skip
    good = Plan.objects.create(
        owner=owner, name="old ok", workload="training", request={}, result={"feasible": True, "problems": []}
    )
    bad_run = Run.objects.create(plan=bad, status="succeeded")
    good_run = Run.objects.create(plan=good, status="succeeded")

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("planner", "PlanRun")
    assert new.objects.get(pk=bad_run.pk).status == "infeasible"
    assert new.objects.get(pk=bad_run.pk).reason == reason + "."
    assert new.objects.get(pk=good_run.pk).status == "succeeded"

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # back to the newest schema for the other tests
    assert PlanRun.objects.get(pk=bad_run.pk).status == "infeasible"
