"""The plan page of a capacity plan (no model): it renders, shows the envelope's binding limit and the trade-off."""

from __future__ import annotations

import pytest

from planner import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def capacity_plan(user, django_capture_on_commit_callbacks):
    from pricing.services import price_snapshot_load_fixtures

    price_snapshot_load_fixtures()
    body = {"workload": "capacity", "hardware": {"system": "gb200-nvl72"}, "envelope": {"facility_mw": 5}}
    with django_capture_on_commit_callbacks(execute=True):
        plan = services.plan_create(owner=user, request_data=body)
    plan.refresh_from_db()
    return plan


def test_capacity_plan_page_renders_with_its_binding_limit(alice_client, capacity_plan):
    assert capacity_plan.name == "gb200-nvl72 capacity"
    response = alice_client.get(capacity_plan.get_absolute_url())
    assert response.status_code == 200
    html = response.content.decode()
    assert capacity_plan.result["envelope"]["binding"] == "facility_mw"
    assert 'id="envelope"' in html and "Binding limit" in html and "(binding)" in html


FORM = {
    "workload": "capacity",
    "model_preset": "llama-3-70b",  # the page always sends the model; a capacity plan leaves it out
    "hardware_system": "dgx-h100",
    "training_precision": "bf16",
    "inference_precision": "bf16",
}


def test_form_plans_capacity_inside_the_envelope(alice_client, django_capture_on_commit_callbacks):
    from django.urls import reverse

    from planner.models import Plan

    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(reverse("planner:plan_create"), {**FORM, "envelope_gpus": "100"})
    plan = Plan.objects.get()
    assert response.status_code == 302
    assert plan.workload == "capacity" and "model" not in plan.request
    assert plan.request["envelope"]["gpus"] == 100
    # 100 GPUs of 8-GPU systems: 12 systems (96 GPUs); a 13th would make 104
    assert plan.result["cluster"]["gpus"] == 96 and plan.result["envelope"]["binding"] == "gpus"


def test_form_puts_envelope_errors_on_their_fields(alice_client):
    from django.urls import reverse

    response = alice_client.post(
        reverse("planner:plan_create"), {**FORM, "envelope_facility_mw": "-1", "envelope_racks": "2.5"}
    )
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert {"envelope_facility_mw", "envelope_racks"} <= set(errors)


def test_form_capacity_without_limits_says_so(alice_client):
    from django.urls import reverse

    response = alice_client.post(reverse("planner:plan_create"), FORM)
    assert response.status_code == 400
    text = " ".join(m for messages in response.context["form"].errors.values() for m in messages)
    assert "envelope is required" in text


def test_capacity_plan_exports(alice_client, capacity_plan):
    """The PDF report, both SVGs and the BOM CSV of a plan without a model."""
    from django.urls import reverse

    for name in ("plan_report_pdf", "plan_topology_svg", "plan_racks_svg", "plan_bom_csv"):
        response = alice_client.get(reverse(f"planner:{name}", args=[capacity_plan.pk]))
        assert response.status_code == 200, name
