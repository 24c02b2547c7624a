"""Hypothesis over hostile request bodies (issue 15): NUL, lone surrogates, NaN/Infinity, edge-of-float numbers and
odd keys, anywhere in a request, through the API and the form. Every answer is below 500, and every plan that is
created can be read back (page, API detail, list, CSV) — on SQLite in `make test`, on PostgreSQL in
`make test-scaleout`, which refuses NUL in text and so caught what SQLite let through.
"""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from planner import services
from planner.models import Plan

pytestmark = pytest.mark.django_db

NASTY_TEXT = st.sampled_from(["\x00", "a\x00b", "\ud800", "x\udfff", "é", "<script>", "=cmd|' /C calc'!A0", "", " "])
NASTY_NUMBER = st.sampled_from([5e-324, -0.0, 0, -1, 1e308, 2**63, 1.5, float("nan"), float("inf"), -float("inf")])
LEAF = st.one_of(NASTY_TEXT, NASTY_NUMBER, st.booleans(), st.none())
BASE = {"workload": "training", "model": {"preset": "llama-3-8b"}, "training": {"tokens": 1e12, "gpus": 8},
        "hardware": {"system": "dgx-h100"}}  # fmt: skip
PATHS = [("name",), ("model", "preset"), ("model", "params"), ("training", "tokens"), ("training", "gpus"),
         ("training", "deadline_days"), ("inference", "x"), ("hardware", "system"), ("hardware", "rack_kw"),
         ("site", "pue"), ("pricing", "utilization"), ("pricing", "regions"), ("assumptions", "node_mtbf_hours"),
         ("pricing", "component_prices", "qm9700"), ("model", "\x00key"), ("\ud800",)]  # fmt: skip
FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip


def _encode(body: dict) -> str:
    """JSON as a hostile client would send it: NaN/Infinity written out, lone surrogates as \\u escapes."""
    return json.dumps(body, allow_nan=True, ensure_ascii=True)


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_issue(user=user)}")
    client.raise_request_exception = False
    return client


@FUZZ
@given(edits=st.lists(st.tuples(st.sampled_from(PATHS), LEAF), min_size=1, max_size=3))
def test_hostile_bodies_never_reach_a_500_and_what_is_saved_stays_readable(api, alice_client, edits):
    body = json.loads(json.dumps(BASE))
    for path, value in edits:
        node = body
        for key in path[:-1]:
            node = node.setdefault(key, {}) if isinstance(node.get(key), dict | None) else {}
        node[path[-1]] = value
    raw = _encode(body)
    response = api.post("/api/plans/", data=raw, content_type="application/json")
    assert response.status_code < 500, (raw, response.content[:300])
    response.content.decode("utf-8")
    form = {"workload": "training", "model_preset": "llama-3-8b", "hardware_system": "auto",
            "training_precision": "bf16", "inference_precision": "bf16", "request_json": raw}  # fmt: skip
    page = alice_client.post(reverse("planner:plan_create"), form)
    assert page.status_code < 500, raw
    for plan in Plan.objects.all():
        assert api.get(f"/api/plans/{plan.pk}/").status_code == 200
        assert alice_client.get(reverse("planner:plan_detail", args=[plan.pk])).status_code == 200
    assert api.get("/api/plans/").status_code == 200
    assert alice_client.get(reverse("planner:plan_list")).status_code == 200
