"""POST /api/plans/{id}/whatif/: re-costing a plan in place (costing only), owner-only, every bad input by field.

The flip test works the break-even out by hand from the plan's own stored figures and the published finance
parameters (fixtures/prices/parameters.json: cost of capital r = 8 %, useful life n = 5 years, residual 10 % of
the hardware), never from the what-if's own answer.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from planner import services
from tests.samples import INFERENCE_REQUEST

pytestmark = pytest.mark.django_db

SYSTEM = "dgx-h100"
# 200 requests/s of Llama 3 70B on DGX H100: 20 systems whose price is most of the hardware, served for a year.
SERVING_REQUEST = {
    **copy.deepcopy(INFERENCE_REQUEST),
    "model": {"preset": "llama-3-70b"},
    "inference": {**INFERENCE_REQUEST["inference"], "requests_per_s": 200},
    "hardware": {"system": SYSTEM},
}


@pytest.fixture
def snapshot():
    from pricing.services import price_snapshot_load_fixtures

    return price_snapshot_load_fixtures()


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_issue(user=user)}")
    return client


@pytest.fixture
def plan(user, snapshot):
    return services.plan_create_synchronous(owner=user, request_data=copy.deepcopy(SERVING_REQUEST))


def _whatif(client, plan_id, body, raw: str | None = None):
    data = raw if raw is not None else json.dumps(body)
    return client.post(f"/api/plans/{plan_id}/whatif/", data=data, content_type="application/json")


def _system_line(plan) -> dict:
    return next(line for line in plan.result["bom"] if line["category"] == "compute")


def test_verdict_flips_when_the_system_price_crosses_the_hand_worked_break_even(api, plan):
    costs = plan.result["costs"]
    assert costs["verdict"]["choice"] == "rent"
    # The plan's own figures: the cheapest obtainable rent option R, the owned cluster's job cost J0 at the system
    # price p0, the job's share of the cluster's yearly cost (job GPU-hours / (cluster GPUs x 8760 h x utilisation)).
    rent = min(
        Decimal(o["job_usd"]) for o in costs["comparison"]["options"] if o["obtainable"] and o["choice"] == "rent"
    )
    owned = next(o for o in costs["comparison"]["options"] if o["option"] == "onprem_shared")
    j0 = Decimal(owned["job_usd"])
    line = _system_line(plan)
    p0, qty = Decimal(line["unit_price_usd"]), Decimal(line["quantity"])
    gpus, utilisation = Decimal(plan.result["cluster"]["gpus"]), Decimal(costs["onprem"]["utilization"])
    job_gpu_hours = Decimal(plan.result["inference"]["gpus"]) * 8760  # a year of serving
    share = job_gpu_hours / (gpus * 8760 * utilisation)
    assert rent < j0  # renting wins as planned
    # (1) Every other term of J is >= 0 and J is affine in p, so for p < p0: J(p) >= J0 x p / p0. Above
    # p0 x R / J0 renting still wins.
    still_rent = p0 * rent / j0 * Decimal("1.03")
    # (2) Lowering p by dp lowers capex by at least qty x dp and the residual by 10 % of that, so the capital
    # charge (capex - residual x (1+r)^-n) x r / (1 - (1+r)^-n) falls by at least
    # qty x dp x (1 - 0.1 x 1.08^-5) x 0.08 / (1 - 1.08^-5); running costs do not rise. Below the price where
    # that alone takes J under R, building wins.
    r, n = Decimal("0.08"), 5
    discount = (1 + r) ** -n
    slope = share * qty * (1 - Decimal("0.1") * discount) * r / (1 - discount)
    builds = (p0 - (j0 - rent) / slope) * Decimal("0.97")
    assert 0 < builds < still_rent < p0

    high = _whatif(api, plan.pk, {"pricing": {"component_prices": {SYSTEM: float(still_rent)}}})
    low = _whatif(api, plan.pk, {"pricing": {"component_prices": {SYSTEM: float(builds)}}})
    assert high.status_code == 200 and low.status_code == 200, (high.content, low.content)
    assert high.json()["verdict"]["choice"] == "rent"
    assert low.json()["verdict"]["choice"] == "build"
    assert low.json()["costs"]["verdict"] == low.json()["verdict"]
    # The price really applied: the system line is priced at the what-if price in the recomputed capex.
    assert Decimal(low.json()["costs"]["onprem"]["capex_usd"]) < Decimal(costs["onprem"]["capex_usd"])
    # Nothing is stored: the plan keeps its own answer.
    plan.refresh_from_db()
    assert plan.result["costs"]["verdict"]["choice"] == "rent"


def test_no_override_gives_back_the_plans_own_verdict(api, plan):
    body = _whatif(api, plan.pk, {}).json()
    stored = plan.result["costs"]
    assert body["verdict"]["choice"] == stored["verdict"]["choice"]
    assert body["verdict"]["job_usd"] == stored["verdict"]["job_usd"]
    assert body["costs"]["onprem"]["capex_usd"] == stored["onprem"]["capex_usd"]


def test_utilisation_moves_the_owned_cost_per_gpu_hour_inversely(api, plan):
    """$/GPU-hour = (capital charge + running costs) / (GPUs x 8760 x utilisation). The capital charge does not
    depend on utilisation, so at 40 % it alone costs capital / (GPUs x 8760 x 0.4) per used GPU-hour: a floor."""
    stored = plan.result["costs"]["onprem"]
    body = _whatif(api, plan.pk, {"pricing": {"utilization": 0.4}}).json()
    gpus = Decimal(plan.result["cluster"]["gpus"])
    capital = Decimal(stored["finance"]["capital_charge_usd_per_year"])
    # At 40 % the capital charge alone costs capital / (GPUs x 8760 x 0.4) per used GPU-hour.
    floor = capital / (gpus * 8760 * Decimal("0.4"))
    assert Decimal(body["costs"]["onprem"]["usd_per_gpu_hour"]) > floor
    assert body["pricing"]["utilization"] == 0.4


def test_owner_only_404(plan, other_user):
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_issue(user=other_user)}")
    assert _whatif(other, plan.pk, {}).status_code == 404
    assert _whatif(other, 999999, {}).status_code == 404


def test_session_needs_csrf(user, plan):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    assert _whatif(client, plan.pk, {}).status_code == 403


@pytest.mark.parametrize(
    ("body", "path", "words"),
    [
        ({"pricing": {"utilization": -0.5}}, "pricing.utilization", ">= 0.01"),
        ({"pricing": {"utilization": "high"}}, "pricing.utilization", "number"),
        ({"site": {"electricity_usd_per_kwh": -1}}, "site.electricity_usd_per_kwh", "> 0"),
        ({"pricing": {"years": 2.5}}, "pricing.years", "whole"),
        ({"pricing": {"horizon": 3}}, "pricing.horizon", "not a known field"),
        ({"deadline_days": 30}, "deadline_days", "not a what-if field"),
        ({"site": {"pue": 1.2}}, "site.pue", "re-plan"),
        ({"pricing": {"parameters": {"cost_of_capital": 2}}}, "pricing.parameters.cost_of_capital", "<= 0.5"),
        ({"pricing": {"component_prices": {SYSTEM: 0}}}, f"pricing.component_prices.{SYSTEM}", "> 0"),
        ({"pricing": "cheap"}, "pricing", "object"),
    ],
)
def test_bad_input_is_a_field_error(api, plan, body, path, words):
    response = _whatif(api, plan.pk, body)
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert path in errors, errors
    assert any(words in message for message in errors[path]), errors[path]


@pytest.mark.parametrize("raw", ['{"pricing": {"utilization": NaN}}', '{"pricing": ', "[1, 2"])
def test_malformed_json_and_nan_are_refused(api, plan, raw):
    response = _whatif(api, plan.pk, None, raw=raw)
    assert response.status_code == 400
    assert "JSON" in response.json()["detail"]


def test_a_list_body_is_refused_by_name(api, plan):
    response = _whatif(api, plan.pk, [1, 2])
    assert response.status_code == 400 and "pricing" in json.dumps(response.json())


def test_a_plan_without_costs_is_a_conflict(api, user, training_request):
    plan = services.plan_create(owner=user, request_data=training_request)  # queued, not run (no on_commit)
    assert _whatif(api, plan.pk, {}).status_code == 409


def test_openapi_documents_the_whatif_body(client):
    schema = client.get("/api/schema/?format=json").json()
    post = schema["paths"]["/api/plans/{id}/whatif/"]["post"]
    ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    name = ref.rsplit("/", 1)[-1]
    assert name.startswith("WhatIfRequest")
    assert {"pricing", "site"} <= set(schema["components"]["schemas"][name]["properties"])


SLIDER_FIELDS = "onprem.capex_usd,onprem.opex_usd_per_year,onprem.tco_usd,onprem.capex_range,verdict"


def _whatif_fields(client, plan_id, body, fields: str):
    return client.post(
        f"/api/plans/{plan_id}/whatif/?fields={fields}", data=json.dumps(body), content_type="application/json"
    )


def test_fields_answer_only_the_figures_a_slider_shows(api, plan):
    """With `fields` the answer's `costs` holds those paths and nothing else, each the same JSON as the full answer
    at that path (the default, still the whole section); the answer shrinks from the whole section to a few
    hundred bytes."""
    body = {"pricing": {"utilization": 0.6}}
    full = _whatif(api, plan.pk, body)
    small = _whatif_fields(api, plan.pk, body, SLIDER_FIELDS)
    assert full.status_code == 200 and small.status_code == 200, small.content
    whole, part = full.json()["costs"], small.json()["costs"]
    assert set(part) == {"onprem", "verdict"}
    assert set(part["onprem"]) == {"capex_usd", "opex_usd_per_year", "tco_usd", "capex_range"}
    for key in part["onprem"]:
        assert part["onprem"][key] == whole["onprem"][key]
    assert part["verdict"] == whole["verdict"] == small.json()["verdict"]
    assert {"cloud", "comparison", "parameters"} <= set(whole)  # the default is the whole section
    assert len(small.content) < 4_000 < 20_000 < len(full.content)


def test_a_field_path_into_a_list_applies_to_every_row(api, plan):
    full = _whatif(api, plan.pk, {}).json()["costs"]
    rows = _whatif_fields(api, plan.pk, {}, "cloud.job_usd,cloud.region").json()["costs"]["cloud"]
    assert len(full["cloud"]) > 1
    assert rows == [{"region": row["region"], "job_usd": row["job_usd"]} for row in full["cloud"]]
    answer = _whatif_fields(api, plan.pk, {}, "onprem.capex_usd").json()
    assert answer["costs"] == {"onprem": {"capex_usd": full["onprem"]["capex_usd"]}}
    assert answer["verdict"] is None  # not asked for


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ("onprem.capex", "'capex' is not a field of costs.onprem"),
        ("onprem.capex_usd,verdikt", "'verdikt' is not a field of costs"),
        ("onprem.capex_usd.cents", "'cents' is not a field of costs.onprem.capex_usd"),
        ("", "fields must name costs fields"),
        ("verdict,,onprem", "fields must name costs fields"),
    ],
)
def test_a_bad_field_is_a_400_naming_it(api, plan, fields, words):
    response = _whatif_fields(api, plan.pk, {}, fields)
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert list(errors) == ["fields"] and words in errors["fields"][0]


def test_fields_is_documented_in_the_openapi_schema(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/plans/{id}/whatif/"]["post"]
    (param,) = [p for p in operation["parameters"] if p["name"] == "fields"]
    assert param["in"] == "query" and not param.get("required") and "onprem.capex_usd" in param["description"]
