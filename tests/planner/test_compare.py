"""Compare that compares: request, assumption and BOM differences from hand-made plans, the compare page's
highlighting, and a derived plan's page saying what changed from its parent."""

from __future__ import annotations

import copy
from decimal import Decimal
from types import SimpleNamespace

import pytest

from planner import services
from planner.compare import Change, bom_changes, request_changes

pytestmark = pytest.mark.django_db


def _line(part, qty, price, description="part"):
    return SimpleNamespace(part_number=part, quantity=qty, unit_price_usd=price, description=description)


def test_request_changes_lists_each_changed_field_by_path():
    before = {
        "name": "a",
        "workload": "training",
        "training": {"tokens": 15e12, "deadline_days": 90},
        "pricing": {"years": 3, "regions": ["us-east-1"], "parameters": {}},
    }
    after = copy.deepcopy(before)
    after["name"] = "b"  # bookkeeping, not an input
    after["training"]["deadline_days"] = 60
    after["pricing"]["regions"] = ["us-east-1", "us-west-2"]
    after["pricing"]["parameters"] = {"cost_of_capital": 0.1}
    assert request_changes(before, after) == (
        Change("pricing.parameters.cost_of_capital", None, 0.1),
        Change("pricing.regions", ["us-east-1"], ["us-east-1", "us-west-2"]),
        Change("training.deadline_days", 90, 60),
    )
    assert request_changes(before, copy.deepcopy(before)) == ()


def test_bom_changes_added_removed_quantity_and_price():
    before = [_line("DGX-H100", 4, Decimal("270000.00")), _line("QM9700", 2, Decimal("30000")), _line("OLD", 1, None)]
    after = [_line("DGX-H100", 8, Decimal("250000.00")), _line("QM9700", 2, Decimal("30000.00")), _line("NEW", 3, 5)]
    changes = {(c.kind, c.part_number): (c.before, c.after) for c in bom_changes(before, after)}
    assert changes == {
        ("quantity", "DGX-H100"): (4, 8),
        ("price", "DGX-H100"): (Decimal("270000.00"), Decimal("250000.00")),
        ("removed", "OLD"): (1, None),
        ("added", "NEW"): (None, 3),
    }  # QM9700: 30000 and 30000.00 are the same price


def test_hot_spares_of_the_same_part_are_a_line_of_their_own():
    """An elastic build's hot spares share the system's part number on a line of their own: re-planned with more
    spares, the spares' line changes quantity and the systems' line is left alone."""
    spares = "NVIDIA DGX H100: hot spares for elastic recovery (racked, cabled and powered)"
    price = Decimal("270000.00")
    before = [_line("DGX-H100", 2048, price, "NVIDIA DGX H100"), _line("DGX-H100", 25, price, spares)]
    after = [_line("DGX-H100", 2048, price, "NVIDIA DGX H100"), _line("DGX-H100", 31, price, spares)]
    (change,) = bom_changes(before, after)
    assert (change.kind, change.part_number, change.description) == ("quantity", "DGX-H100", spares)
    assert (change.before, change.after) == (25, 31)
    (added,) = bom_changes(before[:1], after)
    assert (added.kind, added.after, added.description) == ("added", 31, spares)


@pytest.fixture
def two_plans(user, training_request):
    from pricing.services import price_snapshot_load_fixtures

    price_snapshot_load_fixtures()
    base = services.plan_create_synchronous(owner=user, request_data=training_request, name="deadline 90")
    faster = copy.deepcopy(training_request)
    faster["training"]["deadline_days"] = 45
    other = services.plan_create_synchronous(owner=user, request_data=faster, name="deadline 45")
    return base, other


def test_compare_page_highlights_and_lists_differences(alice_client, two_plans):
    base, other = two_plans
    page = alice_client.get("/plans/compare/", {"ids": f"{base.pk},{other.pk}"}).content.decode()
    assert 'class="n differs"' in page  # at least the GPU count differs: half the time needs more GPUs
    section = page[page.index(f'id="diff-{other.pk}"') :]
    assert "training.deadline_days" in section and ">45" in section.replace(" ", "")
    # Twice the GPUs on the same system: the BOM's system line changes quantity.
    assert base.result["cluster"]["gpus"] < other.result["cluster"]["gpus"]
    assert "quantity changed" in section


def test_a_derived_plan_says_what_changed_from_its_parent(
    alice_client, user, two_plans, django_capture_on_commit_callbacks
):
    base, _ = two_plans
    with django_capture_on_commit_callbacks(execute=True):
        child = services.plan_derive(plan=base, overrides={"pricing": {"years": 5}})
    child.refresh_from_db()
    assert child.parent_id == base.pk
    page = alice_client.get(child.get_absolute_url()).content.decode()
    lineage = page[page.index('id="lineage"') :]
    assert base.name in lineage and "pricing.years" in lineage
    assert "3 → <b>5</b>" in lineage


def test_whatif_save_and_replan_make_child_plans(alice_client, two_plans):
    base, _ = two_plans
    from planner.models import Plan

    saved = alice_client.post(f"/plans/{base.pk}/whatif/", {"action": "save", "pricing.years": "5"})
    child = Plan.objects.exclude(pk__in=[base.pk, _.pk]).get()
    assert saved.status_code == 302 and saved["Location"] == child.get_absolute_url()
    assert child.parent_id == base.pk and child.request["pricing"]["years"] == 5
    assert child.request["training"]["deadline_days"] == 90  # "save" leaves the sizing alone

    alice_client.post(f"/plans/{base.pk}/whatif/", {"action": "replan", "training.deadline_days": "60"})
    replanned = Plan.objects.filter(parent=base).exclude(pk=child.pk).get()
    assert replanned.request["training"]["deadline_days"] == 60


def test_whatif_save_names_a_bad_field(alice_client, two_plans):
    base, _ = two_plans
    response = alice_client.post(f"/plans/{base.pk}/whatif/", {"action": "save", "pricing.years": "many"}, follow=True)
    text = response.content.decode()
    assert "pricing.years" in text and "number" in text


def test_whatif_save_is_owner_only(client, other_user, two_plans):
    base, _ = two_plans
    client.force_login(other_user)
    assert client.post(f"/plans/{base.pk}/whatif/", {"action": "save", "pricing.years": "5"}).status_code == 404


def test_compare_inputs_name_the_model_and_system_not_their_ids():
    """The compare page listed `model.preset` as "llama-3-70b" / "llama-3-8b": a reader knows the model's name."""
    from planner.outputs.formatting import request_value

    assert request_value("llama-3-70b", "model.preset") == "Meta Llama 3 70B"
    assert request_value("dgx-h100", "hardware.system") == "NVIDIA DGX H100"
    assert request_value("not-a-preset", "model.preset") == "not-a-preset"
    assert request_value(90.0, "training.deadline_days") == 90.0
