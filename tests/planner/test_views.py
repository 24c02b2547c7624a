"""Web pages: login, the plan form and its field errors, ownership, CSRF, health."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from planner.models import Plan, PlanRun, WorkerHeartbeat

pytestmark = pytest.mark.django_db

FORM = {
    "workload": "training",
    "model_preset": "llama-3-70b",
    "hardware_system": "auto",
    "training_tokens": "15e12",
    "training_deadline_days": "90",
    "training_precision": "bf16",
    "inference_precision": "bf16",
}


def _post(client, **overrides):
    return client.post(reverse("planner:plan_create"), {**FORM, **overrides})


@pytest.mark.parametrize("name", ["planner:plan_list", "planner:plan_create"])
def test_pages_need_login(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_login_page_and_login(client, user):
    assert client.get(reverse("login")).status_code == 200
    response = client.post(reverse("login"), {"username": "alice", "password": "correct-horse-battery"})
    assert response.status_code == 302
    assert client.get(reverse("planner:plan_list")).status_code == 200


def test_form_creates_plan_and_shows_result(alice_client, django_capture_on_commit_callbacks):
    assert alice_client.get(reverse("planner:plan_create")).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(alice_client, name="70B by March")
    plan = Plan.objects.get()
    assert response.status_code == 302 and response["Location"] == plan.get_absolute_url()
    # The stored request is the normalised one: what the form sent, plus every default the plan used.
    training = plan.request["training"]
    assert plan.name == "70B by March"
    assert (training["tokens"], training["deadline_days"], training["precision"]) == (15e12, 90, "bf16")
    assert training["gpus"] is None and training["global_batch_tokens"] == 4 * 1024 * 1024
    page = alice_client.get(plan.get_absolute_url())
    assert page.status_code == 200
    html = page.content.decode()
    assert "70B by March" in html and "How each figure was derived" in html and "Succeeded" in html
    status = alice_client.get(reverse("planner:plan_status", args=[plan.pk])).json()
    assert status["status"] == "succeeded" and status["progress_percent"] == 100 and status["finished"] is True


def test_every_advanced_field_is_on_the_form(alice_client):
    """The advanced fieldsets come from ADVANCED_FIELDS (the template once listed them by hand and left eleven
    out, context parallelism and activation offload among them)."""
    from planner.forms import ADVANCED_FIELDS

    page = alice_client.get(reverse("planner:plan_create")).content.decode()
    for path, label, _ in ADVANCED_FIELDS:
        name = path.replace(".parallelism.", ".").replace(".", "_")
        assert f'name="{name}"' in page and label in page, path


def test_form_pins_the_context_parallel_exchange(alice_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(alice_client, name="long context", training_cp="4", training_cp_comm="all_gather")
    assert response.status_code == 302
    assert Plan.objects.get().request["training"]["parallelism"]["cp_comm"] == "all_gather"


def test_form_pins_the_expert_all_to_all_overlap(alice_client, django_capture_on_commit_callbacks):
    """A yes/no pin offers searched (blank), on and off; on and off reach the request as true and false."""
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(alice_client, name="moe", model_preset="mixtral-8x7b", training_ep_overlap="false")
    assert response.status_code == 302
    assert Plan.objects.get().request["training"]["parallelism"]["ep_overlap"] is False
    page = alice_client.get(reverse("planner:plan_create")).content.decode()
    assert '<option value="true">on</option>' in page and '<option value="false">off</option>' in page


def test_form_refuses_the_overlap_on_a_dense_model_naming_the_field(alice_client):
    response = _post(alice_client, name="dense", training_ep_overlap="true")
    assert response.status_code == 400
    assert "needs a mixture-of-experts model" in response.content.decode()
    assert not Plan.objects.exists()


@pytest.mark.parametrize(
    ("overrides", "field", "path"),
    [
        ({"training_tokens": "abc"}, "training_tokens", "training.tokens"),
        ({"training_tokens": "0"}, "training_tokens", "training.tokens"),
        ({"training_tokens": "-5"}, "training_tokens", "training.tokens"),
        ({"training_tokens": "nan"}, "training_tokens", "training.tokens"),
        ({"training_tokens": "1e300"}, "training_tokens", "training.tokens"),
        ({"training_tokens": ""}, "training_tokens", "training.tokens"),
        ({"training_deadline_days": "-1"}, "training_deadline_days", "training.deadline_days"),
        ({"training_gpus": "2.5", "training_deadline_days": ""}, "training_gpus", "training.gpus"),
        # a decimal comma is not a thousands separator: "1,5" is refused, not read as 15 days
        ({"training_deadline_days": "1,5"}, "training_deadline_days", "training.deadline_days"),
        ({"training_deadline_days": "0,250"}, "training_deadline_days", "training.deadline_days"),  # not 250 days
        ({"training_tokens": "15,00,000"}, "training_tokens", "training.tokens"),
    ],
)
def test_form_reports_bad_numbers_on_their_field(alice_client, overrides, field, path):
    response = _post(alice_client, **overrides)
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert field in errors, errors
    assert any(path in message for message in errors[field])
    assert Plan.objects.count() == 0 and PlanRun.objects.count() == 0


def test_form_reports_every_problem_at_once(alice_client):
    response = _post(alice_client, training_tokens="-1", training_deadline_days="0")
    errors = response.context["form"].errors
    assert {"training_tokens", "training_deadline_days"} <= set(errors)


def test_form_rejects_unknown_choices(alice_client):
    response = _post(alice_client, model_preset="gpt-9", hardware_system="dgx-z900")
    errors = response.context["form"].errors
    assert response.status_code == 400 and {"model_preset", "hardware_system"} <= set(errors)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("{not json", "Malformed JSON"),
        ("[1, 2]", "JSON object"),
        (
            '{"workload": "training", "model": {"preset": "nope"}, "training": {"tokens": 1e12, "gpus": 8}}',
            "model.preset",
        ),
        (
            '{"workload": "training", "model": {"preset": "llama-3-8b"}, "training": {"tokens": NaN, "gpus": 8}}',
            "NaN is not a JSON number",
        ),
        (
            '{"workload": "training", "model": {"preset": "llama-3-8b"}, "training": {"tokens": "1e12", "gpus": 8}}',
            "training.tokens",
        ),
        (
            '{"workload": "training", "model": {"preset": "llama-3-8b"}, "training": {"tokens": 1e12, "gpus": true}}',
            "training.gpus",
        ),
    ],
)
def test_form_request_json_errors(alice_client, raw, expected):
    response = _post(alice_client, request_json=raw)
    assert response.status_code == 400
    messages = response.context["form"].errors.get("request_json", [])
    assert any(expected in message for message in messages), messages
    assert Plan.objects.count() == 0


def test_form_request_json_is_used(alice_client, django_capture_on_commit_callbacks):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-8b"},
        "training": {"tokens": 1e12, "gpus": 64},
        "hardware": {"system": "dgx-h100"},
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(alice_client, request_json=json.dumps(body))
    assert response.status_code == 302
    plan = Plan.objects.get()
    stored = plan.request  # normalised: the body's values, the preset's shape and every default
    assert (stored["workload"], stored["model"]["preset"], stored["hardware"]["system"]) == (
        "training",
        "llama-3-8b",
        "dgx-h100",
    )
    assert (stored["training"]["tokens"], stored["training"]["gpus"]) == (1e12, 64)
    assert stored["model"]["layers"] == 32 and stored["pricing"]["years"] == 3  # Llama 3 8B has 32 layers
    assert plan.result["training"]["gpus"] == 64


def test_users_cannot_see_or_change_each_others_plans(client, user, other_user, training_request):
    plan = Plan.objects.create(owner=user, name="alice's", workload="training", request=training_request)
    PlanRun.objects.create(plan=plan)
    client.force_login(other_user)
    assert client.get(plan.get_absolute_url()).status_code == 404
    assert client.get(reverse("planner:plan_status", args=[plan.pk])).status_code == 404
    assert client.post(reverse("planner:plan_rerun", args=[plan.pk])).status_code == 404
    assert plan.runs.count() == 1
    assert "alice&#x27;s" not in client.get(reverse("planner:plan_list")).content.decode()
    # A missing id looks exactly like someone else's.
    assert client.get(reverse("planner:plan_detail", args=[plan.pk + 1000])).status_code == 404


def test_owner_can_rerun(alice_client, user, training_request, django_capture_on_commit_callbacks):
    plan = Plan.objects.create(owner=user, name="p", workload="training", request=training_request)
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(reverse("planner:plan_rerun", args=[plan.pk]))
    assert response.status_code == 302 and plan.runs.get().status == "succeeded"


def test_forms_are_csrf_protected(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(reverse("planner:plan_create"), FORM).status_code == 403
    assert Plan.objects.count() == 0


def test_healthz_reports_each_part(client):
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 503 and body["ok"] is False and response["Retry-After"]
    assert body["checks"]["database"]["ok"] and body["checks"]["broker"]["ok"]
    assert body["checks"]["worker"]["ok"] is False and body["failed"] == ["worker"]
    WorkerHeartbeat.objects.create(hostname="w@h", seen_at=timezone.now(), progress_at=timezone.now())
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json()["ok"] is True


def test_healthz_worker_seen_too_long_ago(client, settings):
    WorkerHeartbeat.objects.create(hostname="w@h", seen_at=timezone.now() - timezone.timedelta(seconds=120))
    settings.PLANNER_WORKER_SEEN_WITHIN_S = 60
    body = client.get("/healthz").json()
    assert body["checks"]["worker"]["ok"] is False and "120 s ago" in body["checks"]["worker"]["detail"]


@pytest.mark.parametrize("typed", ["nan", "NaN", "inf", "-Infinity", "1e400"])
def test_form_says_a_non_finite_number_is_not_finite(alice_client, typed):
    """A number typed that is not finite was reported as "must be a number, not a string"."""
    response = _post(alice_client, training_tokens=typed)
    assert response.status_code == 400
    (message,) = response.context["form"].errors["training_tokens"]
    assert message == "training.tokens must be a finite number"
