"""Storage stage: capacity and bandwidth the cluster needs, sized to whole appliances from the catalog.

Bandwidth follows the SuperPOD guidance per scalable unit (good / better / best: NVIDIA DGX SuperPOD RA, DGX H100,
Table 6), with write planned at half of read (GB200 RA), raised when a synchronous checkpoint would otherwise stall
training longer than allowed. Capacity holds the dataset plus the retained checkpoints, with headroom.
appliances = max(ceil(read / read per appliance), ceil(write / write per appliance), ceil(TB / TB per appliance)).

Below one scalable unit the per-SU guidance is shared by the systems present (read = per-SU read x systems / SU
systems, at least the single-node figure of the same table), and one NFS server on the in-band network serves the
cluster when it meets read, write and capacity (as NVIDIA's DGX BasePOD runs storage on its Ethernet fabric);
otherwise the parallel file system's appliances, as many as the need.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.assumptions.registry import Assumptions
from engine.catalog.parts import Part, PartsCatalog
from engine.physical.storage_need import StorageNeed, StorageWorkload, storage_need

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
    reason: str = ""
    need: StorageNeed | None = None

    def _need_dict(self) -> dict[str, object]:
        n = self.need
        if n is None:
            return {}
        return {
            "read_guidance_gbps": round(n.read_guidance_gbps, 3),
            "loader_read_gbps": round(n.loader_read_gbps, 3),
            "read_set_by": n.read_set_by,
            "write_guidance_gbps": round(n.write_guidance_gbps, 3),
            "write_set_by": n.write_set_by,
            "checkpointing": n.checkpointing,
            "checkpoint_write_budget_s": round(n.checkpoint_write_budget_s, 3),
            "checkpoints_retained": n.checkpoints_retained,
            "dataset_raw_tb": round(n.dataset_raw_tb, 3),
            "dataset_tokenised_tb": round(n.dataset_tokenised_tb, 3),
        }

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
            "reason": self.reason,
            **self._need_dict(),
        }


def _tier_name(read_per_su: float) -> str:
    for name, value in STORAGE_TIERS_READ_GBPS_PER_SU.items():
        if math.isclose(value, read_per_su):
            return name
    return "custom"


def _below_nfs_limit(systems: int | None, su_systems: int | None, a: Assumptions) -> bool:
    """Whether the cluster is small enough for one NFS server (a share of one scalable unit)."""
    if systems is None or su_systems is None:
        return False
    return systems < su_systems * a["nfs_max_systems_fraction_of_su"]


def _units(read: float, write: float, capacity: float, part: Part) -> dict[str, int]:
    return {
        "read": math.ceil(read / part.num("read_gbyte_s") - 1e-9),
        "write": math.ceil(write / part.num("write_gbyte_s") - 1e-9),
        "capacity": math.ceil(capacity / part.num("usable_tb") - 1e-9),
    }


def _tightest(read: float, write: float, capacity: float, part: Part) -> str:
    """Which need comes closest to one appliance's figure (what would outgrow it first)."""
    shares = {
        "read": read / part.num("read_gbyte_s"),
        "write": write / part.num("write_gbyte_s"),
        "capacity": capacity / part.num("usable_tb"),
    }
    return max(shares, key=lambda k: (shares[k], k))


def _need_text(need: StorageNeed) -> str:
    """The three needs in words, each with what set it."""
    read = f"{need.read_gbps:.3g} GB/s read" + (" (the data loader)" if need.read_set_by == "data loader" else "")
    write = f"{need.write_gbps:.3g} GB/s write"
    if need.write_set_by == "checkpoint":
        how = "synchronous, in the allowed stall" if need.checkpointing == "synchronous" else "in the background"
        write += f" (a {need.checkpoint_tb:.3g} TB checkpoint in {need.checkpoint_write_budget_s:.3g} s, {how})"
    cap = need.capacity_tb
    tb = f"{cap:.1f}" if cap < 10 else f"{cap:,.0f}"
    return f"{read}, {write} and {tb} TB"


def size_storage(
    scalable_units: int,
    params: float,
    training_tokens: float | None,
    weight_bytes_per_param: float,
    parts: PartsCatalog,
    a: Assumptions,
    *,
    systems: int | None = None,
    su_systems: int | None = None,
    work: StorageWorkload | None = None,
) -> tuple[StorageResult, Part]:
    """Training: checkpoints are full optimizer state; inference: the served weights (one copy per version).
    With `systems` and `su_systems` given, a cluster below one SU gets its share of the SU's bandwidth and an NFS
    server when one serves it. `work` carries the checkpointing mode, interval, tokens/s and vocabulary
    (storage_need.py); without it checkpoints are synchronous and the loader is not counted."""
    read_per_su = a["storage_read_gbps_per_su"]
    small = systems is not None and su_systems is not None and systems < su_systems
    if small:
        guidance = max(a["storage_single_node_read_gbps"], read_per_su * systems / su_systems)
    else:
        guidance = read_per_su * scalable_units
    work = work if work is not None else StorageWorkload(training_tokens=training_tokens)
    sized = storage_need(guidance, params, weight_bytes_per_param, work, a)
    read, write, capacity = sized.read_gbps, sized.write_gbps, sized.capacity_tb
    checkpoint_tb, dataset_tb, ckpt_write = sized.checkpoint_tb, sized.dataset_tb, sized.checkpoint_write_gbps
    need = _need_text(sized)
    pfs = next(p for p in parts.of_kind("storage") if p.text("attach") != "inband")
    nfs = next((p for p in parts.of_kind("storage") if p.text("attach") == "inband"), None)
    nfs_ok = small and nfs is not None and _below_nfs_limit(systems, su_systems, a)
    if nfs_ok and nfs is not None and max(_units(read, write, capacity, nfs).values()) <= 1:
        appliance, units = nfs, 1
        binding = _tightest(read, write, capacity, nfs)
        reason = (
            f"One NFS server on the in-band network: below one scalable unit the cluster needs {need}, within one "
            f"server's {nfs.num('read_gbyte_s'):g} GB/s read, {nfs.num('write_gbyte_s'):g} GB/s write and "
            f"{nfs.num('usable_tb'):g} TB, so no parallel file system is needed."
        )
    else:
        appliance = pfs
        needs = _units(read, write, capacity, pfs)
        binding = max(needs, key=lambda k: (needs[k], k))
        units = max(1, needs[binding])
        if nfs_ok:
            lead = f"Parallel file system: one NFS server cannot give the {need} the cluster needs"
        elif small:
            lead = f"Parallel file system (this plan's assumptions rule out an NFS server): the cluster needs {need}"
        else:
            lead = (
                f"Parallel file system, as NVIDIA's DGX SuperPOD designs ({read_per_su:g} GB/s read per scalable "
                f"unit): the cluster needs {need}"
            )
        reason = f"{lead}; {units} {pfs.part_number} appliance(s), set by {binding}."
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
        reason=reason,
        need=sized,
    )
    return result, appliance
