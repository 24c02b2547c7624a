"""Cloud Billing Catalog SKU rows -> offers: pure functions, `Decimal` money, no Django or network.

Why recorded rows: the live source is the Cloud Billing Catalog API (`CloudCatalogClient.list_skus` in
google-cloud-billing), which this project does not depend on; the rows are kept in that API's `Sku` shape
(`skuId`, `description`, `category.usageType`, `serviceRegions`, `pricingInfo[].pricingExpression.tieredRates[]
.unitPrice {units, nanos}`, `pricingInfo[].effectiveTime`) so a future fetcher parses them with this code.

Rules, each stated once:
- One row per accelerator-optimized machine type (A3 High/Mega/Ultra, A4, A4X); the machine type is read from
  the description (`a3-highgpu-8g`), its GPUs from `GCP_MACHINE_TYPES` (Google Cloud documentation, "GPU machine
  types": GPUs per VM and model; the scale-out network from "Accelerator-optimized machine family").
- `usageType` -> purchase: OnDemand -> on_demand, Preemptible (Spot VMs) -> spot, Commit1Yr / Commit3Yr ->
  reserved_1y / reserved_3y (committed-use discounts, paid whatever the use).
- $/hour = units + nanos / 1e9 of the first tier whose usage unit is hours; `observed_at` = `effectiveTime`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pricing.aws.offers import ON_DEMAND, RESERVED_1Y, RESERVED_3Y, SPOT, OfferRecord, json_safe, usd_per_hour_round

__all__ = ["GCP_MACHINE_TYPES", "GCP_PROVIDER", "GcpMachineType", "catalog_offers", "sku_offer", "unit_price_usd"]

GCP_PROVIDER = "gcp"
USAGE_PURCHASE = {"OnDemand": ON_DEMAND, "Preemptible": SPOT, "Commit1Yr": RESERVED_1Y, "Commit3Yr": RESERVED_3Y}
_MACHINE = re.compile(r"\b(a\d[a-z]?-[a-z]+gpu-\d+g)\b")
NANOS = Decimal(1_000_000_000)


@dataclass(frozen=True)
class GcpMachineType:
    gpus: int
    gpu_model: str  # catalog GPU id
    catalog_system: str  # catalog system with the same GPUs per node
    scale_out: str


GCP_MACHINE_TYPES: dict[str, GcpMachineType] = {
    "a3-highgpu-8g": GcpMachineType(8, "h100-sxm", "dgx-h100", "4 x 200 Gb/s GPUDirect-TCPX"),
    "a3-megagpu-8g": GcpMachineType(8, "h100-sxm", "dgx-h100", "8 x 200 Gb/s GPUDirect-TCPXO"),
    "a3-ultragpu-8g": GcpMachineType(8, "h200-sxm", "dgx-h200", "8 x 400 Gb/s RoCE (GPUDirect RDMA)"),
    "a4-highgpu-8g": GcpMachineType(8, "b200-hgx", "dgx-b200", "8 x 400 Gb/s RoCE (GPUDirect RDMA)"),
    "a4x-highgpu-4g": GcpMachineType(4, "b200-gb200", "gb200-nvl72", "4 x 400 Gb/s RoCE (GPUDirect RDMA)"),
}


def unit_price_usd(pricing_info: Mapping[str, Any]) -> Decimal | None:
    """The hourly USD price of one `pricingInfo` entry: units + nanos / 1e9 of its first tier."""
    expression = pricing_info.get("pricingExpression", {})
    if expression.get("usageUnit") != "h":
        return None
    tiers = expression.get("tieredRates") or []
    if not tiers:
        return None
    price = tiers[0].get("unitPrice", {})
    if price.get("currencyCode", "USD") != "USD":
        return None
    return Decimal(str(price.get("units", "0") or "0")) + Decimal(int(price.get("nanos", 0) or 0)) / NANOS


def sku_offer(sku: Mapping[str, Any], *, source: str, confidence: str = "list_price") -> list[OfferRecord]:
    """One SKU -> one offer per service region (none for machine types or usage types not priced here)."""
    found = _MACHINE.search(str(sku.get("description", "")))
    machine = GCP_MACHINE_TYPES.get(found.group(1)) if found else None
    purchase = USAGE_PURCHASE.get(str(sku.get("category", {}).get("usageType", "")))
    infos = sku.get("pricingInfo") or []
    if machine is None or purchase is None or not infos or found is None:
        return []
    info = infos[-1]  # the API lists the price in effect last
    usd = unit_price_usd(info)
    if usd is None:
        return []
    raw = {
        "skuId": sku.get("skuId"),
        "description": sku.get("description"),
        "usageType": sku.get("category", {}).get("usageType"),
        "effectiveTime": info.get("effectiveTime"),
        "catalog_system": machine.catalog_system,
        "scale_out": machine.scale_out,
    }
    return [
        OfferRecord(
            instance_type=found.group(1),
            region=region,
            availability_zone_id="",
            purchase=purchase,
            usd_per_hour=usd_per_hour_round(usd),
            gpus=machine.gpus,
            gpu_model=machine.gpu_model,
            raw=json_safe(raw),
            provider=GCP_PROVIDER,
            source=source,
            observed_at=str(info.get("effectiveTime", "")),
            confidence=confidence,
        )
        for region in sku.get("serviceRegions", [])
    ]


def catalog_offers(
    skus: Iterable[Mapping[str, Any]], *, source: str, confidence_by_sku: Mapping[str, str] | None = None
) -> list[OfferRecord]:
    """Every priced SKU row as offers, sorted (machine type, region, purchase); a repeated key keeps the newest."""
    labels = confidence_by_sku or {}
    best: dict[tuple[str, str, str, str], OfferRecord] = {}
    for sku in skus:
        for offer in sku_offer(sku, source=source, confidence=labels.get(str(sku.get("skuId")), "list_price")):
            known = best.get(offer.key)
            if known is None or offer.observed_at > known.observed_at:
                best[offer.key] = offer
    return sorted(best.values(), key=lambda o: (o.instance_type, o.region, o.purchase))
