"""Fetch AWS GPU prices with boto3 clients that the caller passes in.

Why injected clients: `botocore.stub.Stubber` attaches to one client object, so taking clients (instead of
creating them inside) is what lets the tests and the offline fixture loader drive this exact code with
recorded responses. Credentials are never handled here: `aws_clients_from_default_chain` uses boto3's
standard chain (environment, shared files, SSO, container or instance role).

Every API used has a paginator, and every call goes through it, so a long answer is never cut at page one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .instances import CAPACITY_BLOCK_TYPES, REGION_LOCATIONS
from .offers import PURCHASE_OPTIONS, OfferRecord, offers_build
from .parse import (
    CapacityBlockQuote,
    ProductPrices,
    SpotQuote,
    capacity_block_quotes,
    product_prices,
    spot_latest_by_az,
)
from .savings_plans import SavingsPlanRate, savings_plan_offers, savings_plan_rates, savings_plan_rates_params
from .specs import describe_instance_types_params

__all__ = [
    "GET_PRODUCTS_PAGE_SIZE",
    "INSTANCE_TYPES_PAGE_SIZE",
    "PRICING_CLIENT_REGION",
    "SPOT_PAGE_SIZE",
    "AwsClients",
    "AwsPriceFetcher",
    "aws_clients_from_default_chain",
    "get_products_params",
    "product_filters",
]

logger = logging.getLogger(__name__)

# The Price List API answers in us-east-1 (and ap-south-1) only, whichever region is being priced;
# botocore happily builds URLs for other regions that do not resolve (AWS Price List API documentation).
PRICING_CLIENT_REGION = "us-east-1"
GET_PRODUCTS_PAGE_SIZE = 100  # the API maximum
SPOT_PAGE_SIZE = 1000  # the API maximum
INSTANCE_TYPES_PAGE_SIZE = 100  # the API maximum (5-100)
SPOT_PRODUCT_DESCRIPTION = "Linux/UNIX"
CAPACITY_BLOCK_INSTANCE_COUNT = 1
CAPACITY_BLOCK_DURATION_HOURS = 24


def product_filters(*, instance_type: str, region: str) -> list[dict[str, str]]:
    """The TERM_MATCH set SkyPilot, ec2instances.info and infracost use: one Linux, shared-tenancy, on-demand SKU.

    `capacitystatus=Used` drops the reservation-accounting SKUs and `marketoption=OnDemand` the Capacity Block
    SKUs; without them a type matches several products with different prices.
    """
    location = REGION_LOCATIONS.get(region)
    place = ("location", location) if location else ("regionCode", region)
    pairs = [
        ("instanceType", instance_type),
        place,
        ("operatingSystem", "Linux"),
        ("tenancy", "Shared"),
        ("preInstalledSw", "NA"),
        ("capacitystatus", "Used"),
        ("licenseModel", "No License required"),
        ("marketoption", "OnDemand"),
    ]
    return [{"Type": "TERM_MATCH", "Field": name, "Value": value} for name, value in pairs]


def get_products_params(*, instance_type: str, region: str) -> dict[str, Any]:
    """Arguments of one `get_products` query (the paginator adds MaxResults and NextToken)."""
    return {
        "ServiceCode": "AmazonEC2",
        "FormatVersion": "aws_v1",
        "Filters": product_filters(instance_type=instance_type, region=region),
    }


@dataclass
class AwsClients:
    """One Price List client (always us-east-1), one EC2 client per priced region and, optionally, the Savings
    Plans client."""

    pricing: Any
    ec2: Mapping[str, Any] = field(default_factory=dict)
    savingsplans: Any | None = None  # global endpoint; None = Savings Plans not asked for

    def ec2_for(self, region: str) -> Any:
        try:
            return self.ec2[region]
        except KeyError:
            raise KeyError(f"no EC2 client for region {region!r}; have {sorted(self.ec2)}") from None


def aws_clients_from_default_chain(regions: Iterable[str], *, session: Any | None = None) -> AwsClients:
    """Clients from boto3's default credential chain; raises NoCredentialsError up front if it finds none.

    Checking first matters: boto3 only looks for credentials when a request is signed, so without this a
    missing-credentials refresh would fail mid-way, after some calls, with a less helpful message.
    """
    import boto3
    from botocore.config import Config
    from botocore.exceptions import NoCredentialsError

    session = session or boto3.session.Session()
    if session.get_credentials() is None:
        raise NoCredentialsError()
    config = Config(retries={"mode": "standard", "max_attempts": 5})
    return AwsClients(
        pricing=session.client("pricing", region_name=PRICING_CLIENT_REGION, config=config),
        ec2={region: session.client("ec2", region_name=region, config=config) for region in regions},
        savingsplans=session.client("savingsplans", region_name=PRICING_CLIENT_REGION, config=config),
    )


def _offer_order(record: OfferRecord) -> tuple[str, str, int, str]:
    return (record.instance_type, record.region, PURCHASE_OPTIONS.index(record.purchase), record.availability_zone_id)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class AwsPriceFetcher:
    """Fetch on-demand, reserved, spot and Capacity Block prices for GPU instance types.

    Call order (which matters to a Stubber, whose queue is per client and first-in first-out):
    the pricing client sees one `get_products` query per (region, instance type), regions outer, both in the
    order given; each region's EC2 client sees one `describe_spot_price_history` query for all types, then
    one `describe_capacity_block_offerings` query per Capacity Block type, in the order given; the Savings Plans
    client (when given) sees one `describe_savings_plans_offering_rates` query per region. The services call
    `instance_types` (one paginated `describe_instance_types` query, in one region) after `collect`.
    """

    def __init__(self, clients: AwsClients, *, now: Callable[[], datetime] = _utc_now) -> None:
        self.clients = clients
        self.now = now
        self.warnings: list[str] = []

    def products(self, *, instance_type: str, region: str) -> list[ProductPrices]:
        paginator = self.clients.pricing.get_paginator("get_products")
        pages = paginator.paginate(
            **get_products_params(instance_type=instance_type, region=region),
            PaginationConfig={"PageSize": GET_PRODUCTS_PAGE_SIZE},
        )
        return [product_prices(item, region=region) for page in pages for item in page.get("PriceList", [])]

    def spot(self, *, region: str, instance_types: Sequence[str]) -> list[SpotQuote]:
        """Current spot prices: with StartTime = now AWS returns the price in effect in each AZ."""
        paginator = self.clients.ec2_for(region).get_paginator("describe_spot_price_history")
        pages = paginator.paginate(
            InstanceTypes=list(instance_types),
            ProductDescriptions=[SPOT_PRODUCT_DESCRIPTION],
            StartTime=self.now(),
            PaginationConfig={"PageSize": SPOT_PAGE_SIZE},
        )
        items = [item for page in pages for item in page.get("SpotPriceHistory", [])]
        return list(spot_latest_by_az(items, region=region, product_description=SPOT_PRODUCT_DESCRIPTION).values())

    def capacity_blocks(
        self,
        *,
        region: str,
        instance_type: str,
        instance_count: int = CAPACITY_BLOCK_INSTANCE_COUNT,
        duration_hours: int = CAPACITY_BLOCK_DURATION_HOURS,
    ) -> list[CapacityBlockQuote]:
        """Offerings for one block shape; an empty list means nothing is on offer (not an error)."""
        paginator = self.clients.ec2_for(region).get_paginator("describe_capacity_block_offerings")
        pages = paginator.paginate(
            InstanceType=instance_type, InstanceCount=instance_count, CapacityDurationHours=duration_hours
        )
        offerings = [item for page in pages for item in page.get("CapacityBlockOfferings", [])]
        return capacity_block_quotes(offerings, region=region)

    def savings_plans(self, *, region: str, instance_types: Sequence[str]) -> list[SavingsPlanRate]:
        """Savings Plans hourly rates for these types in one region (`nextToken` followed by hand: no paginator)."""
        client = self.clients.savingsplans
        params = savings_plan_rates_params(instance_types=instance_types, region=region)
        results: list[dict] = []
        token = None
        while True:
            page = client.describe_savings_plans_offering_rates(**params, **({"nextToken": token} if token else {}))
            results.extend(page.get("searchResults", []))
            token = page.get("nextToken")
            if not token:
                return savings_plan_rates(results, region=region)

    def instance_types(self, *, region: str, patterns: Sequence[str]) -> list[dict]:
        """Raw `InstanceTypeInfo` items for types matching the `instance-type` wildcards (there is no gpu filter).

        Returned unparsed: `pricing.aws.specs.instance_specs_resolve` parses and corrects them. Specs are the same
        in every region that offers a type, so one region's answer serves the snapshot.
        """
        paginator = self.clients.ec2_for(region).get_paginator("describe_instance_types")
        pages = paginator.paginate(
            **describe_instance_types_params(patterns), PaginationConfig={"PageSize": INSTANCE_TYPES_PAGE_SIZE}
        )
        return [item for page in pages for item in page.get("InstanceTypes", [])]

    def collect(
        self,
        *,
        regions: Sequence[str],
        instance_types: Sequence[str],
        capacity_block_types: Sequence[str] | None = None,
        capacity_block_instance_count: int = CAPACITY_BLOCK_INSTANCE_COUNT,
        capacity_block_duration_hours: int = CAPACITY_BLOCK_DURATION_HOURS,
    ) -> list[OfferRecord]:
        """Every price for these types in these regions, normalised (see `offers.offers_build`).

        `capacity_block_types` defaults to the requested types that AWS sells as Capacity Blocks. A Capacity
        Block query AWS refuses (a region without the service, say) is logged and skipped, because one region's
        missing blocks should not throw away every other price just fetched.
        """
        from botocore.exceptions import ClientError

        if capacity_block_types is None:
            capacity_block_types = [t for t in instance_types if t in CAPACITY_BLOCK_TYPES]
        products = [
            product
            for region in regions
            for instance_type in instance_types
            for product in self.products(instance_type=instance_type, region=region)
        ]
        spot: list[SpotQuote] = []
        blocks: list[CapacityBlockQuote] = []
        for region in regions:
            if instance_types:
                spot.extend(self.spot(region=region, instance_types=instance_types))
            for instance_type in capacity_block_types:
                try:
                    blocks.extend(
                        self.capacity_blocks(
                            region=region,
                            instance_type=instance_type,
                            instance_count=capacity_block_instance_count,
                            duration_hours=capacity_block_duration_hours,
                        )
                    )
                except ClientError as error:
                    message = f"capacity blocks for {instance_type} in {region} unavailable: {error}"
                    logger.warning(message)
                    self.warnings.append(message)
        rates: list[SavingsPlanRate] = []
        if self.clients.savingsplans is not None and instance_types:
            for region in regions:
                try:
                    rates.extend(self.savings_plans(region=region, instance_types=instance_types))
                except ClientError as error:
                    message = f"savings plans rates in {region} unavailable: {error}"
                    logger.warning(message)
                    self.warnings.append(message)
        offers = offers_build(products=products, spot=spot, capacity_blocks=blocks)
        return sorted([*offers, *savings_plan_offers(rates)], key=_offer_order)
