"""Fair use (issue 15): one allowance for new plans across the form, re-runs, re-plans and the API; a per-user
share of the queue; report downloads rate-limited. Each limit answers 429 with Retry-After and writes nothing."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache
from django.urls import reverse
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from planner import services
from planner.choices import RunStatus
from planner.models import Plan, PlanRun

pytestmark = pytest.mark.django_db

FORM = {"workload": "training", "model_preset": "llama-3-8b", "hardware_system": "dgx-h100",
        "training_tokens": "1e12", "training_gpus": "64", "training_precision": "bf16",
        "inference_precision": "bf16", "pricing_years": "3", "pricing_regions": "us-east-1"}  # fmt: skip


@pytest.fixture
def rates(settings):
    """Small allowances for the test; DRF reads its rates into a class attribute, so that is swapped too."""
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], "plan_create": "3/min", "export": "2/min"}
    settings.REST_FRAMEWORK = rest
    original = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = rest["DEFAULT_THROTTLE_RATES"]
    cache.clear()
    yield
    SimpleRateThrottle.THROTTLE_RATES = original
    cache.clear()


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_issue(user=user)}")
    return client


def test_form_and_api_share_one_allowance_for_new_plans(rates, alice_client, api, training_request):
    body = json.dumps(training_request)
    assert alice_client.post(reverse("planner:plan_create"), FORM).status_code == 302
    assert api.post("/api/plans/", data=body, content_type="application/json").status_code == 202
    assert alice_client.post(reverse("planner:plan_create"), FORM).status_code == 302
    # The fourth, by either door, is over the 3/min allowance.
    limited = api.post("/api/plans/", data=body, content_type="application/json")
    assert limited.status_code == 429 and int(limited["Retry-After"]) > 0
    page = alice_client.post(reverse("planner:plan_create"), FORM)
    assert page.status_code == 429 and int(page["Retry-After"]) > 0
    assert Plan.objects.count() == 3


def test_another_user_keeps_their_own_allowance(rates, alice_client, other_user, client):
    for _ in range(3):
        alice_client.post(reverse("planner:plan_create"), FORM)
    assert alice_client.post(reverse("planner:plan_create"), FORM).status_code == 429
    client.force_login(other_user)
    assert client.post(reverse("planner:plan_create"), FORM).status_code == 302


def test_a_users_share_of_the_queue_is_capped(settings, user, other_user, training_request, alice_client):
    settings.PLANNER_MAX_ACTIVE_RUNS_PER_USER = 2
    for index in range(2):
        plan = Plan.objects.create(owner=user, name=f"p{index}", workload="training", request=training_request)
        PlanRun.objects.create(plan=plan, status=RunStatus.QUEUED if index else RunStatus.RUNNING)
    with pytest.raises(services.QueueFull, match="2 plans waiting or running"):
        services.plan_create(owner=user, request_data=training_request)
    response = alice_client.post(reverse("planner:plan_create"), FORM)
    assert response.status_code == 429 and b"the limit is 2" in response.content
    assert Plan.objects.filter(owner=user).count() == 2
    # Someone else's plans are not held back by alice's queue.
    assert services.plan_create(owner=other_user, request_data=training_request).owner == other_user
    # Finished runs free the share again.
    PlanRun.objects.filter(plan__owner=user).update(status=RunStatus.SUCCEEDED)
    assert services.plan_create(owner=user, request_data=training_request).owner == user


def test_the_api_answers_a_full_queue_with_429_json(settings, api, user, training_request):
    settings.PLANNER_MAX_ACTIVE_RUNS_PER_USER = 1
    plan = Plan.objects.create(owner=user, name="p", workload="training", request=training_request)
    PlanRun.objects.create(plan=plan)
    response = api.post("/api/plans/", data=json.dumps(training_request), content_type="application/json")
    assert response.status_code == 429 and response["Retry-After"] == "60"
    assert "the limit is 1" in response.json()["detail"]


def test_report_downloads_are_rate_limited(rates, alice_client, user, training_request, monkeypatch):
    monkeypatch.setattr("planner.views.report_pdf", lambda plan: b"%PDF-1.7 stub")
    plan = Plan.objects.create(owner=user, name="p", workload="training", request=training_request,
                               result={"bom": []})  # fmt: skip
    url = reverse("planner:plan_report_pdf", args=[plan.pk])
    assert [alice_client.get(url).status_code for _ in range(3)] == [200, 200, 429]
