"""The plan's JSON: shown inline while small, always downloadable by its owner only."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from planner.models import Plan
from planner.outputs import page_cache

pytestmark = pytest.mark.django_db


def _stored_plan(user) -> Plan:
    result = {"workload": "training", "feasible": True, "cluster": {"gpus": 8, "system": "dgx-h100"}}
    return Plan.objects.create(owner=user, name="stored", workload="training", request={}, result=result)


def test_owner_downloads_the_stored_result(alice_client, user):
    plan = _stored_plan(user)
    response = alice_client.get(reverse("planner:plan_result_json", args=[plan.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert f'filename="plan-{plan.pk}.json"' in response["Content-Disposition"]
    assert json.loads(response.content)["cluster"] == {"gpus": 8, "system": "dgx-h100"}


def test_another_user_gets_404(client, user, django_user_model):
    plan = _stored_plan(user)
    client.force_login(django_user_model.objects.create_user(username="mallory", password="m" * 20))
    assert client.get(reverse("planner:plan_result_json", args=[plan.pk])).status_code == 404


def test_a_plan_with_no_result_is_404(alice_client, user):
    plan = Plan.objects.create(owner=user, name="empty", workload="training", request={})
    assert alice_client.get(reverse("planner:plan_result_json", args=[plan.pk])).status_code == 404


def test_the_page_shows_a_small_plan_inline_and_links_a_large_one(alice_client, user, monkeypatch):
    plan = _stored_plan(user)
    link = reverse("planner:plan_result_json", args=[plan.pk])
    html = alice_client.get(plan.get_absolute_url()).content.decode()
    assert "<summary>Plan JSON</summary><pre>" in html and link in html
    # The same plan over a 10-byte limit: its JSON (about 90 bytes) is linked, not shown.
    monkeypatch.setattr(page_cache, "INLINE_JSON_MAX_BYTES", 10)
    other = _stored_plan(user)
    html = alice_client.get(other.get_absolute_url()).content.decode()
    assert "<summary>Plan JSON</summary><pre>" not in html and "too large to show here" in html
    assert reverse("planner:plan_result_json", args=[other.pk]) in html
