"""Cloud providers: the names a plan shows for each provider id on a cloud row.

Why a table: a row's `provider` is a stable id other tools read (`aws`, `azure`, `gcp`, `lambda`, ...); people
read the provider's own name. One table keeps the comparison labels, the cost-over-time series and the explain
entries saying the same thing. An id not listed is shown as given (a new provider needs no code to be priced).
"""

from __future__ import annotations

__all__ = ["AWS", "PROVIDER_NAMES", "provider_name"]

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
