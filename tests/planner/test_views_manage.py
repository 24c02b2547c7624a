"""Managing plans in the browser: search, duplicate, delete, re-plan with assumptions, compare."""

from __future__ import annotations

import io
import json

import pytest
from django.test import Client
from django.urls import reverse
from pypdf import PdfReader

from planner import services
from planner.adapter import request_for_editing
from planner.models import Plan

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished_plan(user, training_request, django_capture_on_commit_callbacks) -> Plan:
    with django_capture_on_commit_callbacks(execute=True):
        plan = services.plan_create(owner=user, request_data=training_request, name="seventy")
    plan.refresh_from_db()
    return plan


def test_search(alice_client, user, training_request):
    Plan.objects.create(owner=user, name="Llama pretrain", workload="training", request=training_request)
    Plan.objects.create(owner=user, name="chat serving", workload="training", request=training_request)
    html = alice_client.get(reverse("planner:plan_list"), {"q": "llama"}).content.decode()
    assert "Llama pretrain" in html and "chat serving" not in html


def test_duplicate_prefills_the_form(alice_client, finished_plan):
    form = alice_client.get(reverse("planner:plan_create"), {"from": finished_plan.pk}).context["form"]
    assert form.initial["name"] == "seventy (copy)"
    assert form.initial["model_preset"] == "llama-3-70b" and form.initial["training_tokens"] == 15e12
    assert form.initial["pricing_regions"] == "us-east-1, us-west-2" and "request_json" not in form.initial


def test_duplicate_of_a_rich_request_keeps_it_whole_as_json(alice_client, user, training_request):
    training_request["assumptions"] = {"gemm_efficiency_hopper": 0.5}
    plan = Plan.objects.create(owner=user, name="rich", workload="training", request=training_request)
    form = alice_client.get(reverse("planner:plan_create"), {"from": plan.pk}).context["form"]
    # Assumptions have no form field, so the whole request travels as JSON: nothing is lost.
    shown = json.loads(form.initial["request_json"])
    assert shown == request_for_editing(training_request) and shown["assumptions"] == {"gemm_efficiency_hopper": 0.5}


def test_duplicate_of_someone_elses_plan_is_404(client, other_user, finished_plan):
    client.force_login(other_user)
    assert client.get(reverse("planner:plan_create"), {"from": finished_plan.pk}).status_code == 404


def test_delete_is_owner_only(alice_client, other_user, finished_plan):
    url = reverse("planner:plan_delete", args=[finished_plan.pk])
    mallory = Client()
    mallory.force_login(other_user)
    assert mallory.post(url).status_code == 404 and Plan.objects.filter(pk=finished_plan.pk).exists()
    assert alice_client.get(url).status_code == 405  # deleting needs a POST (and its CSRF token)
    assert alice_client.post(url).status_code == 302 and not Plan.objects.filter(pk=finished_plan.pk).exists()


def test_replan_with_changed_assumption(alice_client, finished_plan, django_capture_on_commit_callbacks):
    name, entry = next(iter(finished_plan.result["assumptions"].items()))
    changed = entry["value"] * 0.9
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(reverse("planner:plan_replan", args=[finished_plan.pk]), {f"a__{name}": changed})
    new_plan = Plan.objects.exclude(pk=finished_plan.pk).get()
    assert response["Location"] == new_plan.get_absolute_url()
    assert new_plan.request["assumptions"] == {name: pytest.approx(changed)}
    assert new_plan.result["assumptions"][name]["value"] == pytest.approx(changed)
    assert Plan.objects.get(pk=finished_plan.pk).request == finished_plan.request  # the original is untouched


def test_replan_with_bad_value_reports_the_field(alice_client, finished_plan):
    name = next(iter(finished_plan.result["assumptions"]))
    response = alice_client.post(
        reverse("planner:plan_replan", args=[finished_plan.pk]), {f"a__{name}": "-1e9"}, follow=True
    )
    assert f"assumptions.{name}" in response.content.decode()
    assert Plan.objects.count() == 1


def test_compare(alice_client, user, finished_plan, inference_request, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        other = services.plan_create(owner=user, request_data=inference_request, name="serving")
    response = alice_client.get(reverse("planner:plan_compare"), {"ids": f"{finished_plan.pk},{other.pk}"})
    assert response.status_code == 200
    rows = {row["label"]: row["values"] for row in response.context["rows"]}
    other.refresh_from_db()
    assert rows["GPUs"] == [finished_plan.result["cluster"]["gpus"], other.result["cluster"]["gpus"]]
    assert rows["Time to train (expected whole run, p50)"][1] is None and rows["Replicas"][0] is None


def test_compare_refuses_foreign_or_bad_ids(client, other_user, finished_plan):
    client.force_login(other_user)
    mine = Plan.objects.create(owner=other_user, name="mine", workload="training", request=finished_plan.request)
    foreign = f"{mine.pk},{finished_plan.pk}"
    assert client.get(reverse("planner:plan_compare"), {"ids": foreign}).status_code == 404
    assert client.get(reverse("planner:plan_compare"), {"ids": "1,abc"}).status_code == 302
    # one plan is not a comparison, nor is a plan beside itself: back to the list with the rule
    for ids in (f"{mine.pk}", f"{mine.pk},{mine.pk}"):
        single = client.get(reverse("planner:plan_compare"), {"ids": ids})
        assert single.status_code == 302 and single.url == reverse("planner:plan_list")


def test_report_pdf_and_bom_csv(alice_client, user, training_request):
    lines = [
        {
            "part_number": "P-1",
            "manufacturer": "NVIDIA",
            "description": "node",
            "category": "compute",
            "quantity": 2,
            "unit_price_usd": "100.50",
            "extended_price_usd": "201.00",
            "source": "s",
        },
        {
            "part_number": "P-2",
            "manufacturer": "NVIDIA",
            "description": "switch",
            "category": "network",
            "quantity": 3,
            "unit_price_usd": "10.00",
            "extended_price_usd": "30.00",
            "source": "s",
        },
    ]
    plan = Plan.objects.create(
        owner=user,
        name="pdf plan",
        workload="training",
        request=training_request,
        result={"bom": lines, "cluster": {"gpus": 16}, "feasible": True},
    )
    response = alice_client.get(reverse("planner:plan_report_pdf", args=[plan.pk]))
    assert response.status_code == 200 and response.content.startswith(b"%PDF-")
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(response.content)).pages)
    assert "pdf plan" in text and "231" in text  # BOM total 201.00 + 30.00, shown rounded
    assert "Page 1 of" in text
    csv_text = alice_client.get(reverse("planner:plan_bom_csv", args=[plan.pk])).content.decode()
    assert csv_text.splitlines()[1].startswith("1,P-1,NVIDIA,P-1,node,,compute,2,EA,100.50,USD,201.00")


def test_bom_total_is_absent_when_a_line_is_unpriced():
    from decimal import Decimal

    from engine.result import BomLine
    from planner.outputs.plan_view import bom_view

    def line(category: str, quantity: int, unit: str | None, extended: str | None) -> BomLine:
        prices = {"unit_price_usd": Decimal(unit) if unit else None, "priced": True}
        return BomLine(
            "P", "M", "part", category, quantity, extended_price_usd=extended and Decimal(extended), **prices
        )

    priced = bom_view([line("a", 2, "1.25", "2.50"), line("b", 1, "3.00", "3.00")], None)
    assert priced.total_usd == Decimal("5.50")  # 2.50 + 3.00, both as stored
    assert bom_view([line("a", 2, "1.25", "2.50")], Decimal("2.50")).total_usd == Decimal("2.50")  # the plan's own
    partial = bom_view([line("a", 2, "1.25", "2.50"), line("a", 1, None, None)], Decimal("2.50"))
    assert partial.total_usd is None and partial.groups[0].subtotal_usd is None
    # A unit price without a stored extended price is not multiplied out at render time: the line is unpriced.
    unextended = bom_view([line("a", 2, "1.25", None)], None)
    assert unextended.total_usd is None and unextended.groups[0].subtotal_usd is None


# The fields every training form below fills in, as a person would on the new-plan page.
_TRAINING_FORM = {
    "workload": "training",
    "model_preset": "llama-3-8b",
    "hardware_system": "dgx-h100",
    "training_tokens": "1e12",
    "training_gpus": "64",
    "training_precision": "bf16",
    "inference_precision": "bf16",
}


def test_advanced_fields_build_the_nested_request(alice_client, django_capture_on_commit_callbacks):
    form = {
        **_TRAINING_FORM,
        "training_tp": "2",
        "training_cp": "2",
        "training_recompute": "selective",
        "hardware_rack_kw": "41",
        "site_pue": "1.25",
        "pricing_years": "5",
        "pricing_regions": "us-east-1, us-west-2",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(reverse("planner:plan_create"), form)
    assert response.status_code == 302, response.context["form"].errors
    plan = Plan.objects.get()
    given = request_for_editing(plan.request)  # the stored request is normalised; compare what differs from defaults
    assert given["training"]["parallelism"] == {"tp": 2, "cp": 2, "recompute": "selective"}
    assert given["hardware"] == {"system": "dgx-h100", "rack_kw": 41}
    assert given["site"] == {"pue": 1.25} and given["pricing"]["regions"] == ["us-east-1", "us-west-2"]
    assert plan.result["training"]["parallelism"]["tp"] == 2  # the pins are honoured
    assert plan.result["training"]["parallelism"]["cp"] == 2
    # Duplicating it fills the same fields back, with nothing left over for the JSON box.
    initial = alice_client.get(reverse("planner:plan_create"), {"from": plan.pk}).context["form"].initial
    assert initial["training_tp"] == 2 and initial["pricing_regions"] == "us-east-1, us-west-2"
    assert initial["training_cp"] == 2
    assert "request_json" not in initial


def test_advanced_field_errors_land_on_their_fields(alice_client):
    form = {
        **_TRAINING_FORM,
        "hardware_rack_kw": "-3",
        "site_pue": "0.5",
    }
    errors = alice_client.post(reverse("planner:plan_create"), form).context["form"].errors
    assert "hardware.rack_kw" in " ".join(errors["hardware_rack_kw"]) and "site.pue" in " ".join(errors["site_pue"])


def test_the_activation_offload_pin_is_a_form_field_with_its_own_error(alice_client):
    """Pinning activations in host memory with a pipeline pinned is refused on that field (Megatron-Core's
    layer-level offload has no pipeline schedule), and a valid pin reaches the nested request."""
    form = {
        **_TRAINING_FORM,
        "training_pp": "2",
        "training_memory_activation_offload_layers": "8",
    }
    errors = alice_client.post(reverse("planner:plan_create"), form).context["form"].errors
    assert "needs pp 1" in " ".join(errors["training_memory_activation_offload_layers"])
    from planner.forms import PlanForm

    valid = PlanForm(data={**form, "training_pp": ""})
    assert valid.is_valid(), valid.errors
    assert valid.request_data["training"]["memory"] == {"activation_offload_layers": 8}
