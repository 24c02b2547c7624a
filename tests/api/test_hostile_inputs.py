"""Hostile input found by review (issue 15): each gets a field error or a clean 4xx, never a 500, a stored record
that later pages cannot read, or internal detail in the answer.

Every case is posted through the API, and where the form takes the same input, through the form's JSON box too.
"""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from planner import services
from planner.models import Plan, PlanRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_issue(user=user)}")
    return client


def _post(api: APIClient, raw: str):
    return api.post("/api/plans/", data=raw, content_type="application/json")


def _with(training_request: dict, section: str, **fields) -> dict:
    body = json.loads(json.dumps(training_request))
    body.setdefault(section, {}).update(fields)
    return body


# (section, field, value, the path the error must name, a word the message must hold)
EDGE_VALUES = [
    ("training", "deadline_days", 5e-324, "training.deadline_days", ">= 0.01"),
    ("training", "tokens", 1.5, "training.tokens", "global batch"),
    ("training", "gpus", 1_000_001, "training.gpus", "1,000,000"),
    ("pricing", "utilization", 5e-324, "pricing.utilization", ">= 0.01"),
    ("model", "params", 5e-324, "model.params", ">= 1,000,000"),
    ("hardware", "rack_kw", 5e-324, "hardware.rack_kw", ">= 1"),
]


@pytest.mark.parametrize(("section", "field", "value", "path", "words"), EDGE_VALUES)
def test_values_at_the_edge_of_floats_are_field_errors(api, training_request, section, field, value, path, words):
    body = _with(training_request, section, **{field: value})
    if field == "gpus":
        body["training"].pop("deadline_days", None)
    response = _post(api, json.dumps(body))
    assert response.status_code == 400, response.content
    messages = response.json()["errors"][path]
    assert any(words in message for message in messages), messages
    assert not Plan.objects.exists()


def test_a_section_the_workload_does_not_use_is_checked_for_unsafe_values(api, training_request):
    body = training_request | {"inference": {"x": 1e400}}  # json.dumps writes Infinity; the parser refuses it
    response = _post(api, json.dumps(body))
    assert response.status_code == 400
    raw = json.dumps(training_request)[:-1] + ', "inference": {"x": "a\\u0000b"}}'
    response = _post(api, raw)
    assert response.status_code == 400
    assert response.json()["errors"]["inference.x"] == ["inference.x must not contain NUL or unpaired surrogates"]
    assert not Plan.objects.exists()


def test_lone_surrogates_anywhere_are_refused_without_echoing_them(api, training_request):
    raw = json.dumps(training_request)[:-1] + ', "name": "x\\ud800", "model": {"preset": "llama-3-8b", "\\udfff": 1}}'
    response = _post(api, raw)
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert errors["name"] == ["name must not contain NUL or unpaired surrogates"]
    assert errors["model.\\udfff"] == ["model.\\udfff (a key) must not contain NUL or unpaired surrogates"]
    response.content.decode("utf-8")  # the answer itself is valid UTF-8
    assert not Plan.objects.exists()


def test_nan_and_infinity_in_the_form_json_box_are_refused(alice_client, training_request):
    for constant in ("NaN", "Infinity", "-Infinity"):
        raw = json.dumps(training_request).replace('"tokens": 15000000000000.0', f'"tokens": {constant}')
        assert constant in raw
        form = {"workload": "training", "model_preset": "llama-3-8b", "hardware_system": "auto",
                "training_precision": "bf16", "inference_precision": "bf16", "request_json": raw}  # fmt: skip
        response = alice_client.post(reverse("planner:plan_create"), form)
        assert response.status_code == 400  # the form again, with its errors
        errors = " ".join(response.context["form"].errors["request_json"])
        assert f"{constant} is not a JSON number" in errors
    assert not Plan.objects.exists()


@pytest.mark.parametrize("query", ["/?q=%00", "/?q=a%00b", "/api/plans/?name=%00", "/api/plans/?%00=1"])
def test_nul_in_query_strings_is_400_before_any_view(api, alice_client, query):
    client = api if query.startswith("/api/") else alice_client
    response = client.get(query)
    assert response.status_code == 400
    if query.startswith("/api/"):
        assert "query." in next(iter(response.json()["errors"]))


def test_the_form_body_is_capped_like_the_api(alice_client, settings):
    big = "x" * (settings.PLANNER_API_MAX_BODY_BYTES + 1)
    form = {"workload": "training", "model_preset": "llama-3-8b", "request_json": big}
    response = alice_client.post(reverse("planner:plan_create"), form)
    assert response.status_code == 400
    assert not Plan.objects.exists()


def test_an_unexpected_api_error_is_json_with_a_reference_and_no_internal_detail(api, monkeypatch, caplog):
    from planner import selectors

    def broken(*args, **kwargs):
        raise RuntimeError("secret internal detail /srv/app/engine.py")

    monkeypatch.setattr(selectors, "plan_list", broken)
    client = api
    client.raise_request_exception = False
    response = client.get("/api/plans/")
    assert response.status_code == 500
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert "secret" not in json.dumps(body) and body["reference"] in body["detail"]
    assert body["reference"] in caplog.text and "secret internal detail" in caplog.text


def test_a_failed_run_tells_the_user_a_reference_not_the_exception(user, training_request, monkeypatch, caplog):
    from planner import services

    def broken(**kwargs):
        raise ZeroDivisionError("float division by zero in engine/physical/racks.py")

    plan = Plan.objects.create(owner=user, name="p", workload="training", request=training_request)
    run = PlanRun.objects.create(plan=plan)
    monkeypatch.setattr(services, "plan_compute", broken)
    assert services.plan_run_execute(run_id=run.pk) == "failed"
    run.refresh_from_db()
    assert "ZeroDivisionError" not in run.error and "racks.py" not in run.error
    reference = run.error.split("reference ")[1].split(")")[0]
    assert reference in caplog.text and "ZeroDivisionError" in caplog.text
