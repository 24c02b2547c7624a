"""Azure Retail Prices API items -> offers: pure functions, `Decimal` money, no Django or network.

What the API returns (Microsoft Learn, "Azure Retail Prices REST API overview"): one item per meter with
`armSkuName`, `armRegionName`, `retailPrice` (USD), `unitOfMeasure`, `type` (`Consumption`, `Reservation`,
`DevTestConsumption`), `reservationTerm` ("1 Year", "3 Years") and `effectiveStartDate`. The rules that need
judgement, each stated once:

- Linux only: Windows meters carry "Windows" in `productName`; Low Priority meters (a retired tier) and Dev/Test
  prices are skipped.
- Spot is a `Consumption` meter whose `skuName`/`meterName` ends in "Spot"; it becomes a regional spot offer
  (Azure publishes one spot price per region, not per zone).
- A reservation's `retailPrice` is the whole term's price although `unitOfMeasure` says "1 Hour": the effective
  hourly price is retailPrice / (years x 8760), 8760 being Azure's 730-hour month x 12.
- `observed_at` is the item's `effectiveStartDate`: the date the price took effect is the source's own date.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from pricing.aws.offers import (
    ON_DEMAND,
    RESERVED_1Y,
    RESERVED_3Y,
    SPOT,
    OfferRecord,
    json_safe,
    usd_per_hour_round,
)

from .skus import AZURE_GPU_SKUS

__all__ = [
    "AZURE_HOURS_PER_YEAR",
    "AZURE_PROVIDER",
    "AZURE_SOURCE",
    "azure_offers",
    "item_offer",
    "reservation_years",
]

AZURE_PROVIDER = "azure"
AZURE_SOURCE = "Azure Retail Prices API (prices.azure.com/api/retail/prices), Linux virtual machines"
AZURE_HOURS_PER_YEAR = 8760
_RESERVED = {1: RESERVED_1Y, 3: RESERVED_3Y}
_KEPT = (
    "armSkuName",
    "armRegionName",
    "skuName",
    "meterName",
    "productName",
    "type",
    "reservationTerm",
    "retailPrice",
    "unitOfMeasure",
    "effectiveStartDate",
    "meterId",
)


def reservation_years(term: str) -> int | None:
    """ "1 Year" -> 1, "3 Years" -> 3; anything else -> None."""
    head = (term or "").split(" ", 1)[0]
    return int(head) if head.isdigit() else None


def _is_linux_retail(item: Mapping[str, Any]) -> bool:
    names = " ".join(str(item.get(k, "")) for k in ("productName", "skuName", "meterName"))
    return "Windows" not in names and "Low Priority" not in names and item.get("currencyCode", "USD") == "USD"


def _purchase_and_rate(item: Mapping[str, Any]) -> tuple[str, Decimal] | None:
    price = Decimal(str(item["retailPrice"]))  # JSON number -> Decimal via its text, never float arithmetic
    kind = item.get("type")
    if kind == "Consumption":
        spot = str(item.get("skuName", "")).endswith("Spot") or str(item.get("meterName", "")).endswith("Spot")
        return (SPOT if spot else ON_DEMAND), price
    if kind == "Reservation":
        years = reservation_years(str(item.get("reservationTerm", "")))
        if years not in _RESERVED:
            return None
        return _RESERVED[years], price / (years * AZURE_HOURS_PER_YEAR)
    return None  # DevTestConsumption and anything new


def item_offer(item: Mapping[str, Any], *, confidence: str = "list_price") -> OfferRecord | None:
    """One API item -> one offer, or None for sizes the planner does not price and meters it skips."""
    sku = AZURE_GPU_SKUS.get(str(item.get("armSkuName", "")))
    if sku is None or not _is_linux_retail(item):
        return None
    priced = _purchase_and_rate(item)
    if priced is None:
        return None
    purchase, usd_per_hour = priced
    raw = {k: item[k] for k in _KEPT if k in item}
    raw["catalog_system"] = sku.catalog_system
    raw["scale_out"] = sku.scale_out
    return OfferRecord(
        instance_type=str(item["armSkuName"]),
        region=str(item["armRegionName"]),
        availability_zone_id="",
        purchase=purchase,
        usd_per_hour=usd_per_hour_round(usd_per_hour),
        gpus=sku.gpus,
        gpu_model=sku.gpu_model,
        raw=json_safe(raw),
        provider=AZURE_PROVIDER,
        source=AZURE_SOURCE,
        observed_at=str(item.get("effectiveStartDate", "")),
        confidence=confidence,
    )


def azure_offers(
    items: Iterable[Mapping[str, Any]], *, confidence_by_meter: Mapping[str, str] | None = None
) -> list[OfferRecord]:
    """Every priced item as an offer, one per (SKU, region, purchase): where the API lists a price twice (an old
    and a new effective date), the newest `effectiveStartDate` wins. `confidence_by_meter` labels single meters
    (by `meterId`) differently from the default `list_price`."""
    labels = confidence_by_meter or {}
    best: dict[tuple[str, str, str, str], OfferRecord] = {}
    for item in items:
        offer = item_offer(item, confidence=labels.get(str(item.get("meterId", "")), "list_price"))
        if offer is None:
            continue
        known = best.get(offer.key)
        if known is None or offer.observed_at > known.observed_at:
            best[offer.key] = offer
    return sorted(best.values(), key=lambda o: (o.instance_type, o.region, o.purchase))
