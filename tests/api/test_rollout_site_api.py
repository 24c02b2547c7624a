"""The API side of issue 17's facility fields: the roll-out and site fields in the OpenAPI request body (from the
one pydantic schema), and a bad value refused with the field named (400, never a 500)."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from planner import services

pytestmark = pytest.mark.django_db

PLANS = "/api/plans/"
BODY = {
    "workload": "training",
    "model": {"preset": "llama-3-8b"},
    "training": {"tokens": 1e11, "gpus": 8},
    "hardware": {"system": "dgx-h100"},
}


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_issue(user=user)}")
    return client


def test_openapi_request_body_has_rollout_and_site_fields(api):
    blob = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").content.decode()
    for key in ("rollout", "per_phase", "months_between", "scalable_units", "ambient_c", "ownership", "owned"):
        assert f'"{key}"' in blob, key


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"rollout": {"by": "scalable_units", "per_phase": 1.5}}, "rollout.per_phase"),
        ({"rollout": {"by": "halls", "per_phase": 2}}, "rollout.by"),
        ({"rollout": {"per_phase": 1, "months_between": -1}}, "rollout.months_between"),
        ({"site": {"ambient_c": 99}}, "site.ambient_c"),
        ({"site": {"ownership": "rented"}}, "site.ownership"),
    ],
)
def test_bad_facility_inputs_are_field_errors(api, extra, field):
    response = api.post(PLANS, data=json.dumps({**BODY, **extra}), content_type="application/json")
    assert response.status_code == 400
    assert field in json.dumps(response.json())
