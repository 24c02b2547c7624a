"""The non-AWS price sources, parsed from their recorded responses and checked by hand against the recorded rows.

Every expected figure below is worked out from the recorded item (retailPrice, units + nanos, usd_per_gpu_hour)
and the provider's documented rule (a reservation's retailPrice is the whole term; an offer is one node), never
read back from the parser's output.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from pricing.azure.fetch import AzurePriceFetcher, RecordedPages, prices_url
from pricing.azure.parse import item_offer, reservation_years
from pricing.gcp.catalog import catalog_offers, unit_price_usd
from pricing.market import MarketFolders, market_recorded_offers
from pricing.price_lists import price_list_offer, price_list_offers
from tests.pricing.conftest import REPO

AZURE = REPO / "fixtures" / "azure"
GCP = REPO / "fixtures" / "gcp" / "skus.json"
LISTS = REPO / "fixtures" / "prices" / "cloud_price_lists.json"


def _azure_offers():
    pages = RecordedPages(AZURE / "retail_prices" / "eastus.json")
    assumed = json.loads((AZURE / "manifest.json").read_text())["assumed_meters"]
    offers = AzurePriceFetcher(pages).collect(
        regions=["eastus"], confidence_by_meter=dict.fromkeys(assumed, "assumption")
    )
    return pages, {(o.instance_type, o.purchase): o for o in offers}


def test_azure_fetcher_follows_next_page_link_and_asks_every_recorded_page():
    pages, _ = _azure_offers()
    assert len(pages.asked) == 2  # the recording has two pages; NextPageLink of the second is null
    pages.assert_all_used()
    assert pages.asked[0] == prices_url(
        region="eastus",
        skus=(
            "Standard_ND96isr_H100_v5",
            "Standard_ND96isr_H200_v5",
            "Standard_ND128isr_NDR_GB200_v6",
            "Standard_ND96amsr_A100_v4",
        ),
    )
    assert "armRegionName+eq+%27eastus%27" in pages.asked[0] and "Virtual+Machines" in pages.asked[0]


def test_azure_prices_worked_by_hand_from_the_recorded_items():
    _, offers = _azure_offers()
    h100 = offers[("Standard_ND96isr_H100_v5", "on_demand")]
    # retailPrice 98.32 per VM-hour, 8 H100 per VM: 98.32 / 8 = 12.29 per GPU-hour
    assert h100.usd_per_hour == Decimal("98.32") and h100.gpus == 8 and h100.gpu_model == "h100-sxm"
    assert h100.usd_per_hour / h100.gpus == Decimal("12.29")
    assert (h100.provider, h100.region, h100.confidence) == ("azure", "eastus", "list_price")
    assert h100.observed_at == "2025-04-01T00:00:00Z"  # the item's effectiveStartDate
    # reservations: retailPrice is the whole term; 516000 / 8760 = 58.9041095... and 1008000 / 26280 = 38.3561643...
    assert offers[("Standard_ND96isr_H100_v5", "reserved_1y")].usd_per_hour == Decimal("58.904110")
    assert offers[("Standard_ND96isr_H100_v5", "reserved_3y")].usd_per_hour == Decimal("38.356164")
    spot = offers[("Standard_ND96isr_H100_v5", "spot")]
    assert spot.usd_per_hour == Decimal("29.496") and spot.confidence == "assumption"
    assert offers[("Standard_ND96isr_H200_v5", "on_demand")].gpu_model == "h200-sxm"
    # the recorded Windows (117.984) and Low Priority (19.664) meters of the same size are not offers
    assert all(o.usd_per_hour not in (Decimal("117.984"), Decimal("19.664")) for o in offers.values())
    assert len(offers) == 6
    assert h100.raw["catalog_system"] == "dgx-h100" and "InfiniBand" in h100.raw["scale_out"]


def test_azure_unrecorded_query_fails_instead_of_reading_stale_pages():
    pages = RecordedPages(AZURE / "retail_prices" / "eastus.json")
    with pytest.raises(LookupError, match="no recorded Azure page"):
        AzurePriceFetcher(pages).collect(regions=["westus3"])


def test_azure_skips_unknown_sizes_dev_test_and_odd_terms():
    base = {"armSkuName": "Standard_ND96isr_H100_v5", "armRegionName": "eastus", "retailPrice": 10, "skuName": "x"}
    assert item_offer({**base, "armSkuName": "Standard_D2s_v5", "type": "Consumption"}) is None
    assert item_offer({**base, "type": "DevTestConsumption"}) is None
    assert item_offer({**base, "type": "Reservation", "reservationTerm": "5 Years"}) is None
    assert reservation_years("1 Year") == 1 and reservation_years("3 Years") == 3 and reservation_years("") is None


def test_gcp_catalog_rows_worked_by_hand():
    data = json.loads(GCP.read_text())
    offers = {
        (o.instance_type, o.purchase): o
        for o in catalog_offers(
            data["response"]["skus"], source=data["source"], confidence_by_sku=data["confidence_by_sku"]
        )
    }
    a3 = offers[("a3-highgpu-8g", "on_demand")]
    # units "88" + nanos 490000000 / 1e9 = 88.49 per VM-hour; 8 H100: 11.06125 per GPU-hour
    assert a3.usd_per_hour == Decimal("88.49") and a3.usd_per_hour / a3.gpus == Decimal("11.06125")
    assert (a3.provider, a3.region, a3.observed_at) == ("gcp", "us-central1", "2024-06-01T00:00:00Z")
    assert a3.confidence == "public_estimate"
    assert offers[("a3-highgpu-8g", "reserved_1y")].usd_per_hour == Decimal("55.75")  # Commit1Yr
    a4x = offers[("a4x-highgpu-4g", "on_demand")]
    assert (a4x.gpus, a4x.gpu_model, a4x.confidence) == (4, "b200-gb200", "assumption")
    assert {o.instance_type for o in offers.values()} == {
        "a3-highgpu-8g",
        "a3-megagpu-8g",
        "a3-ultragpu-8g",
        "a4-highgpu-8g",
        "a4x-highgpu-4g",
    }  # the recorded N1 T4 row is not an accelerator-optimized machine type we price
    assert unit_price_usd({"pricingExpression": {"usageUnit": "GiBy.mo"}}) is None


def test_price_lists_worked_by_hand():
    offers = {(o.provider, o.purchase, o.gpu_model): o for o in price_list_recorded()}
    lam = offers[("lambda", "on_demand", "h100-sxm")]
    assert lam.usd_per_hour == Decimal("31.92")  # 3.99 per GPU-hour x 8 GPUs
    nebius = offers[("nebius", "on_demand", "h200-sxm")]
    assert nebius.usd_per_hour == Decimal("28.00") and nebius.confidence == "list_price"  # 3.50 x 8
    assert nebius.observed_at == "2025-10-01"
    contract = offers[("contract", "reserved_3y", "h100-sxm")]
    assert contract.usd_per_hour == Decimal("24.00") and contract.confidence == "public_estimate"  # 3.00 x 8
    assert offers[("lambda", "reserved_1y", "h100-sxm")].usd_per_hour == Decimal("14.80")  # 1.85 x 8


def price_list_recorded():
    return price_list_offers(json.loads(LISTS.read_text())["records"])


def test_price_list_records_must_be_sourced_dated_and_labelled():
    good = json.loads(LISTS.read_text())["records"][0]
    with pytest.raises(ValueError, match="missing as_of"):
        price_list_offer({**good, "as_of": ""})
    with pytest.raises(ValueError, match="confidence must be one of"):
        price_list_offer({**good, "confidence": "hunch"})
    with pytest.raises(ValueError, match="purchase must be one of"):
        price_list_offer({**good, "purchase": "forever"})
    with pytest.raises(ValueError, match="same"):
        price_list_offers([good, good])


def test_every_recorded_market_offer_has_provider_source_date_and_confidence():
    offers = market_recorded_offers(MarketFolders.under(REPO / "fixtures"))
    assert {o.provider for o in offers} == {"azure", "gcp", "lambda", "nebius", "runpod", "coreweave", "contract"}
    for offer in offers:
        assert offer.source and offer.observed_at[:4].isdigit(), offer
        assert offer.confidence in ("list_price", "quote", "public_estimate", "assumption"), offer
        assert offer.gpus > 0 and offer.gpu_model, offer


def test_savings_plans_rates_replayed_through_the_fetcher_worked_by_hand():
    """The recorded describe_savings_plans_offering_rates pages (two, joined by nextToken) through Stubber."""
    from pricing.aws.fetch import AwsPriceFetcher
    from pricing.aws.recorded import recorded_clients

    with recorded_clients(REPO / "fixtures" / "aws") as (clients, manifest):
        fetcher = AwsPriceFetcher(clients, now=lambda: manifest.observed_at)
        records = fetcher.collect(
            regions=manifest.regions,
            instance_types=manifest.instance_types,
            capacity_block_types=manifest.capacity_block_types,
        )
        fetcher.instance_types(region=manifest.spec_region, patterns=manifest.spec_patterns)
    plans = {(r.region, r.purchase): r for r in records if r.purchase.startswith("savings_plan")}
    # lowest of the recorded 1-year rates 37.4272 (EC2 Instance, No Upfront), 35.7760 (EC2 Instance, All Upfront),
    # 41.2800 (Compute): 35.7760; 3-year: 26.4192, 24.7680, 28.6208 -> 24.7680. us-west-2 answers no rate.
    assert set(plans) == {("us-east-1", "savings_plan_1y"), ("us-east-1", "savings_plan_3y")}
    one = plans[("us-east-1", "savings_plan_1y")]
    assert one.usd_per_hour == Decimal("35.7760") and one.raw["chosen"]["paymentOption"] == "All Upfront"
    assert plans[("us-east-1", "savings_plan_3y")].usd_per_hour == Decimal("24.7680")
    assert len(one.raw["rates"]) == 3 and (one.gpus, one.gpu_model) == (8, "h100-sxm")
