"""The API round trip of a plan inside an envelope: a capacity request and a training request with an envelope."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from planner import services
from planner.models import Plan

pytestmark = pytest.mark.django_db

PLANS = "/api/plans/"


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_issue(user=user)}")
    return client


def _run(api, body, capture):
    with capture(execute=True):
        response = api.post(PLANS, data=json.dumps(body), content_type="application/json")
    assert response.status_code == 202, response.json()
    return api.get(response.json()["url"]).json()


def test_capacity_plan_round_trip(api, django_capture_on_commit_callbacks):
    """The largest DGX H100 cluster under a capex limit: the plan stays under it by the plan's own capex figure,
    names capex as the binding limit, and carries the usual sections."""
    body = {"workload": "capacity", "hardware": {"system": "dgx-h100"}, "envelope": {"capex_usd": 50_000_000}}
    detail = _run(api, body, django_capture_on_commit_callbacks)
    assert detail["run"]["status"] == "succeeded"
    result = detail["result"]
    assert result["workload"] == "capacity" and result["feasible"] is True
    for key in ("cluster", "fabric", "storage", "power", "cooling", "bom", "costs", "envelope"):
        assert result.get(key), key
    capex = Decimal(result["costs"]["onprem"]["capex_usd"])
    assert 0 < capex <= Decimal(50_000_000)
    envelope = result["envelope"]
    assert envelope["binding"] == "capex_usd" and "capex" in envelope["sentence"]
    # one more system breaks the limit: the explain entry records the build above the answer
    above = result["explain"]["envelope.binding"]["inputs"]
    assert above["one_system_more.systems"] == result["cluster"]["systems"] + 1
    assert above["one_system_more.capex_usd"] > 50_000_000
    assert detail["request"]["envelope"]["capex_usd"] == 50_000_000


def test_capacity_plan_refuses_bad_envelope(api):
    body = {"workload": "capacity", "hardware": {"system": "dgx-h100"}, "envelope": {"facility_mw": -1, "mw": 3}}
    response = api.post(PLANS, data=json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert {"envelope.facility_mw", "envelope.mw"} <= set(errors)
    assert Plan.objects.count() == 0


def test_training_with_too_small_envelope_is_infeasible(api, django_capture_on_commit_callbacks):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-8b"},
        "training": {"tokens": 3e12, "deadline_days": 30},
        "hardware": {"system": "dgx-h100"},
        "envelope": {"racks": 3},
    }
    detail = _run(api, body, django_capture_on_commit_callbacks)
    result = detail["result"]
    assert result["feasible"] is False
    assert any("envelope" in p and "racks" in p for p in result["problems"])
    assert result["envelope"]["binding"] == "racks"


def test_openapi_request_body_has_the_envelope(api):
    """The OpenAPI request body follows the one pydantic schema: the capacity workload and the envelope's limits."""
    text = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").content.decode()
    schema = json.loads(text)
    blob = json.dumps(schema)
    assert '"capacity"' in blob
    for key in ("facility_mw", "it_mw", "racks", "capex_usd"):
        assert f'"{key}"' in blob, key
