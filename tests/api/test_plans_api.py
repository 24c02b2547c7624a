"""The REST API: tokens, ownership, validation errors, idempotent create, BOM exports."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from planner import services
from planner.adapter import request_for_editing
from planner.models import ApiToken, Plan, PlanRun

pytestmark = pytest.mark.django_db

PLANS = "/api/plans/"


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_issue(user=user)}")
    return client


@pytest.fixture
def other_api(other_user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_issue(user=other_user)}")
    return client


def _create(api, body, **headers):
    return api.post(PLANS, data=json.dumps(body), content_type="application/json", **headers)


def test_requires_authentication(client):
    assert client.get(PLANS).status_code in (401, 403)
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert bad.get(PLANS).status_code == 401


def test_create_then_read(api, training_request, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = _create(api, training_request)
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued" and body["created"] is True and body["url"].endswith(f"/api/plans/{body['id']}/")
    detail = api.get(body["url"]).json()
    # Stored normalised: the preset's shape and every default filled, the same request as the one sent.
    assert detail["request"]["model"]["layers"] == 80 and detail["request"]["training"]["gpus"] is None
    assert request_for_editing(detail["request"]) == request_for_editing(training_request)
    assert detail["run"]["status"] == "succeeded" and detail["run"]["progress_percent"] == 100
    assert detail["result"]["cluster"]["gpus"] == detail["gpus"] > 0
    listing = api.get(PLANS).json()
    assert listing["count"] == 1 and listing["results"][0]["id"] == body["id"]


def test_validation_errors_name_every_field(api, training_request):
    training_request["training"]["tokens"] = -1
    training_request["model"] = {"preset": "llama-3-70b", "colour": "blue"}
    training_request["hardware"]["system"] = "dgx-z9"
    response = _create(api, training_request)
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert {"training.tokens", "model.colour", "hardware.system"} <= set(errors)
    assert Plan.objects.count() == 0


@pytest.mark.parametrize("raw", ["{", '{"workload": NaN}', "[]", "null", '"text"'])
def test_malformed_and_non_object_bodies_are_400(api, raw):
    response = api.post(PLANS, data=raw, content_type="application/json")
    assert response.status_code == 400 and response.json()["detail"]
    assert Plan.objects.count() == 0


def test_oversized_body_is_413(api, settings, training_request):
    settings.PLANNER_API_MAX_BODY_BYTES = 200
    training_request["name"] = "x" * 300
    assert _create(api, training_request).status_code == 413
    assert Plan.objects.count() == 0


def test_a_number_of_thousands_of_digits_is_refused_in_plain_words(api, training_request):
    """Python cannot turn an integer of more than 4,300 digits into a number; the answer says the number is too
    long, not which interpreter setting to raise."""
    training_request["training"]["tokens"] = "DIGITS"
    body = json.dumps(training_request).replace('"DIGITS"', "1" + "0" * 5000)
    response = api.post("/api/plans/", data=body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "detail": "JSON parse error - a number is too long: no field takes a number of more than 4,300 digits."
    }
    assert Plan.objects.count() == 0


def test_oversized_body_is_413_with_the_default_limits(api, training_request):
    """With the shipped settings Django's own upload cap equals the API's 64 KiB and stops the body first: the
    answer is still the documented 413 with a detail naming the limit, not a 400 for a malformed body."""
    training_request["name"] = "x" * 70_000
    response = _create(api, training_request)
    assert response.status_code == 413
    assert response.json() == {"detail": "Request body too large; the limit is 65,536 bytes."}
    assert Plan.objects.count() == 0


def test_idempotency_key_makes_retries_safe(api, training_request):
    first = _create(api, training_request, HTTP_IDEMPOTENCY_KEY="abc-1")
    again = _create(api, training_request, HTTP_IDEMPOTENCY_KEY="abc-1")
    assert first.status_code == again.status_code == 202
    assert first.json()["id"] == again.json()["id"] and again.json()["created"] is False
    assert Plan.objects.count() == 1 and PlanRun.objects.count() == 1
    training_request["training"]["tokens"] = 1e12
    conflict = _create(api, training_request, HTTP_IDEMPOTENCY_KEY="abc-1")
    assert conflict.status_code == 409 and Plan.objects.count() == 1
    assert _create(api, training_request, HTTP_IDEMPOTENCY_KEY="abc-2").status_code == 202


def test_idempotency_keys_are_per_user(api, other_api, training_request):
    mine = _create(api, training_request, HTTP_IDEMPOTENCY_KEY="same").json()["id"]
    theirs = _create(other_api, training_request, HTTP_IDEMPOTENCY_KEY="same").json()["id"]
    assert mine != theirs


def test_plans_are_private(api, other_api, training_request):
    plan_id = _create(api, training_request).json()["id"]
    for path in (f"{PLANS}{plan_id}/", f"{PLANS}{plan_id}/bom.csv", f"{PLANS}{plan_id}/bom.json"):
        assert other_api.get(path).status_code == 404
    assert other_api.delete(f"{PLANS}{plan_id}/").status_code == 404
    assert other_api.get(PLANS).json()["count"] == 0
    assert Plan.objects.filter(pk=plan_id).exists()


def test_delete(api, training_request):
    plan_id = _create(api, training_request).json()["id"]
    assert api.delete(f"{PLANS}{plan_id}/").status_code == 204
    assert api.get(f"{PLANS}{plan_id}/").status_code == 404
    assert not PlanRun.objects.exists()


def test_list_filters(api, user, training_request, inference_request):
    Plan.objects.create(
        owner=user,
        name="t",
        workload="training",
        request=training_request,
        result={"cluster": {"system": "dgx-h100", "gpus": 8}},
    )
    Plan.objects.create(
        owner=user,
        name="i",
        workload="inference",
        request=inference_request,
        result={"cluster": {"system": "dgx-b200", "gpus": 16}},
    )
    assert [p["name"] for p in api.get(PLANS, {"workload": "inference"}).json()["results"]] == ["i"]
    assert [p["name"] for p in api.get(PLANS, {"system": "dgx-h100"}).json()["results"]] == ["t"]
    assert api.get(PLANS, {"created_after": "2999-01-01"}).json()["count"] == 0
    assert api.get(PLANS, {"created_before": "2999-01-01T00:00:00Z"}).json()["count"] == 2
    assert api.get(PLANS, {"created_after": "yesterday"}).status_code == 400
    assert api.get(PLANS, {"workload": "painting"}).status_code == 400


def test_bom_exports(api, user, training_request):
    lines = [
        {
            "part_number": "DGXH-G640F+P2CMI36",
            "manufacturer": "NVIDIA",
            "description": "DGX H100",
            "category": "compute",
            "quantity": 4,
            "unit_price_usd": "289000.10",
            "extended_price_usd": "1156000.40",
            "source": "vendor quote",
        },
        {
            "part_number": '=HYPERLINK("x")',
            "manufacturer": "@evil",
            "description": "-cable",
            "category": "cable",
            "quantity": 3,
            "source": "catalog",
        },
    ]
    plan = Plan.objects.create(
        owner=user, name="b", workload="training", request=training_request, result={"bom": lines, "cluster": {}}
    )
    as_json = api.get(f"{PLANS}{plan.pk}/bom.json").json()
    assert as_json["lines"] == lines
    response = api.get(f"{PLANS}{plan.pk}/bom.csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == f'attachment; filename="plan-{plan.pk}-bom.csv"'
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert rows[0]["extended_price"] == "1156000.40"  # 4 x 289000.10, by hand
    assert rows[0]["currency"] == "USD" and rows[0]["line_no"] == "1"
    # Formula injection: text cells that start with = @ - are neutralised; numbers are not touched.
    assert rows[1]["part_number"].startswith("'=") and rows[1]["manufacturer"] == "'@evil"
    assert rows[1]["description"] == "'-cable" and rows[1]["unit_price"] == "" and rows[1]["quantity"] == "3"


def test_bom_of_plan_without_one_is_404(api, user, training_request):
    plan = Plan.objects.create(owner=user, name="b", workload="training", request=training_request)
    response = api.get(f"{PLANS}{plan.pk}/bom.csv")
    assert response.status_code == 404 and "bill of materials" in response.json()["detail"]


def test_catalog_has_sources(api):
    body = api.get("/api/catalog/").json()
    assert body["version"]
    records = [
        record
        for records in body["kinds"].values()
        for record in (records if isinstance(records, list) else records.get("records", []))
    ]
    assert len(records) >= 20
    assert all(record.get("source") and record.get("as_of") for record in records)


def test_price_snapshots_and_offers(api):
    from pricing.services import price_snapshot_load_fixtures

    snapshot = price_snapshot_load_fixtures()
    snapshots = api.get("/api/prices/snapshots/").json()
    assert snapshots["results"][0]["id"] == snapshot.pk
    offers = api.get(
        f"/api/prices/snapshots/{snapshot.pk}/offers/",
        {"instance_type": "p5.48xlarge", "region": "us-east-1", "purchase": "on_demand"},
    ).json()
    assert offers["count"] == 1
    assert offers["results"][0]["usd_per_hour"] == "55.040000"  # Decimal as a string (cloud-pricing.md golden)


def test_rate_limit_answers_429_with_retry_after(api, settings):
    from django.core.cache import cache

    cache.clear()
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {"user": "3/min", "plan_create": "1/min"}
    settings.REST_FRAMEWORK = rest
    from rest_framework.throttling import SimpleRateThrottle

    original = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = rest["DEFAULT_THROTTLE_RATES"]
    try:
        statuses = [api.get(PLANS).status_code for _ in range(4)]
        assert statuses[:3] == [200, 200, 200] and statuses[3] == 429
        assert int(api.get(PLANS)["Retry-After"]) > 0
    finally:
        SimpleRateThrottle.THROTTLE_RATES = original
        cache.clear()


def test_schema_and_docs_are_served_without_cdn(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200 and b"/api/plans/" in schema.content
    docs = client.get("/api/docs/").content.decode()
    assert "cdn" not in docs.lower() and "/static/drf_spectacular_sidecar/" in docs


def test_api_token_command_prints_a_key_that_is_stored_only_as_its_digest(user, capsys):
    import hashlib

    from django.core.management import call_command

    from planner.models import ApiToken

    call_command("api_token", "alice")
    key = capsys.readouterr().out.strip()
    stored = ApiToken.objects.get(user=user)
    assert stored.digest == hashlib.sha256(key.encode()).hexdigest() and key not in (stored.digest, stored.prefix)
    assert stored.prefix == key[:8] and len(key) >= 43  # 32 random bytes, URL-safe base64
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get(PLANS).status_code == 200
    api.credentials(HTTP_AUTHORIZATION=f"Token {stored.digest}")  # the digest itself opens nothing
    assert api.get(PLANS).status_code == 401
    assert reverse("api:plan-list") == PLANS


def test_topology_and_diagrams(api, user, training_request, django_capture_on_commit_callbacks):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-70b"},
        "training": {"tokens": 15e12, "gpus": 1024},
        "hardware": {"system": "dgx-h100"},
    }
    with django_capture_on_commit_callbacks(execute=True):
        plan_id = _create(api, body).json()["id"]
    topology = api.get(f"{PLANS}{plan_id}/topology.json").json()
    # 1,024 GPUs = 128 DGX H100: with the UFM displacing one node per 4 SU (H100 RA Table 4), 5 SU
    # are needed, so 5 x 8 = 40 rail leaves; 8 node links per system.
    leaf = next(node for node in topology["nodes"] if node["id"] == "compute.leaf")
    assert leaf["count"] == 40 and topology["fabric"]["compute"]["leaf"] == 40
    node_leaf = next(link for link in topology["links"] if link["tier"] == "node-leaf" and link["fabric"] == "compute")
    assert node_leaf["links"] == 128 * 8
    for name in ("topology.svg", "racks.svg"):
        response = api.get(f"{PLANS}{plan_id}/{name}")
        assert response.status_code == 200 and response["Content-Type"].startswith("image/svg+xml")
        assert response.content.lstrip().startswith(b"<svg") and b"<style" in response.content
    racks = api.get(f"{PLANS}{plan_id}/racks.svg").content.decode()
    assert "Compute x 32" in racks  # 128 DGX at 4 per rack (DC Design H100: 4 x 10.2 = 40.8 kW)


def test_token_page_makes_replaces_and_revokes(alice_client, user):
    page = alice_client.post("/account/api-token/", {"action": "issue"})
    key = page.context["new_key"]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get(PLANS).status_code == 200
    newer = alice_client.post("/account/api-token/", {"action": "issue"}).context["new_key"]
    assert newer != key and api.get(PLANS).status_code == 401  # the replaced token stops working
    alice_client.post("/account/api-token/", {"action": "revoke"})
    api.credentials(HTTP_AUTHORIZATION=f"Token {newer}")
    assert api.get(PLANS).status_code == 401 and not ApiToken.objects.filter(user=user).exists()
    assert "You have no token." in alice_client.get("/account/api-token/").content.decode()


@pytest.mark.parametrize("plans", [2, 12])
def test_list_costs_the_same_queries_for_2_or_12_plans(
    api, user, training_request, django_assert_max_num_queries, plans
):
    """No query per plan: token, count, page of plans, their runs (one prefetch) = 4, whatever the page size."""
    for number in range(plans):
        plan = Plan.objects.create(
            owner=user,
            name=f"p{number}",
            workload="training",
            request=training_request,
            result={"cluster": {"system": "dgx-h100", "gpus": 8}},
        )
        PlanRun.objects.create(plan=plan, status="succeeded")
        PlanRun.objects.create(plan=plan, status="queued")  # the newer run is the one listed
    with django_assert_max_num_queries(4):
        body = api.get(PLANS, {"workload": "training", "system": "dgx-h100"}).json()
    assert body["count"] == plans and len(body["results"]) == plans
    assert {p["status"] for p in body["results"]} == {"queued"} and {p["gpus"] for p in body["results"]} == {8}


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"workload": ""}, "workload", "must be training, inference or capacity"),
        ({"system": ""}, "system", "must not be empty"),
        (
            {"created_before": "2024-13-01"},
            "created_before",
            "must be an ISO 8601 date or date-time between 1970 and 9999",
        ),
    ],
)
def test_list_filter_given_empty_or_malformed_is_400_by_name(api, params, field, message):
    response = api.get(PLANS, params)
    assert response.status_code == 400 and response.json()["errors"] == {field: [message]}


def test_list_filters_naive_dates_as_utc_midnight(api, user, training_request):
    plan = Plan.objects.create(owner=user, name="p", workload="training", request=training_request)
    Plan.objects.filter(pk=plan.pk).update(created_at="2026-03-01T00:30:00Z")
    assert api.get(PLANS, {"created_after": "2026-03-01"}).json()["count"] == 1
    assert api.get(PLANS, {"created_before": "2026-03-01T00:30:00"}).json()["count"] == 0
    assert api.get(PLANS, {"created_before": "2026-03-01T01:30:00+01:00"}).json()["count"] == 0
    assert api.get(PLANS, {"created_before": "2026-03-01T01:31:00+01:00"}).json()["count"] == 1


def test_schema_request_body_is_the_engine_schema(client):
    """The OpenAPI request body is rendered from the pydantic PlanRequest: every field of every section is
    documented (the old DRF copy had drifted: no interleave, zero_stage, learned_positions, biases)."""
    from engine.request.schema_lookup import model_at
    from engine.request.spec import PlanRequest

    schema = client.get("/api/schema/", {"format": "json"}).json()
    components = schema["components"]["schemas"]
    body = schema["paths"]["/api/plans/"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    request = components[body["$ref"].rsplit("/", 1)[-1]]
    assert set(request["properties"]) == set(PlanRequest.model_fields)
    for section in ("model", "training", "inference", "hardware", "site", "pricing"):
        model = model_at((section,))
        assert set(components[model.__name__]["properties"]) == set(model.model_fields), section
    parallelism = components["TrainingParallelism"]["properties"]
    assert {"interleave", "zero_stage", "ep"} <= set(parallelism)
    assert {"learned_positions", "biases"} <= set(components["ModelSpec"]["properties"])
    assert "required" not in components["ModelSpec"]  # a preset alone is a whole model
    # OpenAPI 3.0 dialect: boolean exclusive bounds, nullable instead of a "null" type.
    assert components["TrainingSpec"]["properties"]["tokens"] == {
        "description": "Training tokens (e.g. 1.5e13).",
        "exclusiveMinimum": True,
        "minimum": 0,
        "maximum": 1e16,
        "title": "Tokens",
        "type": "number",
    }
    assert parallelism["zero_stage"]["nullable"] is True and parallelism["zero_stage"]["maximum"] == 3
    assert '"type": "null"' not in json.dumps(schema)


def test_schema_rejects_what_the_documented_bounds_reject(api, training_request):
    """A value just past a documented bound is a 400 naming the field, with the bound in the message."""
    training_request["training"]["deadline_days"] = 3651
    response = _create(api, training_request)
    assert response.status_code == 400
    assert response.json()["errors"] == {"training.deadline_days": ["training.deadline_days must be <= 3,650"]}
