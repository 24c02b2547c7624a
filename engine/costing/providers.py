"""Cloud providers: the names a plan shows for each provider id on a cloud row.

Why a table: a row's `provider` is a stable id other tools read (`aws`, `azure`, `gcp`, `lambda`, ...); people
read the provider's own name. One table keeps the comparison labels, the cost-over-time series and the explain
entries saying the same thing. An id not listed is shown as given (a new provider needs no code to be priced).
"""

from __future__ import annotations

__all__ = ["AWS", "PROVIDER_NAMES", "PURCHASE_NAMES", "option_label", "option_name", "provider_name", "purchase_name"]

AWS = "aws"

PROVIDER_NAMES: dict[str, str] = {
    "aws": "AWS",
    "azure": "Azure",
    "gcp": "Google Cloud",
    "lambda": "Lambda",
    "coreweave": "CoreWeave",
    "nebius": "Nebius",
    "runpod": "RunPod",
    "crusoe": "Crusoe",
    "oci": "OCI",
    "contract": "Neocloud contract",
}


def provider_name(provider: str | None) -> str:
    """The provider's own name for a provider id (the id itself when unknown; AWS for rows stored before rows
    named their provider, when AWS was the only one)."""
    provider = provider or AWS
    return PROVIDER_NAMES.get(provider, provider)


# A cloud row's purchase id (stable, read by tools) -> the words a reader knows it by.
PURCHASE_NAMES: dict[str, str] = {
    "on_demand": "on-demand",
    "spot": "spot",
    "reserved_1y": "1-year reserved",
    "reserved_3y": "3-year reserved",
    "savings_plan_1y": "1-year Savings Plan",
    "savings_plan_3y": "3-year Savings Plan",
    "capacity_block": "Capacity Block",
}


def purchase_name(purchase: str | None) -> str:
    """A purchase id in words (`on_demand` -> on-demand); an id not listed with its underscores as spaces."""
    purchase = purchase or ""
    return PURCHASE_NAMES.get(purchase, purchase.replace("_", " "))


def option_name(provider: str | None, instance_type: str, purchase: str) -> str:
    """A rented option's name without its size: "AWS p5.48xlarge on-demand", each term said once."""
    words = purchase_name(purchase)
    if "contract" in instance_type:  # a contract's name says its term ("3-year contract"): no second term
        words = ""
    elif words.endswith(" reserved"):  # "1cc_h100_sxm5 reserved" + "1-year reserved": say "reserved" once
        instance_type = instance_type.removesuffix(" reserved")
    return " ".join(x for x in (provider_name(provider), instance_type, words) if x)


def option_label(provider: str | None, instance_type: str, purchase: str, instances: int, region: str) -> str:
    """A rented option as people name it: "AWS p5.48xlarge on-demand (16 instances, us-east-1)"."""
    count = f"{instances:,} instance{'s' if instances != 1 else ''}"
    return f"{option_name(provider, instance_type, purchase)} ({count}, {region})"
