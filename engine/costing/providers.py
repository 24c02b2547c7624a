"""Cloud providers: the names a plan shows for each provider id on a cloud row.

Why a table: a row's `provider` is a stable id other tools read (`aws`, `azure`, `gcp`, `lambda`, ...); people
read the provider's own name. One table keeps the comparison labels, the cost-over-time series and the explain
entries saying the same thing. An id not listed is shown as given (a new provider needs no code to be priced).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.result.costs import CloudRow

__all__ = [
    "AWS",
    "NAMED_INSTANCE_PROVIDERS",
    "PROVIDER_NAMES",
    "PURCHASE_NAMES",
    "detailed",
    "gpu_display_name",
    "gpu_short_name",
    "option_label",
    "option_name",
    "provider_name",
    "purchase_name",
    "rented_gpus",
    "rented_hardware",
    "row_gpus",
    "row_hardware",
    "row_label",
    "row_option",
    "seller_name",
    "system_display_name",
    "term_name",
]

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


# Providers whose instance type is the product name on the bill (p5.48xlarge, Standard_ND96isr_H100_v5,
# a3-highgpu-8g): a reader knows the hardware by it. Price-list rows of the other providers carry ids from an API or a
# web page ("gpu_8x_h100_sxm5", "hgx-h100-8gpu 3-year contract") that a buyer would not write: their hardware is
# named from the catalog GPU instead ("8 x H100 SXM5 80GB").
NAMED_INSTANCE_PROVIDERS = frozenset({"aws", "azure", "gcp"})
# A neocloud contract is a term of its own: "Neocloud 3-year contract", not "Neocloud contract ... 3-year reserved".
CONTRACT = "contract"


def gpu_short_name(gpu_name: str) -> str:
    """A catalog GPU name without its maker and its parenthesis ("NVIDIA H100 SXM5 80GB" -> "H100 SXM5 80GB",
    "NVIDIA B200 (HGX/DGX B200, 1,000 W)" -> "B200"): what a line of a quote calls the GPU."""
    short = re.sub(r"\s*\([^()]*\)", "", gpu_name).strip()
    return short.removeprefix("NVIDIA ").strip() or gpu_name


def rented_gpus(gpus_per_instance: int, gpu_name: str | None) -> str | None:
    """The GPUs in one rented instance in words ("8 x H100 SXM5 80GB"); None when the GPU is not in the catalog."""
    return f"{gpus_per_instance:,} x {gpu_short_name(gpu_name)}" if gpu_name else None


def rented_hardware(provider: str | None, instance_type: str, gpus_per_instance: int, gpu_name: str | None) -> str:
    """What one rented instance is, in the words a buyer uses: the instance type where it is the product name
    (`NAMED_INSTANCE_PROVIDERS`), else "<GPUs> x <catalog GPU>" ("8 x H100 SXM5 80GB")."""
    gpus = rented_gpus(gpus_per_instance, gpu_name)
    if (provider or AWS) in NAMED_INSTANCE_PROVIDERS or gpus is None:
        return instance_type
    return gpus


def _instance_gpus(provider: str | None, gpus: str | None) -> str | None:
    """The GPU words a label adds after a named instance type (p5.48xlarge says nothing of its hardware to a
    finance reader: "p5.48xlarge (8 x H100 SXM5 80GB; ...)"); None where the hardware already is those words."""
    return gpus if (provider or AWS) in NAMED_INSTANCE_PROVIDERS else None


def detailed(name: str, *details: str | None) -> str:
    """A name with its details in one parenthesis ("AWS spot, p5.48xlarge (8 x H100 SXM5 80GB; us-east-1)"),
    never two parentheses in a row; the details left out when none is given."""
    given = [d for d in details if d]
    return f"{name} ({'; '.join(given)})" if given else name


def term_name(provider: str | None, purchase: str) -> str:
    """The purchase option in words, a neocloud contract's term as a contract ("3-year contract")."""
    words = purchase_name(purchase)
    if provider == CONTRACT:
        return words.replace(" reserved", " contract") if words.endswith(" reserved") else f"{words} contract"
    return words


def seller_name(provider: str | None) -> str:
    """Who is renting: the provider's name ("Neocloud" for a contract, whose term says the rest)."""
    return "Neocloud" if provider == CONTRACT else provider_name(provider)


def option_name(provider: str | None, purchase: str, hardware: str) -> str:
    """A rented option's name without its size, as a finance user writes it: "AWS on-demand, p5.48xlarge",
    "Neocloud 3-year contract, 8 x H100 SXM5 80GB"; each term said once."""
    return f"{seller_name(provider)} {term_name(provider, purchase)}, {hardware}"


def option_label(
    provider: str | None, purchase: str, hardware: str, instances: int, region: str, gpus: str | None = None
) -> str:
    """A rented option as people name it: "AWS on-demand, p5.48xlarge (8 x H100 SXM5 80GB; 16 instances,
    us-east-1)"; a named instance type carries its GPUs (`gpus`), an option named by its GPUs does not repeat them."""
    count = f"{instances:,} instance{'s' if instances != 1 else ''}"
    return detailed(option_name(provider, purchase, hardware), _instance_gpus(provider, gpus), f"{count}, {region}")


def gpu_display_name(gpu_id: str) -> str | None:
    """The catalog's name for a GPU id (the packaged catalog: names only, no figure is read from it); None when
    the id is not in it."""
    from engine.catalog.hardware import load_catalog  # late: the catalog loads files, the names above need none

    gpu = load_catalog().gpus.get(gpu_id)
    return gpu.name if gpu is not None else None


def system_display_name(system_id: str) -> str:
    """The catalog's name for a system id ("aws-p5" -> "AWS EC2 p5.48xlarge (8 x H100)"); the id when unknown."""
    from engine.catalog.hardware import load_catalog  # late, as above

    system = load_catalog().systems.get(system_id)
    return system.name if system is not None else system_id


def row_hardware(row: CloudRow) -> str:
    """A cloud row's rented hardware in words (`rented_hardware`), its GPU named from the catalog."""
    return rented_hardware(row.provider, row.instance_type, row.gpus_per_instance, gpu_display_name(row.sized_on.gpu))


def row_gpus(row: CloudRow) -> str | None:
    """The GPUs of one of a cloud row's instances in words ("8 x H100 SXM5 80GB"), named from the catalog GPU."""
    return rented_gpus(row.gpus_per_instance, gpu_display_name(row.sized_on.gpu))


def row_option(row: CloudRow, *details: str | None) -> str:
    """A cloud row's option with its details: "AWS spot, p5.48xlarge (8 x H100 SXM5 80GB; us-east-1)",
    "Lambda on-demand, 8 x H100 SXM5 80GB (us-east)"."""
    name = option_name(row.provider, row.purchase, row_hardware(row))
    return detailed(name, _instance_gpus(row.provider, row_gpus(row)), *details)


def row_label(row: CloudRow) -> str:
    """A cloud row as the comparison names it: "Lambda on-demand, 8 x H100 SXM5 80GB (512 instances, us-east)",
    "AWS spot, p5.48xlarge (8 x H100 SXM5 80GB; 512 instances, us-east-1)"."""
    return option_label(row.provider, row.purchase, row_hardware(row), row.instances, row.region, row_gpus(row))
