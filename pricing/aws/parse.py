"""Turn AWS API responses into prices: pure functions, `Decimal` money, no Django, boto3 or network.

Each parser takes what boto3 hands back (dicts, JSON strings, `datetime`s) so the same code runs on a live
response and on a recorded fixture. Term and rate codes are never hard-coded: the Price List nests prices under
opaque keys (`<sku>.<offerTermCode>.<rateCode>`) that AWS may change, so the parsers walk the dicts and select by
the fields AWS documents (`unit`, `termAttributes`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

__all__ = [
    "HOURS_PER_YEAR",
    "CapacityBlockQuote",
    "ProductPrices",
    "ReservedTerm",
    "SpotQuote",
    "capacity_block_quotes",
    "capacity_block_usd_per_instance_hour",
    "lease_years",
    "on_demand_usd_per_hour",
    "product_prices",
    "reserved_effective_usd_per_hour",
    "reserved_terms",
    "spot_latest_by_az",
]

# ec2instances.info's convention for amortising an upfront fee (its effective-hourly formula): 365-day years.
HOURS_PER_YEAR = 8760
HOURLY_UNIT = "Hrs"
UPFRONT_UNIT = "Quantity"


@dataclass(frozen=True)
class ReservedTerm:
    """One Reserved Instance option; `effective_usd_per_hour` folds the upfront fee into the hourly rate."""

    lease_years: int
    offering_class: str  # standard | convertible
    purchase_option: str  # No Upfront | Partial Upfront | All Upfront
    usd_per_hour: Decimal
    upfront_usd: Decimal
    effective_usd_per_hour: Decimal
    offer_term_code: str
    raw: dict = field(compare=False, repr=False)


@dataclass(frozen=True)
class ProductPrices:
    """On-demand and reserved prices of one Price List product (one type in one region)."""

    instance_type: str
    region: str
    sku: str
    on_demand_usd_per_hour: Decimal | None
    reserved: tuple[ReservedTerm, ...]
    attributes: dict
    on_demand_raw: dict = field(compare=False, repr=False, default_factory=dict)
    publication_date: str = ""  # the Price List's own date for this product (ISO), the prices' source date


@dataclass(frozen=True)
class SpotQuote:
    instance_type: str
    region: str
    availability_zone_id: str
    availability_zone: str
    usd_per_hour: Decimal
    timestamp: datetime
    product_description: str


@dataclass(frozen=True)
class CapacityBlockQuote:
    instance_type: str
    region: str
    availability_zone: str  # a name: the API gives no AZ ID for offerings
    offering_id: str
    instance_count: int
    duration_hours: int
    upfront_usd: Decimal
    usd_per_instance_hour: Decimal
    start: datetime | None
    end: datetime | None


# --- get_products ------------------------------------------------------------------------------


def _decode(item: str | Mapping[str, Any]) -> dict:
    """PriceList entries arrive as JSON strings (botocore does not decode them); accept decoded dicts too."""
    return json.loads(item) if isinstance(item, str) else dict(item)


def _usd(dimension: Mapping[str, Any]) -> Decimal:
    return Decimal(str(dimension["pricePerUnit"]["USD"]))


def _dimensions(term: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    return (term.get("priceDimensions") or {}).values()


def on_demand_usd_per_hour(product: str | Mapping[str, Any]) -> Decimal | None:
    """The on-demand hourly USD price of a Price List product, or None if it has no hourly on-demand rate.

    Walks every OnDemand term and every price dimension and keeps the one whose `unit` is "Hrs"; with the
    fetcher's filters a product has exactly one. A product with several different hourly rates is ambiguous
    (the filters were too loose) and raises rather than silently picking one.
    """
    found = _on_demand_dimension(_decode(product))
    return None if found is None else _usd(found[1])


def _on_demand_dimension(data: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    hourly = [
        (term, dimension)
        for term in (data.get("terms", {}).get("OnDemand") or {}).values()
        for dimension in _dimensions(term)
        if dimension.get("unit") == HOURLY_UNIT
    ]
    if not hourly:
        return None
    prices = {_usd(dimension) for _, dimension in hourly}
    if len(prices) > 1:
        sku = data.get("product", {}).get("sku", "?")
        raise ValueError(f"SKU {sku} has {len(prices)} different on-demand hourly rates: {sorted(prices)}")
    return hourly[0]


def lease_years(lease_contract_length: str) -> int:
    """ "1yr" -> 1, "3yr" -> 3 (the only forms the Price List uses)."""
    text = lease_contract_length.strip().lower()
    if not text.endswith("yr") or not text[:-2].isdigit():
        raise ValueError(f"unrecognised LeaseContractLength {lease_contract_length!r}")
    return int(text[:-2])


def reserved_effective_usd_per_hour(*, usd_per_hour: Decimal, upfront_usd: Decimal, years: int) -> Decimal:
    """Hourly rate plus the upfront fee spread over every hour of the term: hourly + upfront / (years x 8760)."""
    return usd_per_hour + upfront_usd / Decimal(years * HOURS_PER_YEAR)


def reserved_terms(product: str | Mapping[str, Any]) -> list[ReservedTerm]:
    """Every Reserved term of a product, one per (LeaseContractLength, OfferingClass, PurchaseOption).

    A term's dimensions hold an hourly rate (`unit` "Hrs", 0 for All Upfront) and, unless No Upfront, an
    "Upfront Fee" (`unit` "Quantity"); either may be missing, which counts as zero.
    """
    data = _decode(product)
    terms = []
    for code, term in (data.get("terms", {}).get("Reserved") or {}).items():
        attributes = term.get("termAttributes") or {}
        hourly = Decimal(0)
        upfront = Decimal(0)
        for dimension in _dimensions(term):
            if dimension.get("unit") == HOURLY_UNIT:
                hourly += _usd(dimension)
            elif dimension.get("unit") == UPFRONT_UNIT:
                upfront += _usd(dimension)
        years = lease_years(attributes["LeaseContractLength"])
        terms.append(
            ReservedTerm(
                lease_years=years,
                offering_class=attributes.get("OfferingClass", ""),
                purchase_option=attributes.get("PurchaseOption", ""),
                usd_per_hour=hourly,
                upfront_usd=upfront,
                effective_usd_per_hour=reserved_effective_usd_per_hour(
                    usd_per_hour=hourly, upfront_usd=upfront, years=years
                ),
                offer_term_code=term.get("offerTermCode", code),
                raw={"termAttributes": dict(attributes), "priceDimensions": term.get("priceDimensions", {})},
            )
        )
    terms.sort(key=lambda t: (t.lease_years, t.offering_class, t.purchase_option))
    return terms


def product_prices(item: str | Mapping[str, Any], *, region: str | None = None) -> ProductPrices:
    """One PriceList entry -> its on-demand and reserved prices plus the attributes worth keeping."""
    data = _decode(item)
    product = data.get("product", {})
    attributes = product.get("attributes", {})
    on_demand = _on_demand_dimension(data)
    on_demand_raw = {}
    if on_demand is not None:
        term, dimension = on_demand
        on_demand_raw = {"offerTermCode": term.get("offerTermCode", ""), "priceDimension": dict(dimension)}
    return ProductPrices(
        instance_type=attributes.get("instanceType", ""),
        region=attributes.get("regionCode") or region or "",
        sku=product.get("sku", ""),
        on_demand_usd_per_hour=None if on_demand is None else _usd(on_demand[1]),
        reserved=tuple(reserved_terms(data)),
        attributes=dict(attributes),
        on_demand_raw=on_demand_raw,
        publication_date=str(data.get("publicationDate", "")),
    )


# --- describe_spot_price_history ---------------------------------------------------------------


def spot_latest_by_az(
    items: Iterable[Mapping[str, Any]], *, region: str, product_description: str = "Linux/UNIX"
) -> dict[tuple[str, str, str], SpotQuote]:
    """The latest spot price per (instance type, region, AZ ID).

    Keyed by AZ *ID* (`use1-az4`) because AZ names are shuffled per account. History can hold several changes
    per AZ (AWS also returns the last change before StartTime), so the newest Timestamp wins. Other product
    descriptions (Windows, SUSE, "(Amazon VPC)" variants) are skipped in case the request filter was wider.
    """
    latest: dict[tuple[str, str, str], SpotQuote] = {}
    for item in items:
        if item.get("ProductDescription") != product_description:
            continue
        quote = SpotQuote(
            instance_type=item["InstanceType"],
            region=region,
            availability_zone_id=item.get("AvailabilityZoneId", ""),
            availability_zone=item.get("AvailabilityZone", ""),
            usd_per_hour=Decimal(item["SpotPrice"]),  # a string in the API; never via float
            timestamp=item["Timestamp"],
            product_description=item["ProductDescription"],
        )
        key = (quote.instance_type, region, quote.availability_zone_id or quote.availability_zone)
        if key not in latest or quote.timestamp > latest[key].timestamp:
            latest[key] = quote
    return latest


# --- describe_capacity_block_offerings ---------------------------------------------------------


def capacity_block_usd_per_instance_hour(offering: Mapping[str, Any]) -> Decimal:
    """UpfrontFee / CapacityBlockDurationHours / InstanceCount: a block is paid upfront for all its hours."""
    if offering.get("CurrencyCode", "USD") != "USD":
        raise ValueError(f"capacity block {offering.get('CapacityBlockOfferingId')} not priced in USD")
    return (
        Decimal(str(offering["UpfrontFee"]))
        / Decimal(int(offering["CapacityBlockDurationHours"]))
        / Decimal(int(offering["InstanceCount"]))
    )


def capacity_block_quotes(offerings: Iterable[Mapping[str, Any]], *, region: str) -> list[CapacityBlockQuote]:
    """Every offering as a quote, cheapest first (ties by start date, so the order is stable)."""
    quotes = [
        CapacityBlockQuote(
            instance_type=offering["InstanceType"],
            region=region,
            availability_zone=offering.get("AvailabilityZone", ""),
            offering_id=offering.get("CapacityBlockOfferingId", ""),
            instance_count=int(offering["InstanceCount"]),
            duration_hours=int(offering["CapacityBlockDurationHours"]),
            upfront_usd=Decimal(str(offering["UpfrontFee"])),
            usd_per_instance_hour=capacity_block_usd_per_instance_hour(offering),
            start=offering.get("StartDate"),
            end=offering.get("EndDate"),
        )
        for offering in offerings
    ]
    quotes.sort(key=lambda q: (q.usd_per_instance_hour, q.start.isoformat() if q.start else "", q.offering_id))
    return quotes
