"""Curated facts about the GPU instance types we price, kept in code because the APIs get them wrong.

Public catalog builders (SkyPilot's AWS fetcher; ec2instances.info issues 705, 751, 776; aws-cli issue 8970)
list known errors in `describe_instance_types` (p4de named "A100" with no size,
p5en once "NVIDIA", g6e with 0 GB); the Price List only carries a GPU count. So the GPU model of each type
comes from this versioned table, written with the catalog's GPU ids (engine/data/catalog/gpus.json) where the
catalog has the part, so costing can join a cloud offer to on-prem hardware without string matching.

Since specs are fetched (`pricing.aws.specs`: describe_instance_types + a versioned override table + catalog
mapping, stored per snapshot as `CloudInstanceType`), `INSTANCE_GPUS` is the fallback: offers are built with it,
then take the snapshot's stored spec where there is one (services and selectors). A test checks that the
recorded API data plus overrides agree with this table for every type listed here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CAPACITY_BLOCK_TYPES",
    "DEFAULT_INSTANCE_TYPES",
    "DEFAULT_REGIONS",
    "INSTANCE_GPUS",
    "NEWER_INSTANCE_GPUS",
    "REGION_LOCATIONS",
    "InstanceGpus",
    "instance_gpus",
]


@dataclass(frozen=True)
class InstanceGpus:
    gpus: int
    gpu_model: str  # catalog GPU id when the catalog has the part, else a descriptive id


# GPUs per instance type, as AWS documents them (checked 2026-11-22).
INSTANCE_GPUS: dict[str, InstanceGpus] = {
    "p4d.24xlarge": InstanceGpus(8, "a100-40gb-sxm"),
    "p4de.24xlarge": InstanceGpus(8, "a100-80gb-sxm"),
    "p5.48xlarge": InstanceGpus(8, "h100-sxm"),
    "p5.4xlarge": InstanceGpus(1, "h100-sxm"),
    "p5e.48xlarge": InstanceGpus(8, "h200-sxm"),
    "p5en.48xlarge": InstanceGpus(8, "h200-sxm"),
    "p6-b200.48xlarge": InstanceGpus(8, "b200-hgx"),
    "g6e.48xlarge": InstanceGpus(8, "l40s"),
    "g6e.12xlarge": InstanceGpus(4, "l40s"),
    "g6e.xlarge": InstanceGpus(1, "l40s"),
}

# Newer types the recorded describe_instance_types answer does not cover (so the spec test cannot check them
# against it); a live refresh's own specs supersede them. p6-b300: 8 B300 GPUs (AWS "Amazon EC2 P6-B300
# instances" page). UltraServers: one NVLink domain rented as one unit (AWS "Amazon EC2 P6e UltraServers" page):
# 36 or 72 GB200 / GB300 GPUs, priced per UltraServer-hour.
NEWER_INSTANCE_GPUS: dict[str, InstanceGpus] = {
    "p6-b300.48xlarge": InstanceGpus(8, "b300-hgx"),
    "u-p6e-gb200x36": InstanceGpus(36, "b200-gb200"),
    "u-p6e-gb200x72": InstanceGpus(72, "b200-gb200"),
    "u-p6e-gb300x72": InstanceGpus(72, "b300-gb300"),
}

# Types the Capacity Block API sells (AWS user guide 'Capacity Blocks for ML'); asking for others is a wasted call.
CAPACITY_BLOCK_TYPES = frozenset(
    {
        "p4d.24xlarge",
        "p5.48xlarge",
        "p5e.48xlarge",
        "p5en.48xlarge",
        "p6-b200.48xlarge",
        "p6-b300.48xlarge",
        "u-p6e-gb200x36",
        "u-p6e-gb200x72",
        "trn1.32xlarge",
    }
)

DEFAULT_REGIONS = ("us-east-1", "us-west-2")
# p5e is sold only as Capacity Blocks (AWS user guide 'Capacity Blocks for ML'): its Price List query answers
# nothing, its blocks are the price. The P6e UltraServers are also CB-only but are offered by UltraServer type
# (`UltraserverType`), a query shape the fetcher does not make yet.
DEFAULT_INSTANCE_TYPES = (
    "p4d.24xlarge",
    "p4de.24xlarge",
    "p5.48xlarge",
    "p5e.48xlarge",
    "p5en.48xlarge",
    "p6-b200.48xlarge",
    "g6e.48xlarge",
)

# The Price List's `location` attribute is the filter every public catalog builder uses (SkyPilot,
# ec2instances.info and infracost); newer data also has `regionCode`, which the fetcher falls back to for regions
# not listed here.
REGION_LOCATIONS: dict[str, str] = {
    "us-east-1": "US East (N. Virginia)",
    "us-east-2": "US East (Ohio)",
    "us-west-1": "US West (N. California)",
    "us-west-2": "US West (Oregon)",
    "ca-central-1": "Canada (Central)",
    "eu-west-1": "EU (Ireland)",
    "eu-west-2": "EU (London)",
    "eu-central-1": "EU (Frankfurt)",
    "eu-north-1": "EU (Stockholm)",
    "ap-northeast-1": "Asia Pacific (Tokyo)",
    "ap-southeast-2": "Asia Pacific (Sydney)",
    "ap-south-1": "Asia Pacific (Mumbai)",
    "sa-east-1": "South America (Sao Paulo)",
}


def instance_gpus(instance_type: str, *, gpu_attribute: str | None = None) -> InstanceGpus:
    """GPU count and model for a type: the curated table first, else the Price List's `gpu` count, else 0."""
    known = INSTANCE_GPUS.get(instance_type) or NEWER_INSTANCE_GPUS.get(instance_type)
    if known is not None:
        return known
    try:
        count = int(gpu_attribute or 0)
    except ValueError:
        count = 0
    return InstanceGpus(count, "")
