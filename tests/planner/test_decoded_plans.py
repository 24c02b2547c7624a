"""The per-process cache of decoded plans the what-if API re-costs (planner/decoded_plans.py): one decode per stored
text, a new text (any writer) never served the old plan, bounded, and the what-if's answer the same as a fresh
decode gives."""

from __future__ import annotations

import copy
import json
import math

import pytest
from rest_framework.test import APIClient

from planner import decoded_plans, services
from planner.adapter import decode_costed
from planner.models import Plan
from tests.samples import INFERENCE_REQUEST

pytestmark = pytest.mark.django_db


@pytest.fixture
def plan(user):
    from pricing.services import price_snapshot_load_fixtures

    price_snapshot_load_fixtures()
    return services.plan_create_synchronous(owner=user, request_data=copy.deepcopy(INFERENCE_REQUEST))


@pytest.fixture
def decodes(monkeypatch):
    calls = []

    def counting(stored):
        calls.append(stored)
        return decode_costed(stored)

    monkeypatch.setattr(decoded_plans, "decode_costed", counting)
    monkeypatch.setattr(decoded_plans, "_plans", type(decoded_plans._plans)())
    return calls


def test_one_decode_per_stored_text_and_a_new_text_decoded_again(plan, decodes):
    text = json.dumps(plan.result)
    first, again = decoded_plans.costed_plan(text), decoded_plans.costed_plan(text)
    assert first is again and len(decodes) == 1
    assert first.request == plan.result["request"] and first.costs_available is True
    assert first.decoded == decode_costed(plan.result)
    changed = {**plan.result, "request": {**plan.result["request"], "name": "edited"}}
    assert decoded_plans.costed_plan(json.dumps(changed)).request["name"] == "edited" and len(decodes) == 2


def test_the_cache_is_bounded_least_recently_used_out(plan, decodes):
    texts = [json.dumps({**plan.result, "name": f"plan {i}"}) for i in range(decoded_plans.MAX_PLANS + 1)]
    for text in texts:
        decoded_plans.costed_plan(text)
    assert len(decoded_plans._plans) == decoded_plans.MAX_PLANS
    decoded_plans.costed_plan(texts[-1])  # kept
    assert len(decodes) == decoded_plans.MAX_PLANS + 1
    decoded_plans.costed_plan(texts[0])  # the oldest went out: decoded again
    assert len(decodes) == decoded_plans.MAX_PLANS + 2


def test_the_whatif_api_answers_alike_from_the_cache_and_after_a_rerun(plan, user, decodes):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_issue(user=user)}")
    body = json.dumps({"pricing": {"utilization": 0.5}})
    url = f"/api/plans/{plan.pk}/whatif/"
    first = client.post(url, data=body, content_type="application/json").json()
    again = client.post(url, data=body, content_type="application/json").json()
    assert first == again and len(decodes) == 1
    # Another result stored under the same plan (as a re-run writes it): decoded afresh, never the old entry.
    other = copy.deepcopy(plan.result)
    other["costs"]["available"] = False
    Plan.objects.filter(pk=plan.pk).update(result=other)
    assert client.post(url, data=body, content_type="application/json").status_code == 409
    assert len(decodes) == 1  # a plan without costs to recompute is not decoded at all


def test_whatif_prices_carry_the_snapshots_date_and_start_dates_the_plans(plan, user, decodes):
    """A what-if re-costs with the plan's snapshot: its prices are dated the snapshot's day, not the day the slider
    moved, and its start dates count from the plan's own date (here moved back to 2026-10-01 as for a plan made
    then). The fixture snapshot is dated 2026-11-09 (pricing/services.py, the recorded responses' day)."""
    from datetime import date, timedelta

    stored = copy.deepcopy(plan.result)
    stored["costs"]["time_to_capacity"]["plan_date"] = "2026-10-01"
    Plan.objects.filter(pk=plan.pk).update(result=stored)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_issue(user=user)}")
    body = json.dumps({"pricing": {"utilization": 0.5}})
    answer = client.post(f"/api/plans/{plan.pk}/whatif/", data=body, content_type="application/json").json()
    assert answer["priced_on"] == plan.price_snapshot.fetched_at.date().isoformat() == "2026-11-09"
    capacity = answer["costs"]["time_to_capacity"]
    assert capacity["plan_date"] == "2026-10-01"
    start = date(2026, 10, 1) + timedelta(days=math.ceil(capacity["onprem_start_days"]))  # a part day counts whole
    assert capacity["onprem_start_date"] == start.isoformat()
