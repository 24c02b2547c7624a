"""Storage stage: capacity and bandwidth the cluster needs, sized to whole appliances from the catalog.

Bandwidth follows the SuperPOD guidance per scalable unit (good / better / best, facility.md section 8), with
write planned at half of read (GB200 RA), raised when a synchronous checkpoint would otherwise stall training
longer than allowed. Capacity holds the dataset plus the retained checkpoints, with headroom.
appliances = max(ceil(read / read per appliance), ceil(write / write per appliance), ceil(TB / TB per appliance)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.assumptions.registry import Assumptions
from engine.catalog.parts import Part, PartsCatalog

__all__ = ["STORAGE_TIERS_READ_GBPS_PER_SU", "StorageResult", "size_storage"]

# RA tiers, aggregate read GB/s per scalable unit (H100 RA Table 6; GB200 RA Table 5.2 uses 40 / 125 per SU).
STORAGE_TIERS_READ_GBPS_PER_SU = {"good": 15.0, "better": 40.0, "best": 125.0}
TB = 1e12


@dataclass(frozen=True)
class StorageResult:
    """What the file system must hold and deliver, and the appliances that do it."""

    capacity_tb: float
    read_gbps: float
    write_gbps: float
    checkpoint_tb: float
    dataset_tb: float
    tier: str
    read_gbps_per_su: float
    checkpoint_write_gbps: float
    appliance: str
    appliances: int
    binding: str

    def as_dict(self) -> dict[str, object]:
        return {
            "capacity_tb": round(self.capacity_tb, 3),
            "read_gbps": round(self.read_gbps, 3),
            "write_gbps": round(self.write_gbps, 3),
            "checkpoint_tb": round(self.checkpoint_tb, 3),
            "dataset_tb": round(self.dataset_tb, 3),
            "tier": self.tier,
            "read_gbps_per_su": self.read_gbps_per_su,
            "checkpoint_write_gbps": round(self.checkpoint_write_gbps, 3),
            "appliance": self.appliance,
            "appliances": self.appliances,
            "binding": self.binding,
        }


def _tier_name(read_per_su: float) -> str:
    for name, value in STORAGE_TIERS_READ_GBPS_PER_SU.items():
        if math.isclose(value, read_per_su):
            return name
    return "custom"


def size_storage(
    scalable_units: int,
    params: float,
    training_tokens: float | None,
    weight_bytes_per_param: float,
    parts: PartsCatalog,
    a: Assumptions,
) -> tuple[StorageResult, Part]:
    """Training: checkpoints are full optimizer state; inference: the served weights (one copy per version)."""
    read_per_su = a["storage_read_gbps_per_su"]
    read = read_per_su * scalable_units
    write = read * a["storage_write_to_read_ratio"]
    retained = a["checkpoints_retained"]
    if training_tokens is not None:
        checkpoint_tb = params * a["checkpoint_bytes_per_param"] / TB
        dataset_tb = training_tokens * a["dataset_bytes_per_token"] / TB
        ckpt_write = checkpoint_tb * TB / 1e9 / a["checkpoint_stall_s"]
    else:
        checkpoint_tb = params * weight_bytes_per_param / TB
        dataset_tb = 0.0
        ckpt_write = 0.0
    write = max(write, ckpt_write)
    capacity = (dataset_tb + retained * checkpoint_tb) * (1.0 + a["storage_headroom_fraction"])
    appliance = parts.of_kind("storage")[0]
    needs = {
        "read": math.ceil(read / appliance.num("read_gbyte_s") - 1e-9),
        "write": math.ceil(write / appliance.num("write_gbyte_s") - 1e-9),
        "capacity": math.ceil(capacity / appliance.num("usable_tb") - 1e-9),
    }
    binding = max(needs, key=lambda k: (needs[k], k))
    units = max(1, needs[binding])
    result = StorageResult(
        capacity_tb=capacity,
        read_gbps=read,
        write_gbps=write,
        checkpoint_tb=checkpoint_tb,
        dataset_tb=dataset_tb,
        tier=_tier_name(read_per_su),
        read_gbps_per_su=read_per_su,
        checkpoint_write_gbps=ckpt_write,
        appliance=appliance.id,
        appliances=units,
        binding=binding,
    )
    return result, appliance
