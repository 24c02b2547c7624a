"""The storage and in-band management fabrics ("edge" fabrics: systems on one side, storage appliances or
management servers on the other), separate or converged into one Ethernet fabric; and their link groups.

NVIDIA DGX SuperPOD reference architectures: 8-GPU DGX designs build a storage fabric (node side about 4:3,
storage side non-blocking) and an in-band Ethernet fabric; GB200/GB300 NVL72 designs converge both on one
Ethernet fabric (node side 5:3) with in-band traffic in VXLAN segments. Sized to the ports: one switch, or an
Ethernet MLAG pair for dual-homed systems (the DGX BasePOD in-band pair), while the ports fit; leaves and spines
only beyond that. An NFS server (a storage part attached "inband") rides the in-band fabric, so no storage fabric
is built for it. Their link groups (lengths, media) are in `edge_links.py`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.assumptions.registry import Assumptions
from engine.catalog.parts import Part, PartsCatalog, SystemPhysical
from engine.physical.clos import Clos, LeafType, clos
from engine.physical.fabric.ports import leaf_down_ports, switch_radix, switch_tiers
from engine.physical.fabric.types import Fabric, SwitchTier, empty_fabric

__all__ = ["PEER_LINK_PORTS", "EdgeDevices", "edge_fabric", "north_south_fabrics", "storage_on_inband"]


@dataclass(frozen=True)
class EdgeDevices:
    """What sits on the far side of the edge fabrics: storage appliances and management servers."""

    storage_part: Part | None
    storage_units: int
    mgmt: Part
    mgmt_servers: int

    @property
    def storage_ports(self) -> int:
        return self.storage_units * int(self.storage_part.num("fabric_ports")) if self.storage_part else 0

    @property
    def mgmt_links(self) -> int:
        return self.mgmt_servers * int(self.mgmt.num("inband_ports"))


# Ports each switch of an Ethernet MLAG pair gives to the peer link (the DGX BasePOD deployment guide's in-band
# SN4600 pair bonds two ports, swp57-58, as its peerlink).
PEER_LINK_PORTS = 2


def _one_tier(
    name: str, switch: Part, link_gbps: float, radix: int, node_ports: int, target_ports: int, dual_homed: bool
) -> Fabric | None:
    """One switch, or an MLAG pair when each system's two Ethernet ports go to two switches; None when they
    do not fit (then leaves and spines)."""
    ethernet = switch.text("technology") == "ethernet"
    label = switch.id.upper()
    if dual_homed and ethernet:
        per_switch = math.ceil(node_ports / 2) + math.ceil(target_ports / 2) + PEER_LINK_PORTS
        if per_switch > radix:
            return None
        count = 2
        reason = (
            f"One tier: an MLAG pair of {label} switches takes all {node_ports} system ports and {target_ports} "
            f"storage and server ports ({per_switch} of {radix} ports each, with the peer link), each system's "
            "ports split over the two switches so one can fail; no spine tier is needed."
        )
    elif node_ports + target_ports <= radix:
        count = 1
        reason = (
            f"One tier: one {label} takes all {node_ports} system ports and {target_ports} storage and server "
            f"ports ({node_ports + target_ports} of {radix}); no spine tier is needed."
        )
    else:
        return None
    return Fabric(
        name,
        switch.text("technology"),
        switch.id,
        link_gbps,
        radix,
        1,
        1,
        count,
        0,
        0,
        node_ports + target_ports,
        0,
        0,
        switches=(SwitchTier(name, "leaf", switch.id, count, "central"),),
        notes=(f"one tier: {count} switch(es), radix {radix} at {link_gbps:g}G.",),
        reason=reason,
    )


def edge_fabric(
    name: str,
    switch: Part,
    link_gbps: float,
    node_ports: int,
    node_ratio: float,
    target_ports: int,
    dual_homed: bool = True,
) -> Fabric:
    """One switch (or an MLAG pair) when the ports fit; else two leaf kinds, node-facing leaves at `node_ratio`
    and target-facing (storage) leaves at 1:1, under spines (a core tier only when two tiers cannot reach)."""
    radix = switch_radix(switch, link_gbps)
    small = _one_tier(name, switch, link_gbps, radix, node_ports, target_ports, dual_homed)
    if small is not None:
        return small
    node_down = leaf_down_ports(radix, node_ratio)
    target_down = radix // 2
    node_leaves = math.ceil(node_ports / node_down) if node_ports else 0
    target_leaves = math.ceil(target_ports / target_down) if target_ports else 0
    # Bonded/dual-homed ports go to a leaf pair, so node leaves come in pairs.
    node_leaves += node_leaves % 2
    node_used = math.ceil(node_ports / node_leaves) if node_leaves else 0
    target_used = math.ceil(target_ports / target_leaves) if target_leaves else 0
    types = [
        LeafType(node_leaves, math.ceil(node_used / node_ratio - 1e-9), radix - node_used),
        LeafType(target_leaves, target_used, radix - target_used),
    ]
    tree = _edge_clos(types, radix)
    if tree is None:
        note = f"no design of four tiers of {radix}-port {switch.id.upper()} switches takes {node_ports:,} ports"
        return empty_fabric(name, note, f"Not built: {note}.")
    return Fabric(
        name=name,
        technology=switch.text("technology"),
        switch=switch.id,
        link_gbps=link_gbps,
        radix=radix,
        planes=1,
        tiers=tree.tiers,
        leaf=tree.leaves,
        spine=tree.spines,
        core=tree.cores,
        node_links=node_ports + target_ports,
        leaf_spine_links=tree.leaf_spine_links,
        spine_core_links=tree.spine_core_links,
        switches=switch_tiers(name, switch.id, tree, 1),
        super_core=tree.super_cores,
        core_super_links=tree.core_super_links,
        notes=(
            f"node leaves {node_leaves} ({node_used} ports used, {node_ratio:.3g}:1), target leaves "
            f"{target_leaves} ({target_used} ports, 1:1), {tree.tiers} tier(s), radix {radix} at {link_gbps:g}G.",
        ),
        reason=_edge_reason(tree, switch, radix, dual_homed, (node_ports, target_ports), types, node_ratio),
    )


def _edge_clos(types: list[LeafType], radix: int) -> Clos | None:
    """Two or three tiers over the node and target leaves; when that cannot reach, k-ary pods of radix/2 leaves
    each (every leaf with the widest leaf's uplinks), a fourth tier past about k^3/4 ports; None beyond four."""
    tree = clos(1, types, 1, radix, radix, allow_two_tier=True)
    if tree is not None:
        return tree
    widest = max(types, key=lambda t: t.uplinks)
    leaves = sum(t.count for t in types)
    return clos(
        leaves,
        [LeafType(1, widest.uplinks, widest.max_uplinks)],
        1,
        radix,
        radix,
        first_pod_units=radix // 2,
        allow_two_tier=False,
        max_tiers=4,
    )


def _edge_reason(
    tree: Clos,
    switch: Part,
    radix: int,
    dual_homed: bool,
    ports: tuple[int, int],
    types: list[LeafType],
    node_ratio: float,
) -> str:
    """Why this many tiers, in a sentence: the (node, target) ports that outgrow one switch (or an MLAG pair) and
    the leaves (node leaves at `node_ratio`, target leaves at 1:1) sharing the spines and any cores."""
    (node_ports, target_ports), (node, target) = ports, types
    tiers = {
        2: "Two tiers",
        3: "Three tiers (leaves cannot reach enough spines for two)",
        4: "Four tiers (three tiers of this radix reach about radix^3/4 ports, too few)",
    }[tree.tiers]
    cores = f" and {tree.cores:,} core switch(es)" if tree.cores else ""
    cores += f" and {tree.super_cores:,} super-core switch(es)" if tree.super_cores else ""
    one = "an MLAG pair of" if switch.text("technology") == "ethernet" and dual_homed else "one"
    return (
        f"{tiers}: {node_ports} system ports and {target_ports} storage and server ports are more than {one} "
        f"{radix}-port {switch.id.upper()} switch(es) can take, so {node.count} system leaf switch(es) "
        f"({node_ratio:.3g}:1) and {target.count} storage and server leaf switch(es) (1:1) share {tree.spines} "
        f"spine(s){cores}."
    )


def storage_on_inband(phys: SystemPhysical, devices: EdgeDevices) -> bool:
    """An NFS server rides the in-band Ethernet network; a parallel file system gets its own storage fabric
    (converged designs carry both on one fabric anyway)."""
    part = devices.storage_part
    return phys.north_south == "separate" and part is not None and part.text("attach") == "inband"


def north_south_fabrics(
    phys: SystemPhysical, systems: int, devices: EdgeDevices, parts: PartsCatalog, a: Assumptions
) -> tuple[Fabric, Fabric]:
    """(storage, in-band): one converged Ethernet fabric (in-band rides it), two separate fabrics, or only the
    in-band fabric when an NFS server serves the storage over it."""
    switch = parts[phys.storage_switch]
    if phys.north_south == "converged":
        storage = edge_fabric(
            "storage",
            switch,
            phys.storage_gbps,
            systems * (phys.storage_ports + phys.inband_ports),
            a["converged_fabric_node_oversubscription"],
            devices.storage_ports + devices.mgmt_links,
        )
        note = "Converged: in-band management rides the storage Ethernet fabric (VXLAN segments), as in the GB200 RA."
        reason = (
            "No separate in-band switches: in-band management rides the storage Ethernet network, as NVIDIA's "
            "GB200 SuperPOD design converges them."
        )
        return storage, empty_fabric("inband", note, reason)
    nfs = storage_on_inband(phys, devices)
    inband = edge_fabric(
        "inband",
        parts[phys.inband_switch],
        phys.inband_gbps,
        systems * phys.inband_ports,
        a["inband_fabric_oversubscription"],
        devices.mgmt_links + (devices.storage_ports if nfs else 0),
    )
    if nfs:
        note = "No storage fabric: the NFS server is reached over the in-band Ethernet network."
        reason = (
            "No storage switches: the NFS server and the systems share the in-band Ethernet network, as NVIDIA's "
            "DGX BasePOD runs storage and management on one Ethernet fabric."
        )
        return empty_fabric("storage", note, reason), inband
    storage = edge_fabric(
        "storage",
        switch,
        phys.storage_gbps,
        systems * phys.storage_ports,
        a["storage_fabric_node_oversubscription"],
        devices.storage_ports,
    )
    return storage, inband
