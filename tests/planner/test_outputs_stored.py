"""Every output reads only the stored result: a plan re-opened after the catalog and the prices changed shows what
it showed before, and the page's BOM total is the stored extended prices added up, to the cent."""

from __future__ import annotations

import io
import json
import re
import shutil
from decimal import Decimal
from functools import cache
from pathlib import Path

import pytest
from django.urls import reverse
from pypdf import PdfReader

from planner import services
from planner.adapter import usd_text
from planner.models import Plan

pytestmark = pytest.mark.django_db

BODY = {
    "workload": "training",
    "model": {"preset": "llama-3-70b"},
    "training": {"tokens": 15e12, "gpus": 512},
    "hardware": {"system": "dgx-h100"},
    "pricing": {"years": 3, "regions": ["us-east-1"]},
}
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


def _plan(user, capture, body: dict, name: str):
    with capture(execute=True):
        plan = services.plan_create(owner=user, request_data=body, name=name)
    plan.refresh_from_db()
    assert plan.result and plan.result["feasible"], plan.result and plan.result.get("problems")
    return plan


@pytest.fixture
def prices():
    from pricing.services import price_snapshot_load_fixtures

    return price_snapshot_load_fixtures()


def _outputs(client, plan) -> dict[str, str]:
    """Everything a user sees of the plan: the page (CSRF tokens differ per response), both SVGs, the CSV and the
    PDF's text."""
    page = client.get(plan.get_absolute_url())
    assert page.status_code == 200
    pdf = client.get(reverse("planner:plan_report_pdf", args=[plan.pk])).content
    return {
        "page": CSRF.sub("", page.content.decode()),
        "topology": client.get(reverse("planner:plan_topology_svg", args=[plan.pk])).content.decode(),
        "racks": client.get(reverse("planner:plan_racks_svg", args=[plan.pk])).content.decode(),
        "csv": client.get(reverse("planner:plan_bom_csv", args=[plan.pk])).content.decode(),
        "pdf": _pdf_text(pdf),
    }


@cache
def _pdf_text(pdf: bytes) -> str:
    """The PDF's text; a report served again from the report cache (the same bytes) is read once."""
    return " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)


@pytest.fixture
def changed_catalog(tmp_path, monkeypatch):
    """A copy of the catalog where every racked part and system is 1U taller and renamed, used as the live one."""
    from engine.catalog import hardware

    directory = tmp_path / "catalog"
    shutil.copytree(hardware.default_catalog_dir(), directory)
    for name in ("parts.json", "systems.json"):
        data = json.loads((directory / name).read_text())
        for record in data["records"]:
            if record.get("rack_units"):
                record["rack_units"] += 1
                record["name"] = f"Renamed {record['name']}"
        (directory / name).write_text(json.dumps(data))
    monkeypatch.setattr(hardware, "default_catalog_dir", lambda: directory)
    hardware.load_catalog.cache_clear()
    yield hardware.load_catalog()
    hardware.load_catalog.cache_clear()


def test_outputs_show_the_stored_plan_after_the_catalog_and_prices_change(
    alice_client, user, prices, django_capture_on_commit_callbacks, request
):
    from pricing.models import ComponentPrice

    plan = _plan(user, django_capture_on_commit_callbacks, BODY, "stored")
    before = _outputs(alice_client, plan)
    # The racks drawn are the stored heights: 64 DGX H100 (8U each), 4 per rack = 32U used.
    assert "32U used" in before["racks"] and "NVIDIA DGX H100 (8U)" in before["racks"]

    catalog = request.getfixturevalue("changed_catalog")
    assert catalog.systems["dgx-h100"].rack_units == 9 and catalog.parts["qm9700"].name.startswith("Renamed")
    ComponentPrice.objects.update(unit_price_usd=Decimal("1.23"))

    after = _outputs(alice_client, plan)
    for kind, text in before.items():
        assert after[kind] == text, f"{kind} changed after the catalog and prices did"

    # The change is real: the same request planned now draws the new heights and prices.
    fresh = _plan(user, django_capture_on_commit_callbacks, BODY, "fresh")
    fresh_outputs = _outputs(alice_client, fresh)
    assert "NVIDIA DGX H100 (8U)" not in fresh_outputs["racks"] and "(9U)" in fresh_outputs["racks"]
    assert fresh_outputs["csv"] != before["csv"]


# Half-cent unit prices on odd quantities (5, 1 and 137 in this plan): each of the three extended prices rounds
# half a cent up (50.03 + 10.01 + 1370.69 = 1430.73), while their unrounded sum rounds to 1430.72.
HALF_CENT_OVERRIDES = {"PowerEdge R760": 10.005, "AI400X2": 10.005, "MMA1Z00-NS400": 10.005}


# Until costing sums the rounded extended prices (one extended-price rule, issue 12), its hardware total is the
# unrounded sum and the page, which shows that total, is a cent off. Strict: remove the mark once costing agrees.
HALF_CENT = pytest.param(HALF_CENT_OVERRIDES, id="half-cent overrides")


@pytest.mark.parametrize("overrides", [pytest.param({}, id="catalog prices"), HALF_CENT])
def test_page_bom_total_is_the_stored_extended_prices_to_the_cent(
    alice_client, user, prices, django_capture_on_commit_callbacks, overrides
):
    body = {**BODY, "pricing": {**BODY["pricing"], "component_prices": overrides}}
    plan = _plan(user, django_capture_on_commit_callbacks, body, "total")
    lines = plan.result["bom"]
    assert all(line["extended_price_usd"] for line in lines)
    stored_sum = sum(Decimal(line["extended_price_usd"]) for line in lines)

    response = alice_client.get(plan.get_absolute_url())
    bom = response.context["bom"]
    assert bom.total_usd == stored_sum
    assert sum(group.subtotal_usd for group in bom.groups) == stored_sum
    # The page's total is capex: the hardware lines make the plan's hardware figure, the capex lines beyond it
    # (spares, services, support, software) the rest, to the cent.
    onprem = plan.result["costs"]["onprem"]
    extra = {"services", "tax", "spares", "support", "software"}
    hardware = sum(Decimal(line["extended_price_usd"]) for line in lines if line["category"] not in extra)
    assert Decimal(onprem["hardware_usd"]) == hardware < stored_sum
    assert Decimal(onprem["capex_usd"]) == stored_sum
    assert f"<b>{usd_text(stored_sum)}</b>" in response.content.decode()  # money to 3 significant figures


def test_outputs_never_load_the_catalog(alice_client, user, prices, django_capture_on_commit_callbacks, monkeypatch):
    from engine.catalog import hardware
    from planner.adapter import catalog_names

    plan = _plan(user, django_capture_on_commit_callbacks, BODY, "no catalog")
    # Product names are the one thing outputs take from the catalog (read once per process, cached): loaded here,
    # so the test holds whichever tests ran before it. Every figure must still come from the stored plan.
    catalog_names()

    def refuse(directory):
        raise AssertionError(f"an output loaded the catalog from {directory}")

    monkeypatch.setattr(hardware, "_load", refuse)
    outputs = _outputs(alice_client, plan)
    assert "Rack elevations" in outputs["racks"] and outputs["csv"].startswith("line_no,")
    assert alice_client.get(reverse("planner:plan_list")).status_code == 200
    twin = _stored(user, "no catalog, again", plan.result)
    compare = alice_client.get(reverse("planner:plan_compare"), {"ids": f"{plan.pk},{twin.pk}"})
    assert compare.status_code == 200


GOLDEN = Path(__file__).parents[1] / "engine" / "schema1_plans"  # plans stored before the typed result


def _golden(name: str) -> dict:
    """A plan as stored before issue 12's typed result: no `schema_version` (schema "1"), keys sorted."""
    return json.loads((GOLDEN / f"{name}.json").read_text())


def _stored(user, name: str, result: dict):
    return Plan.objects.create(
        owner=user, name=name, workload=result["workload"], request=result["request"], result=result
    )


def _visible(html: str) -> str:
    """The page's text as a reader sees it (tags, scripts and whitespace runs dropped)."""
    html = re.sub(r"<script.*?</script>", " ", CSRF.sub("", html), flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_a_plan_stored_without_device_heights_draws_no_units_rather_than_todays_catalog():
    """Plans stored before racks carried their devices' heights (the golden plans): the elevation shows the racks
    and their stored U totals but draws no device it cannot size from the plan."""
    from planner.presenters import plan_diagrams

    result = _golden("train-70b-dgx-h100")
    first = result["racks"]["layout"][0]
    assert first["items"] == [{"id": "dgx-h100", "quantity": 4}] and first["rack_units"] == 32
    svg = plan_diagrams(result)["racks"]
    assert "32U used" in svg and 'class="unit-system"' not in svg
    first["items"][0].update(rack_units=8, kind="system", label="NVIDIA DGX H100")
    svg = plan_diagrams(result)["racks"]
    # 4 systems drawn in the first rack only: the other racks still carry no heights.
    assert svg.count('class="unit-system"') == 4 and "NVIDIA DGX H100 (8U)" in svg


@pytest.mark.parametrize("name", ["train-70b-dgx-h100", "serve-70b-auto", "infeasible-deadline-1d"])
def test_a_schema_1_plan_decodes_whole_and_shows_as_a_schema_2_one(alice_client, user, name):
    """A plan stored before `schema_version` existed is the typed result without that key: its page reads it whole
    (no older-version notice) and shows exactly what the same plan stored as schema "2" shows."""
    old = _golden(name)
    assert "schema_version" not in old
    new = {**old, "schema_version": "2"}
    pages = [alice_client.get(_stored(user, name, result).get_absolute_url()) for result in (old, new)]
    assert [page.status_code for page in pages] == [200, 200]
    assert all(not page.context["view"].legacy for page in pages)
    # Everything but the "Plan JSON" block, which shows the stored JSON as it is (with or without the key).
    plan_json = re.compile(r"<summary>Plan JSON</summary><pre>.*?</pre>", re.S)
    # The two plans are stored moments apart: their "created ... UTC" minute may differ (a clean-clone CI run
    # crossed a minute between them), which says nothing about how the result reads.
    created = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC")
    texts = [created.sub("<created>", _visible(plan_json.sub("", page.content.decode()))) for page in pages]
    assert texts[0] == texts[1]
    assert ("Bill of materials" in texts[0]) is ("bom" in old) and "Compute and parallelism" in texts[0]


def test_an_old_plan_that_does_not_decode_opens_with_what_can_be_read(alice_client, user):
    """An old plan missing a key the typed result needs (`training.goodput` here, and no `schema_version`): the page,
    the PDF, the CSV and the diagrams still open; every section that decodes is shown, the page says which was not,
    and the plan list and compare table show what they can."""
    old = _golden("train-70b-dgx-h100")
    del old["training"]["goodput"]
    plan = _stored(user, "old", old)

    response = alice_client.get(plan.get_absolute_url())
    assert response.status_code == 200
    view = response.context["view"]
    assert view.legacy and view.unread_sections == ("training",)
    text = _visible(response.content.decode())
    assert "Stored by an older version" in text and "training is not shown" in text
    # The readable sections are all there: 50 DGX H100 = 400 GPUs, its BOM (the stored total), racks, topology.
    figures = {figure.path: figure.value for figure in response.context["headlines"]}
    assert figures["cluster.gpus"] == 400 and figures["cluster.system"] == "dgx-h100"
    assert "training.days" not in figures and "costs.onprem.capex_usd" in figures
    bom_total = sum(Decimal(line["extended_price_usd"]) for line in old["bom"])
    assert response.context["bom"].total_usd == bom_total == Decimal(old["costs"]["onprem"]["hardware_usd"])
    assert set(response.context["diagrams"]) == {"topology", "racks", "floor"}  # 5 SU rows + the central row

    outputs = _outputs(alice_client, plan)
    assert outputs["csv"].count("\r\n") == len(old["bom"]) + 1
    assert "older version" in outputs["pdf"] and "training not shown" in outputs["pdf"]
    listing = alice_client.get(reverse("planner:plan_list"))
    assert listing.status_code == 200 and "NVIDIA DGX H100" in listing.content.decode()  # the system, named
    twin = _stored(user, "old, again", old)
    compare = alice_client.get(reverse("planner:plan_compare"), {"ids": f"{plan.pk},{twin.pk}"})
    assert compare.status_code == 200


def test_the_page_decodes_the_stored_plan_once(alice_client, user, monkeypatch):
    """Headlines, costs, BOM, charts, diagrams and tables all read one typed result."""
    from planner.outputs import stored_plan

    calls = []
    decode = stored_plan.from_json
    monkeypatch.setattr(stored_plan, "from_json", lambda data: calls.append(1) or decode(data))
    plan = _stored(user, "once", _golden("train-70b-price-overrides"))
    assert alice_client.get(plan.get_absolute_url()).status_code == 200
    assert len(calls) == 1


def test_every_headline_path_names_a_field_of_the_typed_plan():
    """A headline path is walked through the typed result's attributes: a misspelt one would silently show
    nothing, so each step must be a field of the type the previous step names."""
    import dataclasses
    import types
    import typing

    from engine.result import PlanResult
    from planner.outputs.plan_view import HEADLINES

    for _, path, _ in HEADLINES:
        hint: object = PlanResult
        for name in path.split("."):
            if typing.get_origin(hint) in (typing.Union, types.UnionType):
                (hint,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
            assert dataclasses.is_dataclass(hint), f"{path}: {name} is not under a typed section"
            hints = typing.get_type_hints(hint)
            assert name in hints, f"{path}: {hint.__name__} has no field {name}"
            hint = hints[name]


def test_notes_warn_when_the_p90_misses_the_deadline_and_name_the_batch_used():
    """8B, 2T tokens in 30 days on DGX H100: the deadline is met at the p50 of the whole run, and the warning
    appears exactly when the p90 is past it; a plan on a batch other than the requested one says so."""
    from engine import load_catalog, run_plan, validate_request
    from planner.outputs.plan_view import PlanView

    catalog = load_catalog()
    body = {"workload": "training", "model": {"preset": "llama-3-8b"},
            "training": {"tokens": 2e12, "deadline_days": 30}, "hardware": {"system": "dgx-h100"}}  # fmt: skip
    result = run_plan(validate_request(body, catalog), catalog)
    training = result.training
    notes = PlanView(result).problems
    risky = [n for n in notes if n.startswith("Deadline risk")]
    assert training.days <= 30
    assert bool(risky) == (training.days_range.p90 > 30)
    if risky:
        assert f"{training.days_range.p90:.1f} days" in risky[0]
    # 509 sequences (a prime) on 16 GPUs with dp pinned at 2 cannot be split exactly: the note names the batch.
    odd = {"workload": "training", "model": {"preset": "llama-3-8b"},
           "training": {"tokens": 1e11, "gpus": 16, "global_batch_tokens": 509 * 8192, "parallelism": {"dp": 2}},
           "hardware": {"system": "dgx-h100"}}  # fmt: skip
    odd_result = run_plan(validate_request(odd, catalog), catalog)
    used = odd_result.training.global_batch_sequences
    assert any(n.startswith("Global batch") and str(used) in n for n in PlanView(odd_result).problems)


@pytest.mark.parametrize("system", ["aws-p5", "hgx-h800"])
def test_rented_and_unpriced_plans_render_every_output(
    alice_client, user, prices, django_capture_on_commit_callbacks, system
):
    """A p5.48xlarge plan builds nothing (no racks, fabric or BOM) and an HGX H800 plan has no server price: the
    page, SVGs, CSV and PDF all open, and the page says why the figures are missing."""
    body = {**BODY, "training": {"tokens": 1e11, "gpus": 64}, "hardware": {"system": system}}
    plan = _plan(user, django_capture_on_commit_callbacks, body, system)
    out = _outputs(alice_client, plan)
    if system == "aws-p5":
        assert "rented from AWS: nothing is built on site" in out["page"]
        assert "bom.csv" not in out["page"]  # no bill of materials, so no CSV link (the URL answers 404)
        assert alice_client.get(reverse("planner:plan_bom_csv", args=[plan.pk])).status_code == 404
        # the summary does not call a capex that does not exist "a lower bound", nor show racks as if built
        assert "Capex is a lower bound" not in out["page"]
        assert "rented, nothing built on site: an equivalent server&#x27;s racks" in out["page"]
        assert "rented, nothing built on site: what an equivalent build would draw" in out["page"]
        assert "Nothing is built on site for this plan" in out["page"]
    else:
        assert "has no sourced price: on-prem cost is not computed" in out["page"]
        assert "HGX H800 8-GPU server" in out["csv"]
