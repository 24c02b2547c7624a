"""The fetchers against Stubber-attached clients: the exact requests sent, pagination, and call order."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from botocore.exceptions import ParamValidationError
from botocore.stub import ANY, Stubber

from pricing.aws.fetch import AwsClients, AwsPriceFetcher, product_filters
from pricing.aws.recorded import stubbed_client
from tests.pricing.conftest import page_for, recorded

# Written out by hand (not taken from the code under test): cloud-pricing.md section 2's TERM_MATCH set.
P5_US_EAST_1_PARAMS = {
    "ServiceCode": "AmazonEC2",
    "FormatVersion": "aws_v1",
    "Filters": [
        {"Type": "TERM_MATCH", "Field": "instanceType", "Value": "p5.48xlarge"},
        {"Type": "TERM_MATCH", "Field": "location", "Value": "US East (N. Virginia)"},
        {"Type": "TERM_MATCH", "Field": "operatingSystem", "Value": "Linux"},
        {"Type": "TERM_MATCH", "Field": "tenancy", "Value": "Shared"},
        {"Type": "TERM_MATCH", "Field": "preInstalledSw", "Value": "NA"},
        {"Type": "TERM_MATCH", "Field": "capacitystatus", "Value": "Used"},
        {"Type": "TERM_MATCH", "Field": "licenseModel", "Value": "No License required"},
        {"Type": "TERM_MATCH", "Field": "marketoption", "Value": "OnDemand"},
    ],
    "MaxResults": 100,
}
INSTANCE_TYPES = ["p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "g6e.48xlarge"]


def _get_products_page(region: str, instance_type: str) -> dict:
    (page,) = recorded(f"pricing/get_products/{region}/{instance_type}.json")["pages"]
    return page


def test_get_products_sends_the_term_match_filters(pricing_client):
    assert pricing_client.meta.region_name == "us-east-1"
    with Stubber(pricing_client) as stub:
        stub.add_response("get_products", _get_products_page("us-east-1", "p5.48xlarge"), P5_US_EAST_1_PARAMS)
        (product,) = AwsPriceFetcher(AwsClients(pricing=pricing_client)).products(
            instance_type="p5.48xlarge", region="us-east-1"
        )
        stub.assert_no_pending_responses()
    assert product.on_demand_usd_per_hour == Decimal("55.04")


def test_get_products_uses_the_us_east_1_client_for_other_regions(pricing_client):
    """Pricing another region changes the `location` filter, never the Price List endpoint."""
    expected = {**P5_US_EAST_1_PARAMS, "Filters": list(P5_US_EAST_1_PARAMS["Filters"])}
    expected["Filters"][1] = {"Type": "TERM_MATCH", "Field": "location", "Value": "US West (Oregon)"}
    with Stubber(pricing_client) as stub:
        stub.add_response("get_products", _get_products_page("us-west-2", "p5.48xlarge"), expected)
        (product,) = AwsPriceFetcher(AwsClients(pricing=pricing_client)).products(
            instance_type="p5.48xlarge", region="us-west-2"
        )
    assert (product.region, product.on_demand_usd_per_hour) == ("us-west-2", Decimal("55.04"))


def test_unmapped_region_filters_on_region_code():
    filters = product_filters(instance_type="p5.48xlarge", region="xx-test-9")
    assert {"Type": "TERM_MATCH", "Field": "regionCode", "Value": "xx-test-9"} in filters
    assert not any(f["Field"] == "location" for f in filters)


def test_get_products_follows_next_token_across_two_pages(pricing_client):
    first = {**_get_products_page("us-east-1", "p5.48xlarge"), "NextToken": "page-2-token"}
    second = _get_products_page("us-east-1", "p5en.48xlarge")
    with Stubber(pricing_client) as stub:
        stub.add_response("get_products", first, P5_US_EAST_1_PARAMS)
        stub.add_response("get_products", second, {**P5_US_EAST_1_PARAMS, "NextToken": "page-2-token"})
        products = AwsPriceFetcher(AwsClients(pricing=pricing_client)).products(
            instance_type="p5.48xlarge", region="us-east-1"
        )
        stub.assert_no_pending_responses()
    assert [p.on_demand_usd_per_hour for p in products] == [Decimal("55.04"), Decimal("63.296")]


def test_spot_history_two_pages_with_start_time_now(ec2_use1):
    call = recorded("ec2/us-east-1/describe_spot_price_history.json")
    page_1, page_2 = (page_for(ec2_use1, "describe_spot_price_history", page) for page in call["pages"])
    assert "NextToken" in page_1 and "NextToken" not in page_2
    expected = {
        "InstanceTypes": INSTANCE_TYPES,
        "ProductDescriptions": ["Linux/UNIX"],
        "StartTime": ANY,  # "now": different on every run
        "MaxResults": 1000,
    }
    now = datetime(2026, 11, 9, tzinfo=UTC)
    with Stubber(ec2_use1) as stub:
        stub.add_response("describe_spot_price_history", page_1, expected)
        stub.add_response("describe_spot_price_history", page_2, {**expected, "NextToken": page_1["NextToken"]})
        fetcher = AwsPriceFetcher(AwsClients(pricing=None, ec2={"us-east-1": ec2_use1}), now=lambda: now)
        quotes = fetcher.spot(region="us-east-1", instance_types=INSTANCE_TYPES)
        stub.assert_no_pending_responses()
    assert len(quotes) == 17  # 11 records on page 1, 6 on page 2, one per (type, AZ ID)
    assert {q.instance_type for q in quotes} == set(INSTANCE_TYPES)


def test_spot_start_time_is_the_injected_now(ec2_use1):
    now = datetime(2026, 11, 9, 12, tzinfo=UTC)
    with Stubber(ec2_use1) as stub:
        stub.add_response(
            "describe_spot_price_history",
            {"SpotPriceHistory": []},
            {
                "InstanceTypes": ["p5.48xlarge"],
                "ProductDescriptions": ["Linux/UNIX"],
                "StartTime": now,
                "MaxResults": 1000,
            },
        )
        fetcher = AwsPriceFetcher(AwsClients(pricing=None, ec2={"us-east-1": ec2_use1}), now=lambda: now)
        assert fetcher.spot(region="us-east-1", instance_types=["p5.48xlarge"]) == []


def test_capacity_block_request_and_price(ec2_use1):
    call = recorded("ec2/us-east-1/describe_capacity_block_offerings/p5.48xlarge.json")
    (page,) = (page_for(ec2_use1, "describe_capacity_block_offerings", p) for p in call["pages"])
    expected = {"InstanceType": "p5.48xlarge", "InstanceCount": 1, "CapacityDurationHours": 24}
    with Stubber(ec2_use1) as stub:
        stub.add_response("describe_capacity_block_offerings", page, expected)
        quotes = AwsPriceFetcher(AwsClients(pricing=None, ec2={"us-east-1": ec2_use1})).capacity_blocks(
            region="us-east-1", instance_type="p5.48xlarge"
        )
    assert [q.usd_per_instance_hour for q in quotes] == [Decimal("39.33"), Decimal("39.33")]
    assert isinstance(quotes[0].start, datetime)


def test_stubber_rejects_a_float_spot_price(ec2_use1):
    """Why the fixtures keep SpotPrice a string: Stubber validates responses against the service model."""
    bad = {"SpotPriceHistory": [{"InstanceType": "p5.48xlarge", "SpotPrice": 14.25}]}
    with Stubber(ec2_use1) as stub, pytest.raises(ParamValidationError):
        stub.add_response("describe_spot_price_history", bad)


def test_stubber_rejects_a_decoded_price_list_entry(pricing_client):
    decoded = {"FormatVersion": "aws_v1", "PriceList": [{"product": {}}]}
    with Stubber(pricing_client) as stub, pytest.raises(ParamValidationError):
        stub.add_response("get_products", decoded)


def test_collect_skips_refused_capacity_block_queries_with_a_warning(pricing_client, ec2_use1):
    with Stubber(pricing_client) as pricing_stub, Stubber(ec2_use1) as ec2_stub:
        pricing_stub.add_response("get_products", _get_products_page("us-east-1", "p5.48xlarge"), P5_US_EAST_1_PARAMS)
        ec2_stub.add_response("describe_spot_price_history", {"SpotPriceHistory": []})
        ec2_stub.add_client_error(
            "describe_capacity_block_offerings", service_error_code="Unsupported", http_status_code=400
        )
        fetcher = AwsPriceFetcher(AwsClients(pricing=pricing_client, ec2={"us-east-1": ec2_use1}))
        records = fetcher.collect(regions=["us-east-1"], instance_types=["p5.48xlarge"])
        pricing_stub.assert_no_pending_responses()
        ec2_stub.assert_no_pending_responses()
    assert [r.purchase for r in records] == ["on_demand", "reserved_1y", "reserved_3y"]
    assert len(fetcher.warnings) == 1 and "capacity blocks for p5.48xlarge in us-east-1" in fetcher.warnings[0]


def test_collect_asks_capacity_blocks_only_for_types_aws_sells_that_way(pricing_client, ec2_use1):
    g6e_params = {**P5_US_EAST_1_PARAMS, "Filters": list(P5_US_EAST_1_PARAMS["Filters"])}
    g6e_params["Filters"][0] = {"Type": "TERM_MATCH", "Field": "instanceType", "Value": "g6e.48xlarge"}
    with Stubber(pricing_client) as pricing_stub, Stubber(ec2_use1) as ec2_stub:
        pricing_stub.add_response("get_products", _get_products_page("us-east-1", "g6e.48xlarge"), g6e_params)
        ec2_stub.add_response("describe_spot_price_history", {"SpotPriceHistory": []})
        records = AwsPriceFetcher(AwsClients(pricing=pricing_client, ec2={"us-east-1": ec2_use1})).collect(
            regions=["us-east-1"], instance_types=["g6e.48xlarge"]
        )
        ec2_stub.assert_no_pending_responses()  # and no describe_capacity_block_offerings call was made
    assert [(r.purchase, r.usd_per_hour) for r in records] == [("on_demand", Decimal("30.131180"))]


def test_missing_region_client_is_a_clear_error():
    clients = AwsClients(pricing=None, ec2={"us-east-1": stubbed_client("ec2", "us-east-1")})
    with pytest.raises(KeyError, match="no EC2 client for region 'us-west-2'"):
        clients.ec2_for("us-west-2")
