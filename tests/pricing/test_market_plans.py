"""The whole market reaches the plan: every provider's rows in costs.cloud and the comparison, each with its
provider, source, own date and confidence; old or assumed prices warned; Azure refreshed live without AWS."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from django.core.management import call_command

from engine.costing.freshness import price_age_days, price_warning_headlines, price_warnings
from planner.adapter import plan_compute
from pricing.azure.fetch import RecordedPages
from pricing.models import CloudOffer, PriceSnapshot
from pricing.services import AZURE_LIVE_SOURCE, price_snapshot_load_fixtures, price_snapshot_refresh_azure
from tests.pricing.conftest import REPO

pytestmark = pytest.mark.django_db

REQUEST = {
    "workload": "training",
    "model": {"preset": "llama-3-70b"},
    "training": {"tokens": 15e12, "deadline_days": 90},
}
RECORDED_AZURE = REPO / "fixtures" / "azure" / "retail_prices" / "eastus.json"


@pytest.fixture
def plan():
    return plan_compute(request_data=REQUEST, price_snapshot=price_snapshot_load_fixtures()).result


def test_every_cloud_row_names_its_provider_source_date_and_confidence(plan):
    rows = plan["costs"]["cloud"]
    assert {r["provider"] for r in rows} >= {"aws", "azure", "gcp", "lambda", "nebius", "runpod", "coreweave"}
    for row in rows:
        assert row["provider"] and row["price_source"] and row["price_observed_at"][:4].isdigit(), row
        assert row["price_confidence"] in ("list_price", "quote", "public_estimate", "assumption"), row


def test_other_providers_are_priced_for_the_same_work_by_hand(plan):
    rows = plan["costs"]["cloud"]
    lam = next(r for r in rows if r["provider"] == "lambda" and r["purchase"] == "on_demand")
    assert lam["gpus_per_instance"] == 8 and Decimal(lam["usd_per_hour"]) == Decimal("31.92")  # 3.99 x 8
    # instances = ceil(GPUs the work needs / 8); job = instances x $31.92 x job hours, to the cent
    assert lam["instances"] == -(-lam["sized_on"]["gpus"] // 8)
    expected = (lam["instances"] * Decimal("31.92") * Decimal(str(lam["job_hours"]))).quantize(Decimal("0.01"))
    # job_hours is shown rounded to 3 decimals (at most 0.0005 h off), so allow that much of the fleet's hour
    assert abs(Decimal(lam["job_usd"]) - expected) <= lam["instances"] * Decimal("31.92") * Decimal("0.0005") + Decimal(
        "0.01"
    )
    options = plan["costs"]["comparison"]["options"]
    assert any(o.get("provider") == "azure" and o["label"].startswith("Azure ") for o in options)
    assert any(o.get("provider") == "gcp" and o["label"].startswith("Google Cloud ") for o in options)
    explain = plan["explain"]
    assert any("Azure Retail Prices API" in e["source"] for k, e in explain.items() if k.startswith("costs.cloud"))


def test_plan_warns_about_old_and_assumed_prices(plan):
    warnings = plan["costs"]["price_warnings"]
    assert len(warnings) == len({w.split(" ")[0] for w in warnings})  # one per provider
    (azure,) = [w for w in warnings if w.startswith("Azure ")]
    # the illustrative Azure meters are labelled assumption (fixtures/azure/manifest.json); the published
    # pay-as-you-go one is not
    assumed = azure.split("assumptions, not published prices: ")[1]
    # each instance type with its GPUs in words (Azure: ND H100 v5 = 8 x H100 80GB)
    h100 = "Standard_ND96isr_H100_v5 (8 x H100 SXM5 80GB)"
    assert f"{h100} 1-year reserved" in assumed and f"{h100} spot" in assumed
    assert f"{h100} on-demand" not in assumed
    # the late-2024 capacity-block table is far past the 180-day limit whatever today is (>= 2026-11-26)
    (aws,) = [w for w in warnings if w.startswith("AWS ")]
    assert "p5.48xlarge (8 x H100 SXM5 80GB) Capacity Block (dated 2024-12-01," in aws


def test_price_age_and_warning_worked_by_hand():
    # 2024-12-01 -> 2025-12-01 is 365 days, -> 2026-11-26 another 360: 725 days
    assert price_age_days("2024-12-01", date(2026, 11, 26)) == 725
    assert price_age_days("2024-12-01T00:00:00+00:00", date(2026, 11, 26)) == 725
    assert price_age_days("", date(2026, 11, 26)) is None and price_age_days("soon", date(2026, 11, 26)) is None
    from engine.result.costs import CloudRow, SizedOn

    def row(observed: str, confidence: str) -> CloudRow:
        return CloudRow(
            region="eu-north1",
            instance_type="n8",
            purchase="on_demand",
            available=True,
            unavailable_reason=None,
            capacity_constrained=False,
            instances=1,
            gpus_per_instance=8,
            gpus=8,
            usd_per_hour=Decimal("28"),
            usd_per_gpu_hour=Decimal("3.5"),
            job_hours=1.0,
            job_days=0.042,
            job_usd=Decimal("28"),
            price_observed_at=observed,
            sized_on=SizedOn("dgx-h200", "h200-sxm", 8, 1.0, True),
            provider="nebius",
            price_source="Nebius docs",
            price_confidence=confidence,
        )

    on = date(2026, 11, 26)
    # 2026-06-01 -> 07-01 30 days, -> 08-01 61, -> 09-01 92, -> 10-01 122, -> 11-01 153, -> 11-26 178;
    # 2026-05-29 is 3 days earlier: 181
    assert price_warnings([row("2026-06-01", "list_price")], priced_on=on, stale_after_days=180) == ()
    (old,) = price_warnings([row("2026-05-29", "list_price")] * 2, priced_on=on, stale_after_days=180)
    assert old == (
        "Nebius prices older than 180 days (the cost parameter for stale cloud prices): 8 x H200 SXM 141GB "
        "on-demand (dated 2026-05-29, 181 days old). Refresh or replace them before relying on these rows."
    )
    (assumed,) = price_warnings([row("2026-11-01", "assumption")], priced_on=None, stale_after_days=180)
    assert "assumptions, not published prices: 8 x H200 SXM 141GB on-demand" in assumed and "days old" not in assumed

    # Each warning's headline, in the same order: provider, what is wrong and, for one option, which one.
    assert price_warning_headlines([row("2026-05-29", "list_price")] * 2, priced_on=on, stale_after_days=180) == (
        "Nebius: 8 x H200 SXM 141GB on-demand price is 181 days old",
    )
    spot = replace(row("2026-01-01", "assumption"), purchase="spot")  # 2026-01-01 -> 11-26: 329 days
    both = [row("2026-05-29", "list_price"), spot, row("2026-06-01", "assumption")]
    (headline,) = price_warning_headlines(both, priced_on=on, stale_after_days=180)
    assert headline == "Nebius: 2 prices over 180 days old (oldest 329 days); 2 prices are assumptions, not published"
    assert len(price_warnings(both, priced_on=on, stale_after_days=180)) == 1


def test_azure_refresh_stores_a_live_snapshot_and_carries_the_other_providers():
    base = price_snapshot_load_fixtures()
    pages = RecordedPages(RECORDED_AZURE)
    snapshot = price_snapshot_refresh_azure(regions=["eastus"], get_json=pages)
    pages.assert_all_used()
    assert snapshot.kind == PriceSnapshot.Kind.LIVE and snapshot.source == AZURE_LIVE_SOURCE
    offers = CloudOffer.objects.filter(snapshot=snapshot)
    assert offers.filter(provider="azure").count() == 6
    # every non-Azure offer of the base snapshot is carried with its own date and source
    carried = offers.exclude(provider="azure")
    assert carried.count() == CloudOffer.objects.filter(snapshot=base).exclude(provider="azure").count()
    block = carried.get(instance_type="p5.48xlarge", region="us-east-1", purchase="capacity_block")
    assert block.observed_at == datetime(2024, 12, 1, tzinfo=UTC) and "Capacity Blocks" in block.source
    h100 = offers.get(provider="azure", instance_type="Standard_ND96isr_H100_v5", purchase="on_demand")
    assert h100.observed_at == datetime(2025, 4, 1, tzinfo=UTC) and h100.usd_per_hour == Decimal("98.32")


def test_refresh_prices_azure_command_uses_the_injected_getter(monkeypatch, capsys):
    pages = RecordedPages(RECORDED_AZURE)
    monkeypatch.setattr("pricing.services.urllib_get_json", pages)  # never the network in tests
    call_command("refresh_prices", "--azure")
    assert "Stored live price snapshot" in capsys.readouterr().out
    assert PriceSnapshot.objects.get(kind=PriceSnapshot.Kind.LIVE).offers.filter(provider="azure").count() == 6


def test_page_and_pdf_cloud_tables_show_provider_and_price_date(plan, alice_client, user):
    import io
    import re

    from django.urls import reverse
    from pypdf import PdfReader

    from planner.models import Plan

    stored = Plan.objects.create(
        owner=user, name="market", workload=plan["workload"], request=plan["request"], result=plan
    )
    page = alice_client.get(stored.get_absolute_url()).content.decode()
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    assert "Provider" in text and "Price dated" in text
    # the instance id procurement orders by, with what it is in words (ND H100 v5: 8 x H100 80GB)
    assert "Azure eastus Standard_ND96isr_H100_v5 (8 x H100 SXM5 80GB) on-demand" in text
    # the break-even table names whose instance each row is and what it is (it had the bare id, no provider)
    break_even = page.split('id="break-even"')[1].split("</table>")[0]
    break_even_text = " ".join(re.sub(r"<[^>]+>", " ", break_even).split())
    assert "Provider" in break_even_text
    assert "Azure eastus Standard_ND96isr_H100_v5 (8 x H100 SXM5 80GB)" in break_even_text
    # the carbon table: a region without a sourced grid intensity says so instead of two bare dashes, and the
    # rented system is named once, without parentheses inside parentheses
    assert "no sourced grid carbon intensity is recorded for this region" in text  # once, under the table
    carbon = text.split("Carbon Where")[1].split("What if?")[0]
    assert carbon.count("no sourced grid carbon intensity is recorded for this region") == 1
    assert "not recorded" in carbon and "On-prem grid: US average, EIA FAQ" in carbon  # the grid figure is sourced
    assert "(AWS EC2 p5.48xlarge (8 x H100))" not in text
    assert "2025-04-01 · list price" in text  # the H100 meter's effectiveStartDate, and how firm it is
    assert "Google Cloud us-central1 a3-highgpu-8g (8 x H100 SXM5 80GB)" in text and "public estimate" in text
    assert "an assumption, not a published price" in text  # the price warnings are on the page
    pdf = alice_client.get(reverse("planner:plan_report_pdf", args=[stored.pk])).content
    pdf_text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    assert "Azure" in pdf_text and "Standard_ND96isr_H100_v5" in pdf_text and "2025-04-01" in pdf_text
    # the break-even table names whose instance it is and its GPUs (cells wrap after a hyphen: "a3-" / "highgpu")
    joined = re.sub(r"-\s+", "-", " ".join(pdf_text.split()))
    assert "Google Cloud a3-highgpu-8g (8 x H100 SXM5 80GB), us-central1" in joined


def test_a_live_aws_refresh_keeps_the_rest_of_the_market():
    """Refreshing AWS must not drop Azure, Google Cloud and the neoclouds from the plans priced after it."""
    from pricing.aws.recorded import recorded_clients
    from pricing.services import price_snapshot_refresh_live
    from tests.pricing.conftest import FIXTURES

    base = price_snapshot_load_fixtures()
    with recorded_clients(FIXTURES) as (clients, manifest):
        live = price_snapshot_refresh_live(
            regions=manifest.regions,
            instance_types=manifest.instance_types,
            clients=clients,
            capacity_block_types=manifest.capacity_block_types,
        )
    others = CloudOffer.objects.filter(snapshot=live).exclude(provider="aws")
    assert others.count() == CloudOffer.objects.filter(snapshot=base).exclude(provider="aws").count() == 19
    nebius = others.get(provider="nebius", instance_type="gpu-h200-sxm 8gpu-128vcpu-1600gb")
    assert nebius.observed_at == datetime(2025, 10, 1, tzinfo=UTC)  # its own date, not the refresh's
    assert "carried unchanged from snapshot" in live.notes


def test_market_instances_map_to_catalog_systems_with_the_same_gpu():
    from engine import load_catalog
    from pricing.azure.skus import AZURE_GPU_SKUS
    from pricing.gcp.catalog import GCP_MACHINE_TYPES

    catalog = load_catalog()
    for name, sku in [*AZURE_GPU_SKUS.items(), *GCP_MACHINE_TYPES.items()]:
        system = catalog.systems[sku.catalog_system]
        assert system.gpu == sku.gpu_model, name
        assert sku.gpu_model in catalog.gpus and sku.gpus in (4, 8) and sku.scale_out, name


def test_the_staleness_limit_is_a_named_parameter_a_request_can_change():
    snapshot = price_snapshot_load_fixtures()
    request = {**REQUEST, "pricing": {"parameters": {"cloud_price_stale_after_days": 3650}}}
    plan = plan_compute(request_data=request, price_snapshot=snapshot).result
    assert float(plan["costs"]["parameters"]["cloud_price_stale_after_days"]["value"]) == 3650
    # ten years: nothing recorded is that old, so only the assumed prices are flagged
    assert all("older than" not in w for w in plan["costs"]["price_warnings"])
    assert any("assumptions, not published prices" in w for w in plan["costs"]["price_warnings"])
    from planner.adapter import RequestInvalid, request_validate

    with pytest.raises(RequestInvalid) as error:
        request_validate({**REQUEST, "pricing": {"parameters": {"cloud_price_stale_after_days": 0}}})
    assert "pricing.parameters.cloud_price_stale_after_days" in str(error.value.errors)
