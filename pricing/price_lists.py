"""Dated public price lists of the neoclouds and contract offers (Lambda, CoreWeave, Nebius, RunPod, ...) -> offers.

Why plain records: these providers publish per-GPU-hour list prices on web pages, and 1-3 year contracts have no
API at all, so each price is kept as a dated record with its primary source and a confidence label
(`list_price`, `quote`, `public_estimate`, `assumption`), like the component prices. `gpuhunt` (dstack) would
refresh them live; it is not a dependency. An offer is priced per instance: usd_per_hour = usd_per_gpu_hour x
gpus_per_instance, the node the provider rents (8 GPUs for HGX nodes), so a plan's instance count is whole nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from pricing.aws.offers import PURCHASE_OPTIONS, OfferRecord, json_safe, usd_per_hour_round

__all__ = ["CONFIDENCES", "price_list_offer", "price_list_offers"]

CONFIDENCES = ("list_price", "quote", "public_estimate", "assumption")
REQUIRED = ("provider", "instance_type", "region", "purchase", "usd_per_gpu_hour", "gpus_per_instance", "gpu_model")


def price_list_offer(record: Mapping[str, Any]) -> OfferRecord:
    """One price-list record -> an offer; a record missing a field, with an unknown purchase or confidence, or
    without its source and date raises ValueError naming the record, so a bad edit never prices silently."""
    name = f"{record.get('provider')} {record.get('instance_type')} {record.get('purchase')}"
    missing = [key for key in (*REQUIRED, "source", "as_of", "confidence") if not record.get(key)]
    if missing:
        raise ValueError(f"price list record {name}: missing {', '.join(missing)}")
    if record["purchase"] not in PURCHASE_OPTIONS:
        raise ValueError(f"price list record {name}: purchase must be one of {', '.join(PURCHASE_OPTIONS)}")
    if record["confidence"] not in CONFIDENCES:
        raise ValueError(f"price list record {name}: confidence must be one of {', '.join(CONFIDENCES)}")
    gpus = int(record["gpus_per_instance"])
    per_gpu = Decimal(str(record["usd_per_gpu_hour"]))
    if gpus <= 0 or per_gpu <= 0:
        raise ValueError(f"price list record {name}: usd_per_gpu_hour and gpus_per_instance must be > 0")
    return OfferRecord(
        instance_type=str(record["instance_type"]),
        region=str(record["region"]),
        availability_zone_id="",
        purchase=str(record["purchase"]),
        usd_per_hour=usd_per_hour_round(per_gpu * gpus),
        gpus=gpus,
        gpu_model=str(record["gpu_model"]),
        raw=json_safe(dict(record)),
        provider=str(record["provider"]),
        source=str(record["source"]),
        observed_at=str(record["as_of"]),
        confidence=str(record["confidence"]),
    )


def price_list_offers(records: Iterable[Mapping[str, Any]]) -> list[OfferRecord]:
    offers = [price_list_offer(r) for r in records]
    keys = [o.key for o in offers]
    if len(set(keys)) != len(keys):
        raise ValueError("price list: two records for the same (instance type, region, purchase)")
    return sorted(offers, key=lambda o: (o.provider, o.instance_type, o.region, o.purchase))
