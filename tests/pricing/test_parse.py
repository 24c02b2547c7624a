"""Parsers on the recorded fixtures give the golden prices of reference/cloud-pricing.md section 4."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from pricing.aws.parse import (
    capacity_block_quotes,
    capacity_block_usd_per_instance_hour,
    lease_years,
    on_demand_usd_per_hour,
    product_prices,
    reserved_effective_usd_per_hour,
    reserved_terms,
    spot_latest_by_az,
)
from tests.pricing.conftest import REPO, recorded

# cloud-pricing.md section 4 "Golden numbers for tests" (and the table's OD column for p6-b200).
GOLDEN_ON_DEMAND = {
    "p5.48xlarge": Decimal("55.04"),
    "p4d.24xlarge": Decimal("21.957642"),
    "p5en.48xlarge": Decimal("63.296"),
    "g6e.48xlarge": Decimal("30.13118"),
    "p6-b200.48xlarge": Decimal("113.9328"),
    "p4de.24xlarge": Decimal("27.44705"),
}


def _price_list_item(region: str, instance_type: str) -> str:
    pages = recorded(f"pricing/get_products/{region}/{instance_type}.json")["pages"]
    (item,) = [entry for page in pages for entry in page["PriceList"]]
    return item


@pytest.mark.parametrize("instance_type", sorted(GOLDEN_ON_DEMAND))
def test_on_demand_golden_us_east_1(instance_type):
    assert on_demand_usd_per_hour(_price_list_item("us-east-1", instance_type)) == GOLDEN_ON_DEMAND[instance_type]


def test_p5_on_demand_is_55_04_in_both_regions():
    for region in ("us-east-1", "us-west-2"):
        prices = product_prices(_price_list_item(region, "p5.48xlarge"))
        assert prices.on_demand_usd_per_hour == Decimal("55.04")
        assert prices.region == region
        assert prices.instance_type == "p5.48xlarge"


def test_price_list_entries_are_json_strings_and_money_is_decimal():
    item = _price_list_item("us-east-1", "p5.48xlarge")
    assert isinstance(item, str)
    assert isinstance(on_demand_usd_per_hour(item), Decimal)


def test_on_demand_walks_the_dicts_instead_of_using_term_codes():
    """Renamed term and rate codes (AWS may change them) still parse; only `unit == "Hrs"` counts."""
    data = json.loads(_price_list_item("us-east-1", "p4d.24xlarge"))
    (term,) = data["terms"]["OnDemand"].values()
    (dimension,) = term["priceDimensions"].values()
    dimension_other_unit = {**dimension, "unit": "Quantity", "pricePerUnit": {"USD": "999"}}
    data["terms"]["OnDemand"] = {
        "NEWCODE.XYZ": {**term, "priceDimensions": {"A.B.C": dimension_other_unit, "D.E.F": dimension}}
    }
    assert on_demand_usd_per_hour(data) == Decimal("21.957642")


def test_on_demand_missing_and_ambiguous():
    data = json.loads(_price_list_item("us-east-1", "p4d.24xlarge"))
    assert on_demand_usd_per_hour({**data, "terms": {}}) is None
    (term,) = data["terms"]["OnDemand"].values()
    (dimension,) = term["priceDimensions"].values()
    other = {**dimension, "pricePerUnit": {"USD": "1.00"}}
    data["terms"]["OnDemand"] = {"X": {**term, "priceDimensions": {"a": dimension, "b": other}}}
    with pytest.raises(ValueError, match="different on-demand hourly rates"):
        on_demand_usd_per_hour(data)


def test_reserved_effective_hourly_by_hand():
    """Effective hourly = hourly + upfront / (years x 8760), worked by hand from the recorded p5 terms."""
    terms = {
        (t.lease_years, t.offering_class, t.purchase_option): t
        for t in reserved_terms(_price_list_item("us-east-1", "p5.48xlarge"))
    }
    assert len(terms) == 8

    partial_1y = terms[(1, "standard", "Partial Upfront")]
    assert partial_1y.usd_per_hour == Decimal("18.344")
    assert partial_1y.upfront_usd == Decimal("160700")
    # 160700 / 8760 = 18.344748858...; + 18.344 = 36.688748858...
    assert partial_1y.effective_usd_per_hour.quantize(Decimal("0.000001")) == Decimal("36.688749")

    all_3y = terms[(3, "standard", "All Upfront")]
    assert all_3y.usd_per_hour == 0
    # 600000 / (3 x 8760) = 600000 / 26280 = 22.83105022...
    assert all_3y.effective_usd_per_hour.quantize(Decimal("0.000001")) == Decimal("22.831050")

    no_upfront_1y = terms[(1, "standard", "No Upfront")]
    assert no_upfront_1y.upfront_usd == 0
    assert no_upfront_1y.effective_usd_per_hour == Decimal("38.528")

    partial_3y_convertible = terms[(3, "convertible", "Partial Upfront")]
    assert partial_3y_convertible.effective_usd_per_hour == Decimal("14.46") + Decimal(380000) / Decimal(26280)


def test_reserved_formula_and_lease_lengths():
    one_dollar_extra = reserved_effective_usd_per_hour(usd_per_hour=Decimal(10), upfront_usd=Decimal(8760), years=1)
    assert one_dollar_extra == Decimal(11)
    assert lease_years("1yr") == 1
    assert lease_years("3yr") == 3
    with pytest.raises(ValueError):
        lease_years("36 months")


def test_only_p5_carries_reserved_terms_in_the_fixtures():
    assert reserved_terms(_price_list_item("us-east-1", "g6e.48xlarge")) == []
    assert len(reserved_terms(_price_list_item("us-west-2", "p5.48xlarge"))) == 8


def _spot_items(region: str) -> list[dict]:
    items = [
        item
        for page in recorded(f"ec2/{region}/describe_spot_price_history.json")["pages"]
        for item in page["SpotPriceHistory"]
    ]
    for item in items:
        item["Timestamp"] = datetime.fromisoformat(item["Timestamp"])
    return items


def test_spot_prices_per_az_id_within_published_ranges():
    latest = spot_latest_by_az(_spot_items("us-east-1"), region="us-east-1")
    p5 = {key[2]: quote.usd_per_hour for key, quote in latest.items() if key[0] == "p5.48xlarge"}
    assert len(p5) == 6
    assert min(p5.values()) == Decimal("14.25")
    assert max(p5.values()) == Decimal("55.04")
    assert sum(1 for price in p5.values() if price == Decimal("55.04")) == 2  # 2 of 6 AZs at on-demand
    p4d = [q.usd_per_hour for k, q in latest.items() if k[0] == "p4d.24xlarge"]
    assert (min(p4d), max(p4d)) == (Decimal("6.29"), Decimal("14.11"))
    g6e = [q.usd_per_hour for k, q in latest.items() if k[0] == "g6e.48xlarge"]
    assert (min(g6e), max(g6e)) == (Decimal("8.71"), Decimal("16.50"))
    assert all(isinstance(q.usd_per_hour, Decimal) for q in latest.values())
    assert all(key[2].startswith("use1-az") for key in latest)  # keyed by AZ ID, never by name


def test_spot_keeps_the_latest_record_and_skips_other_products():
    base = {"AvailabilityZone": "us-east-1a", "AvailabilityZoneId": "use1-az1", "InstanceType": "p5.48xlarge"}
    items = [
        {
            **base,
            "ProductDescription": "Linux/UNIX",
            "SpotPrice": "20.000000",
            "Timestamp": datetime(2026, 11, 8, 10, tzinfo=UTC),
        },
        {
            **base,
            "ProductDescription": "Linux/UNIX",
            "SpotPrice": "14.250000",
            "Timestamp": datetime(2026, 11, 8, 21, tzinfo=UTC),
        },
        {
            **base,
            "ProductDescription": "Linux/UNIX",
            "SpotPrice": "30.000000",
            "Timestamp": datetime(2026, 11, 7, 21, tzinfo=UTC),
        },
        {
            **base,
            "ProductDescription": "Windows",
            "SpotPrice": "1.000000",
            "Timestamp": datetime(2026, 11, 9, tzinfo=UTC),
        },
    ]
    latest = spot_latest_by_az(items, region="us-east-1")
    assert list(latest) == [("p5.48xlarge", "us-east-1", "use1-az1")]
    assert latest[("p5.48xlarge", "us-east-1", "use1-az1")].usd_per_hour == Decimal("14.25")


def test_capacity_block_p5_is_39_33_per_instance_hour():
    (page,) = recorded("ec2/us-east-1/describe_capacity_block_offerings/p5.48xlarge.json")["pages"]
    offerings = page["CapacityBlockOfferings"]
    for offering in offerings:
        offering["StartDate"] = datetime.fromisoformat(offering["StartDate"])
        offering["EndDate"] = datetime.fromisoformat(offering["EndDate"])
        # UpfrontFee / CapacityBlockDurationHours / InstanceCount = 943.92 / 24 / 1
        assert abs(capacity_block_usd_per_instance_hour(offering) - Decimal("39.33")) <= Decimal("0.01")
    quotes = capacity_block_quotes(offerings, region="us-east-1")
    assert quotes[0].usd_per_instance_hour == Decimal("39.33")
    assert quotes[0].upfront_usd == Decimal("943.92")


def test_capacity_block_divides_by_hours_and_instances():
    offering = {"UpfrontFee": "7551.36", "CapacityBlockDurationHours": 48, "InstanceCount": 4, "CurrencyCode": "USD"}
    assert capacity_block_usd_per_instance_hour(offering) == Decimal("39.33")
    with pytest.raises(ValueError, match="USD"):
        capacity_block_usd_per_instance_hour({**offering, "CurrencyCode": "EUR"})


def test_parsers_import_without_django_or_boto3():
    """parse/offers/instances are pure: importing them must not load Django, boto3 or botocore."""
    code = (
        "import sys, pricing.aws.parse, pricing.aws.offers, pricing.aws.instances; "
        "bad = [m for m in ('django', 'boto3', 'botocore') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
