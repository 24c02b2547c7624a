"""AWS Savings Plans rates for GPU instance types: the query, the parser and the offers.

Source: `savingsplans.describe_savings_plans_offering_rates` (global endpoint; AWS Savings Plans API reference),
one query per region for every type at once, filtered to Linux/UNIX shared tenancy on EC2. It has no paginator,
so `nextToken` is followed by hand. Each result is an hourly `rate` (USD, a string: kept as `Decimal`) for one
(plan type, payment option, duration) of one instance type. Rules, each stated once:

- duration 31,536,000 s (365 days) -> savings_plan_1y, 94,608,000 s -> savings_plan_3y;
- per (type, region, term) the lowest rate over plan types (EC2 Instance, Compute) and payment options is the
  offer (as for reserved terms: the cheapest commitment a plan could buy); every rate stays in `raw`;
- a Savings Plan commits an hourly spend for the whole term, so costing treats it like a reserved term.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .instances import instance_gpus
from .offers import SAVINGS_PLAN_1Y, SAVINGS_PLAN_3Y, OfferRecord, json_safe, usd_per_hour_round

__all__ = [
    "SAVINGS_PLAN_TYPES",
    "SavingsPlanRate",
    "savings_plan_offers",
    "savings_plan_rates",
    "savings_plan_rates_params",
]

SAVINGS_PLAN_TYPES = ("EC2Instance", "Compute")
SECONDS_TO_PURCHASE = {31_536_000: SAVINGS_PLAN_1Y, 94_608_000: SAVINGS_PLAN_3Y}
PAGE_SIZE = 1000


@dataclass(frozen=True)
class SavingsPlanRate:
    instance_type: str
    region: str
    plan_type: str
    payment_option: str
    duration_seconds: int
    usd_per_hour: Decimal
    offering_id: str


def savings_plan_rates_params(*, instance_types: Sequence[str], region: str) -> dict[str, Any]:
    """Arguments of one region's query (the fetcher adds `nextToken` page by page)."""
    return {
        "products": ["EC2"],
        "serviceCodes": ["AmazonEC2"],
        "savingsPlanTypes": list(SAVINGS_PLAN_TYPES),
        "filters": [
            {"name": "region", "values": [region]},
            {"name": "instanceType", "values": list(instance_types)},
            {"name": "productDescription", "values": ["Linux/UNIX"]},
            {"name": "tenancy", "values": ["shared"]},
        ],
        "maxResults": PAGE_SIZE,
    }


def savings_plan_rates(results: Iterable[Mapping[str, Any]], *, region: str) -> list[SavingsPlanRate]:
    """`searchResults` items -> rates; items for another region, unit or an unknown term are skipped."""
    rates = []
    for item in results:
        props = {p.get("name"): p.get("value") for p in item.get("properties", [])}
        offering = item.get("savingsPlanOffering", {})
        duration = int(offering.get("durationSeconds", 0))
        if props.get("region", region) != region or duration not in SECONDS_TO_PURCHASE:
            continue
        if item.get("unit", "Hrs") != "Hrs" or offering.get("currency", "USD") != "USD":
            continue
        rates.append(
            SavingsPlanRate(
                instance_type=str(props.get("instanceType", "")),
                region=region,
                plan_type=str(offering.get("planType", "")),
                payment_option=str(offering.get("paymentOption", "")),
                duration_seconds=duration,
                usd_per_hour=Decimal(str(item["rate"])),
                offering_id=str(offering.get("offeringId", "")),
            )
        )
    return rates


def savings_plan_offers(rates: Iterable[SavingsPlanRate]) -> list[OfferRecord]:
    """The lowest rate per (instance type, region, term) as an offer, with every rate in `raw`."""
    grouped: dict[tuple[str, str, str], list[SavingsPlanRate]] = defaultdict(list)
    for rate in rates:
        grouped[(rate.instance_type, rate.region, SECONDS_TO_PURCHASE[rate.duration_seconds])].append(rate)
    offers = []
    for (instance_type, region, purchase), group in sorted(grouped.items()):
        chosen = min(group, key=lambda r: (r.usd_per_hour, r.plan_type, r.payment_option))
        gpus = instance_gpus(instance_type)
        raw = {
            "selection": "lowest hourly rate over plan types and payment options",
            "chosen": {"planType": chosen.plan_type, "paymentOption": chosen.payment_option},
            "rates": [
                {"planType": r.plan_type, "paymentOption": r.payment_option, "rate": r.usd_per_hour}
                for r in sorted(group, key=lambda r: (r.plan_type, r.payment_option))
            ],
        }
        offers.append(
            OfferRecord(
                instance_type=instance_type,
                region=region,
                availability_zone_id="",
                purchase=purchase,
                usd_per_hour=usd_per_hour_round(chosen.usd_per_hour),
                gpus=gpus.gpus,
                gpu_model=gpus.gpu_model,
                raw=json_safe(raw),
            )
        )
    return offers
