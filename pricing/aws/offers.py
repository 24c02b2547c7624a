"""Normalise parsed AWS quotes into one row per (instance type, region, AZ ID, purchase option).

Pure Python (no Django): the service layer turns these records into `CloudOffer` rows, and tests can check
the normalisation without a database. The rules that need judgement live here, each stated once:

- reserved_1y / reserved_3y: the lowest *effective* hourly price among **standard** offerings of that length
  (convertible RIs cost more for the flexibility a plan does not use); every option is kept in `raw`.
- spot: one row per AZ ID. A spot price at or above on-demand in the same region means AWS has no spare
  capacity there (spot pinned at the on-demand price, as spot price history shows for scarce GPU types), so the
  row is kept (it is what AWS quotes) but flagged `capacity_constrained`, and costing should not treat it as a discount.
- observed_at: each offer carries its own source's date where the source states one: the Price List's
  `publicationDate` (on-demand, reserved), the spot record's `Timestamp`; capacity blocks are priced when asked,
  so they take the snapshot's time.
- capacity_block: one regional row per type at the cheapest offering's $/instance-hour. Offerings carry AZ
  *names* only, which differ per account, so they are not keyed by zone; all offerings stay in `raw`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from .instances import instance_gpus
from .parse import CapacityBlockQuote, ProductPrices, ReservedTerm, SpotQuote

__all__ = [
    "CAPACITY_BLOCK",
    "ON_DEMAND",
    "PURCHASE_OPTIONS",
    "RESERVED_1Y",
    "RESERVED_3Y",
    "SAVINGS_PLAN_1Y",
    "SAVINGS_PLAN_3Y",
    "SPOT",
    "USD_PER_HOUR_QUANTUM",
    "OfferRecord",
    "json_safe",
    "offers_build",
    "usd_per_hour_round",
]

ON_DEMAND = "on_demand"
SPOT = "spot"
RESERVED_1Y = "reserved_1y"
RESERVED_3Y = "reserved_3y"
SAVINGS_PLAN_1Y = "savings_plan_1y"
SAVINGS_PLAN_3Y = "savings_plan_3y"
CAPACITY_BLOCK = "capacity_block"
PURCHASE_OPTIONS = (ON_DEMAND, SPOT, RESERVED_1Y, RESERVED_3Y, SAVINGS_PLAN_1Y, SAVINGS_PLAN_3Y, CAPACITY_BLOCK)
RESERVED_BY_YEARS = {1: RESERVED_1Y, 3: RESERVED_3Y}

# Matches CloudOffer.usd_per_hour (decimal_places=6): round once, here, so the stored value is what tests see.
USD_PER_HOUR_QUANTUM = Decimal("0.000001")


def usd_per_hour_round(value: Decimal) -> Decimal:
    return value.quantize(USD_PER_HOUR_QUANTUM, rounding=ROUND_HALF_UP)


def json_safe(value: Any) -> Any:
    """Decimals and datetimes as strings, recursively, so `raw` fits a JSONField and keeps full precision."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


@dataclass(frozen=True)
class OfferRecord:
    """One price a plan can use: what a single instance costs per hour under one purchase option.

    Every provider's parser builds these (Azure, Google Cloud and the price lists too), so one store path
    (`pricing.services._snapshot_store`) handles the whole market; `provider`, `source`, `observed_at` (the
    source's own date) and `confidence` say where each price came from."""

    instance_type: str
    region: str
    availability_zone_id: str  # "" for regional prices (on-demand, reserved, capacity block)
    purchase: str
    usd_per_hour: Decimal
    gpus: int
    gpu_model: str
    capacity_constrained: bool = False
    raw: dict = field(default_factory=dict, compare=False, repr=False)
    provider: str = "aws"
    source: str = ""  # the primary source (title and date); "" = the snapshot's source
    observed_at: str = ""  # ISO date or timestamp of the source; "" = the snapshot's date
    confidence: str = "list_price"  # list_price | quote | public_estimate | assumption

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.instance_type, self.region, self.availability_zone_id, self.purchase)


_KEPT_ATTRIBUTES = ("instanceType", "regionCode", "location", "vcpu", "memory", "gpu", "usagetype", "operatingSystem")


def _reserved_option(term: ReservedTerm) -> dict:
    return {
        "offerTermCode": term.offer_term_code,
        "OfferingClass": term.offering_class,
        "PurchaseOption": term.purchase_option,
        "usd_per_hour": term.usd_per_hour,
        "upfront_usd": term.upfront_usd,
        "effective_usd_per_hour": term.effective_usd_per_hour,
    }


def _product_offers(product: ProductPrices) -> list[OfferRecord]:
    gpus = instance_gpus(product.instance_type, gpu_attribute=product.attributes.get("gpu"))
    attributes = {k: product.attributes[k] for k in _KEPT_ATTRIBUTES if k in product.attributes}
    records = []

    def offer(purchase: str, usd_per_hour, raw: dict) -> OfferRecord:
        return OfferRecord(
            instance_type=product.instance_type,
            region=product.region,
            availability_zone_id="",
            purchase=purchase,
            usd_per_hour=usd_per_hour_round(usd_per_hour),
            gpus=gpus.gpus,
            gpu_model=gpus.gpu_model,
            raw=json_safe(raw),
            observed_at=product.publication_date,
        )

    if product.on_demand_usd_per_hour is not None:
        raw = {"sku": product.sku, **product.on_demand_raw, "attributes": attributes}
        records.append(offer(ON_DEMAND, product.on_demand_usd_per_hour, raw))
    by_years: dict[int, list[ReservedTerm]] = defaultdict(list)
    for term in product.reserved:
        by_years[term.lease_years].append(term)
    for years, terms in sorted(by_years.items()):
        purchase = RESERVED_BY_YEARS.get(years)
        if purchase is None:
            continue
        standard = [t for t in terms if t.offering_class == "standard"] or terms
        chosen = min(standard, key=lambda t: (t.effective_usd_per_hour, t.purchase_option))
        raw = {
            "sku": product.sku,
            "selection": "lowest effective hourly (hourly + upfront / (years x 8760)) among standard",
            "chosen": {**_reserved_option(chosen), **chosen.raw},
            "options": [_reserved_option(t) for t in terms],
        }
        records.append(offer(purchase, chosen.effective_usd_per_hour, raw))
    return records


def offers_build(
    *,
    products: Iterable[ProductPrices],
    spot: Iterable[SpotQuote] = (),
    capacity_blocks: Iterable[CapacityBlockQuote] = (),
) -> list[OfferRecord]:
    """All quotes -> normalised offers, sorted by (type, region, purchase, AZ) so output is deterministic."""
    records: dict[tuple[str, str, str, str], OfferRecord] = {}
    on_demand: dict[tuple[str, str], Decimal] = {}
    for product in products:
        for record in _product_offers(product):
            if record.key in records:
                raise ValueError(f"two Price List products for {record.key}; the filters are too loose")
            records[record.key] = record
            if record.purchase == ON_DEMAND:
                on_demand[(record.instance_type, record.region)] = record.usd_per_hour

    for quote in spot:
        record = _spot_offer(quote, on_demand)
        records[record.key] = record  # spot_latest_by_az already kept one quote per AZ
    for record in _capacity_block_offers(capacity_blocks):
        records[record.key] = record

    order = {purchase: i for i, purchase in enumerate(PURCHASE_OPTIONS)}
    return sorted(
        records.values(), key=lambda r: (r.instance_type, r.region, order[r.purchase], r.availability_zone_id)
    )


def _spot_offer(quote: SpotQuote, on_demand: Mapping[tuple[str, str], Decimal]) -> OfferRecord:
    """One AZ's latest spot quote as an offer; a spot price at or above on-demand in its region marks the AZ as
    capacity-constrained (no spare capacity there)."""
    gpus = instance_gpus(quote.instance_type)
    od_usd_per_hour = on_demand.get((quote.instance_type, quote.region))
    usd_per_hour = usd_per_hour_round(quote.usd_per_hour)
    constrained = od_usd_per_hour is not None and usd_per_hour >= od_usd_per_hour
    raw = {
        "AvailabilityZone": quote.availability_zone,
        "AvailabilityZoneId": quote.availability_zone_id,
        "InstanceType": quote.instance_type,
        "ProductDescription": quote.product_description,
        "SpotPrice": str(quote.usd_per_hour),
        "Timestamp": quote.timestamp,
        "on_demand_usd_per_hour": od_usd_per_hour,
    }
    if constrained:
        raw["capacity_note"] = "spot at the on-demand price: no spare capacity in this AZ"
    return OfferRecord(
        instance_type=quote.instance_type,
        region=quote.region,
        availability_zone_id=quote.availability_zone_id,
        purchase=SPOT,
        usd_per_hour=usd_per_hour,
        gpus=gpus.gpus,
        gpu_model=gpus.gpu_model,
        capacity_constrained=constrained,
        raw=json_safe(raw),
        observed_at=quote.timestamp.isoformat() if isinstance(quote.timestamp, datetime) else str(quote.timestamp),
    )


def _capacity_block_offers(capacity_blocks: Iterable[CapacityBlockQuote]) -> Iterator[OfferRecord]:
    """One offer per (instance type, region): the cheapest capacity-block offering per instance-hour, with every
    offering kept in `raw` for the record."""
    grouped: dict[tuple[str, str], list[CapacityBlockQuote]] = defaultdict(list)
    for quote in capacity_blocks:
        grouped[(quote.instance_type, quote.region)].append(quote)
    for (instance_type, region), quotes in grouped.items():
        quotes.sort(key=lambda q: (q.usd_per_instance_hour, q.start.isoformat() if q.start else "", q.offering_id))
        cheapest = quotes[0]  # pages may interleave offerings, so sort again after grouping
        gpus = instance_gpus(instance_type)
        yield OfferRecord(
            instance_type=instance_type,
            region=region,
            availability_zone_id="",
            purchase=CAPACITY_BLOCK,
            usd_per_hour=usd_per_hour_round(cheapest.usd_per_instance_hour),
            gpus=gpus.gpus,
            gpu_model=gpus.gpu_model,
            raw=json_safe(
                {
                    "selection": "cheapest offering per instance-hour (UpfrontFee / hours / instances)",
                    "offerings": [
                        {
                            "CapacityBlockOfferingId": q.offering_id,
                            "AvailabilityZone": q.availability_zone,
                            "InstanceCount": q.instance_count,
                            "CapacityBlockDurationHours": q.duration_hours,
                            "UpfrontFee": q.upfront_usd,
                            "StartDate": q.start,
                            "EndDate": q.end,
                            "usd_per_instance_hour": q.usd_per_instance_hour,
                        }
                        for q in quotes
                    ],
                }
            ),
        )
