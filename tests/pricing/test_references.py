"""On-prem price references (fixtures/prices), their tables, refresh failures and pricing inside plan_compute."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal

import pytest
from botocore.stub import Stubber
from django.core.management import call_command
from django.core.management.base import CommandError

from engine.catalog.hardware import default_catalog_dir
from planner.adapter import cost_inputs_for_snapshot, plan_compute
from pricing.aws.fetch import AwsClients
from pricing.aws.recorded import stubbed_client
from pricing.models import CloudOffer, ComponentPrice, CostParameter, PriceSnapshot, SpotAdvisorBand
from pricing.reference_services import price_references_load_fixtures
from pricing.references import CONFIDENCE_LABELS, price_references_load
from pricing.selectors import GRID_INTENSITY
from pricing.services import price_snapshot_load_fixtures
from tests.pricing.conftest import FIXTURES

REQUEST = {
    "workload": "training",
    "model": {"preset": "llama-3-70b"},
    "training": {"tokens": 15e12, "deadline_days": 90},
}


def test_every_reference_is_sourced_dated_and_labelled():
    refs = price_references_load()
    for part in refs.parts:
        assert part.source and part.as_of and part.confidence in CONFIDENCE_LABELS
        assert part.unit_price_usd > 0
    for param in [*refs.parameters.values(), *refs.carbon.values()]:
        assert param.source and param.as_of and param.confidence in CONFIDENCE_LABELS
    assert {
        "install_integration_percent",
        "maintenance_percent_per_year",
        "utilization",
        "electricity_usd_per_kwh",
        "colo_usd_per_kw_month",
    } <= set(refs.parameters)
    assert {"site", "us-east-1", "us-west-2"} <= set(refs.carbon)


def test_priced_systems_are_catalog_systems():
    records = json.loads((default_catalog_dir() / "systems.json").read_text())["records"]
    systems = {r["id"] for r in records if r.get("auto_candidate", True)}
    priced = {p.catalog_id for p in price_references_load().parts if p.category == "system"}
    assert priced == systems  # every buyable system, each with its source and confidence label


@pytest.mark.django_db
def test_load_prices_loads_the_references_once(capsys):
    call_command("load_prices")
    out = capsys.readouterr().out
    refs = price_references_load()
    rows = len(refs.parts) + len(refs.parameters) + len(refs.carbon) + len(refs.spot_bands)
    assert f"{rows} created, 0 updated" in out
    counts = (ComponentPrice.objects.count(), CostParameter.objects.count(), SpotAdvisorBand.objects.count())
    call_command("load_prices")
    out = capsys.readouterr().out
    assert "0 created, 0 updated" in out
    assert (ComponentPrice.objects.count(), CostParameter.objects.count(), SpotAdvisorBand.objects.count()) == counts
    assert CostParameter.objects.filter(name=GRID_INTENSITY, scope="us-east-1").get().value == Decimal("379.069")


@pytest.mark.django_db
def test_reload_keeps_admin_edits_and_resets_others(admin_client):
    price_references_load_fixtures()
    row = ComponentPrice.objects.get(catalog_id="dgx-h100")
    response = admin_client.post(
        f"/admin/pricing/componentprice/{row.pk}/change/",
        {
            "part_number": "",
            "catalog_id": "dgx-h100",
            "description": row.description,
            "category": "system",
            "unit_price_usd": "250000.00",
            "source": "our quote",
            "as_of": "2026-11-01",
            "confidence": "list_price",
        },
    )
    assert response.status_code == 302, response.content[:500]
    row.refresh_from_db()
    assert row.locally_edited and row.unit_price_usd == Decimal("250000.00")
    other = ComponentPrice.objects.get(catalog_id="dgx-b200")
    other.unit_price_usd = Decimal("1")
    other.save()  # changed outside the admin: not protected
    report = price_references_load_fixtures()
    assert report.kept_local_edits == 1 and report.updated == 1
    row.refresh_from_db()
    other.refresh_from_db()
    assert row.unit_price_usd == Decimal("250000.00")
    # reset to the fixture: the DGX B200 list price of December 2024 (delta computer price list via Epoch AI)
    assert other.unit_price_usd == Decimal("379000.00")


@pytest.mark.django_db
def test_admin_lists_the_reference_tables(admin_client):
    price_references_load_fixtures()
    for name in ("componentprice", "costparameter", "spotadvisorband"):
        assert admin_client.get(f"/admin/pricing/{name}/").status_code == 200


@pytest.mark.django_db
def test_cost_inputs_fall_back_to_the_files_when_tables_are_empty():
    inputs = cost_inputs_for_snapshot(snapshot=None)
    assert inputs.parts and inputs.parameters and inputs.carbon and inputs.spot_bands
    assert inputs.cloud_prices == () and "No price snapshot" in inputs.snapshot_note


# --------------------------------------------------------------------------------------------- refresh


@pytest.mark.django_db
def test_refresh_prices_from_dir(tmp_path, capsys):
    folder = tmp_path / "recorded"
    shutil.copytree(FIXTURES, folder)
    call_command("refresh_prices", "--from-dir", str(folder))
    out = capsys.readouterr().out
    # the AWS layout only (no market price lists): 6 types x 2 regions on-demand + 20 spot zones + p5 reserved
    # 1y/3y in 2 regions + p5 Savings Plans 1y/3y in us-east-1 + capacity blocks for p5, p5e, p5en in us-east-1
    # = 12 + 20 + 4 + 2 + 3
    assert "41 offers" in out
    snapshot = PriceSnapshot.objects.get()
    assert str(folder) in snapshot.source and snapshot.fetched_at.date().isoformat() == "2026-11-09"
    with pytest.raises(CommandError, match=r"manifest\.json"):
        call_command("refresh_prices", "--from-dir", str(tmp_path))


def _failing_clients(monkeypatch, code: str, status: int) -> Stubber:
    pricing_client = stubbed_client("pricing", "us-east-1")
    stub = Stubber(pricing_client)
    stub.add_client_error("get_products", service_error_code=code, http_status_code=status)
    clients = AwsClients(pricing=pricing_client, ec2={"us-east-1": stubbed_client("ec2", "us-east-1")})
    monkeypatch.setattr(
        "pricing.management.commands.refresh_prices.aws_clients_from_default_chain", lambda regions, **kw: clients
    )
    return stub


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("code", "status", "message"),
    [
        ("ThrottlingException", 400, "throttled"),
        ("ExpiredTokenException", 400, "credentials have expired"),
    ],
)
def test_failed_refresh_keeps_the_last_snapshot_and_says_so(monkeypatch, code, status, message):
    good = price_snapshot_load_fixtures()
    offers = CloudOffer.objects.count()
    stub = _failing_clients(monkeypatch, code, status)
    with stub, pytest.raises(CommandError) as caught:
        call_command("refresh_prices", "--region", "us-east-1", "--instance-type", "p5.48xlarge")
    text = str(caught.value)
    assert message in text and code in text
    assert f"last good snapshot #{good.pk}" in text and "stays in use" in text and "days old" in text
    assert list(PriceSnapshot.objects.all()) == [good] and CloudOffer.objects.count() == offers


@pytest.mark.django_db
def test_failed_refresh_with_no_snapshot_says_how_to_get_one(monkeypatch):
    stub = _failing_clients(monkeypatch, "ThrottlingException", 400)
    with stub, pytest.raises(CommandError, match="load_prices"):
        call_command("refresh_prices", "--region", "us-east-1", "--instance-type", "p5.48xlarge")


# ------------------------------------------------------------------------------------------ plan_compute


@pytest.mark.django_db
def test_plan_compute_prices_the_default_70b_plan():
    call_command("load_prices")
    snapshot = PriceSnapshot.objects.get()
    result = plan_compute(request_data=REQUEST, price_snapshot=snapshot).result
    costs = result["costs"]
    assert costs["available"] and costs["onprem"]["capex_usd"] and costs["cloud"]
    assert "costs" not in result.get("not_modelled", [])
    # each row carries its provider and its own source's date, not the day the files were written
    assert {r["provider"] for r in costs["cloud"]} >= {"aws", "azure", "gcp", "lambda", "nebius"}
    dates = {(r["provider"], r["instance_type"], r["purchase"]): r["price_observed_at"][:10] for r in costs["cloud"]}
    assert dates[("aws", "p5.48xlarge", "on_demand")] == "2026-11-09"  # the Price List reading
    assert dates[("aws", "p5.48xlarge", "capacity_block")] == "2024-12-01"  # the late-2024 CB pricing page
    assert dates[("azure", "Standard_ND96isr_H100_v5", "on_demand")] == "2025-04-01"  # the item's effectiveStartDate
    assert dates[("nebius", "gpu-h200-sxm 8gpu-128vcpu-1600gb", "on_demand")] == "2025-10-01"
    assert costs["comparison"]["cheapest"] is not None and costs["comparison"]["break_even"]
    assert "costs.onprem.capex_usd" in result["explain"] and "training.days" in result["explain"]
    json.dumps(result)
    if result.get("bom"):
        assert all("unit_price_usd" in line and "extended_price_usd" in line for line in result["bom"])
    assert result["price_snapshot"]["age_days"] >= 0


def _untimed(value):
    """Drop the search's wall-clock fields (seconds, configs_per_s), which differ between any two runs."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in ("seconds", "configs_per_s")}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


@pytest.mark.django_db
def test_repricing_from_another_snapshot_changes_only_cloud_prices():
    first = price_snapshot_load_fixtures()
    second = PriceSnapshot.objects.create(kind=PriceSnapshot.Kind.LIVE, source="test", fetched_at=first.fetched_at)
    for offer in CloudOffer.objects.filter(snapshot=first):
        offer.pk = None
        offer.snapshot = second
        if offer.purchase == "on_demand":
            offer.usd_per_hour = offer.usd_per_hour * 2
        offer.save()
    a = plan_compute(request_data=REQUEST, price_snapshot=first).result
    b = plan_compute(request_data=REQUEST, price_snapshot=second).result
    for key in a:
        if key in ("costs", "explain", "price_snapshot"):
            continue
        assert _untimed(a[key]) == _untimed(b[key]), key
    assert a["costs"]["onprem"] == b["costs"]["onprem"] and a["costs"]["carbon"] == b["costs"]["carbon"]
    od_a = [r for r in a["costs"]["cloud"] if r["purchase"] == "on_demand"]
    od_b = [r for r in b["costs"]["cloud"] if r["purchase"] == "on_demand"]
    for ra, rb in zip(od_a, od_b, strict=True):
        assert Decimal(rb["job_usd"]) == pytest.approx(2 * Decimal(ra["job_usd"]), abs=Decimal("0.02"))
    others_a = [r for r in a["costs"]["cloud"] if r["purchase"] not in ("on_demand", "spot")]
    others_b = [r for r in b["costs"]["cloud"] if r["purchase"] not in ("on_demand", "spot")]
    assert others_a == others_b
    changed_explain = {k for k in a["explain"] if _untimed(a["explain"][k]) != _untimed(b["explain"][k])}
    price_dependent = ("costs.cloud.", "costs.comparison", "costs.sensitivity", "costs.verdict")
    assert all(k.startswith(price_dependent) for k in changed_explain), changed_explain


# ------------------------------------------------------------------------------- cost-aware auto selection


def _cheapest_by_rule(result):
    feasible = [c for c in result["candidates"] if c["feasible"]]
    return min(feasible, key=lambda c: (c["selection_usd"], c["gpus"], c["system"]))["system"]


@pytest.mark.django_db
def test_plan_compute_picks_the_system_by_cost_with_the_fixture_prices():
    call_command("load_prices")
    result = plan_compute(request_data=REQUEST, price_snapshot=PriceSnapshot.objects.get()).result
    selection = result["selection"]
    assert selection["basis"] == "cost" and selection["unpriced_systems"] == []
    assert "by cost" in selection["rule"] and "it_kw x PUE x days x 24 x electricity_usd_per_kwh" in selection["rule"]
    feasible = [c for c in result["candidates"] if c["feasible"]]
    assert feasible and all(c["selection_usd"] is not None for c in feasible)
    assert selection["system"] == _cheapest_by_rule(result) == result["cluster"]["system"]
    chosen = next(c for c in result["candidates"] if c["chosen"])
    # systems x price from components.json + facility kW x days x 24 x $/kWh from parameters.json
    price = float(ComponentPrice.objects.get(catalog_id=chosen["system"]).unit_price_usd)
    kwh_price = float(CostParameter.objects.get(name="electricity_usd_per_kwh", scope="").value)
    expected = chosen["systems"] * price + chosen["facility_kw"] * chosen["days"] * 24 * kwh_price
    assert chosen["selection_usd"] == pytest.approx(expected)
    entry = result["explain"]["selection.system"]
    assert entry["inputs"]["basis"] == "cost" and entry["inputs"]["system_usd"] == price
    assert entry["formula"].startswith("min over feasible systems of systems x the system price")
    # the source names what a reader can look up (the price references, EIA), never a file of ours
    assert "System prices: each system's dated price reference" in entry["source"]
    assert "Electricity price: EIA" in entry["source"] and "components.json" not in entry["source"]


@pytest.mark.django_db
def test_a_plan_override_of_a_system_price_can_flip_the_choice():
    call_command("load_prices")
    base = plan_compute(request_data=REQUEST, price_snapshot=None).result
    winner = base["selection"]["system"]
    runner_up = min(
        (c for c in base["candidates"] if c["feasible"] and c["system"] != winner), key=lambda c: c["selection_usd"]
    )
    # Cut the runner-up's system price until its estimate is below the winner's, by the stated rule.
    winner_usd = next(c for c in base["candidates"] if c["chosen"])["selection_usd"]
    energy = runner_up["selection_usd"] - runner_up["systems"] * float(
        ComponentPrice.objects.get(catalog_id=runner_up["system"]).unit_price_usd
    )
    cheaper = round(0.9 * (winner_usd - energy) / runner_up["systems"], 2)
    body = {**REQUEST, "pricing": {"component_prices": {runner_up["system"]: cheaper}}}
    flipped = plan_compute(request_data=body, price_snapshot=None).result
    assert flipped["selection"]["system"] == runner_up["system"] != winner
    entry = flipped["explain"]["selection.system"]
    assert entry["inputs"]["system_usd"] == cheaper
    assert f"prices given with this plan override {runner_up['system']}" in entry["source"]
    row = next(c for c in flipped["candidates"] if c["chosen"])
    assert row["selection_usd"] == pytest.approx(runner_up["systems"] * cheaper + energy)
