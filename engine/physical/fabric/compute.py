"""The compute (scale-out) fabric: rail-optimised leaves per scalable unit, spines and cores by the Clos rules,
UFM links, one identical fabric per plane; and its link groups with lengths.

NVIDIA DGX SuperPOD reference architectures: NIC i of every system goes to the rail-i leaf of its SU; a leaf
serves whole systems only; the full SU fabric is built even when the SU is partly populated; UFM links take
spare leaf ports or, where leaves have none, the slot of one system.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import System
from engine.catalog.parts import Part, PartsCatalog, SystemPhysical
from engine.physical.clos import Clos, LeafType, clos
from engine.physical.fabric.planes import beyond_four_tiers, plane_options
from engine.physical.fabric.ports import leaf_down_ports, switch_radix, switch_tiers
from engine.physical.fabric.reasons import no_fabric_reason, oversubscribed_reason, reference_reason
from engine.physical.fabric.small import small_compute_fabric
from engine.physical.fabric.types import FABRIC_SWITCH, Fabric, Geometry, LinkGroup, empty_fabric

__all__ = ["ComputeSizing", "compute_fabric", "compute_link_groups"]


@dataclass(frozen=True)
class ComputeSizing:
    """The compute fabric plus what the other fabrics and the facility need from its sizing."""

    fabric: Fabric
    scalable_units: int
    ufm_links: int
    displaced_systems: int
    su_systems: int
    problems: list[str] = field(default_factory=list)
    design: str = "reference"  # "none", "below_su" or "reference" (whole SUs of the published design)


@dataclass(frozen=True)
class _ComputeShape:
    su_systems: int
    systems_per_leaf: int
    leaves_per_rail_per_su: int
    down_used: int
    uplinks: int
    spare_ports_per_su: int


def _compute_shape(
    system: System, phys: SystemPhysical, radix: int, ratio: float
) -> tuple[_ComputeShape, int] | tuple[None, int]:
    """The SU from the switch: a non-blocking leaf has radix/2 ports down at the link speed, and with rails
    shared by the spines one leaf per rail takes a whole SU, so systems per SU = (radix / 2) / NICs per rail.
    NVL72 spine-leaf groups (per-rail spines) are sized to the rack instead: a leaf takes whole racks' trays
    and the SU is the reference architecture's rack count. Oversubscription only trims a leaf's uplinks."""
    nics_per_rail = system.compute_nic_count // phys.compute_rails  # per plane as well: every NIC splits over planes
    down_max = leaf_down_ports(radix, ratio)
    if phys.spine_groups == "shared":
        per_leaf = leaf_down_ports(radix, 1.0) // nics_per_rail
        su_systems = per_leaf
    else:
        per_leaf = min(system.su_systems, down_max // nics_per_rail)
        su_systems = system.su_systems
    if per_leaf < 1:
        return None, nics_per_rail
    leaves_per_rail = math.ceil(su_systems / per_leaf)
    down_used = per_leaf * nics_per_rail
    spare = (leaves_per_rail * down_max - su_systems * nics_per_rail) * phys.compute_rails
    uplinks = math.ceil(down_used / ratio - 1e-9)
    return _ComputeShape(su_systems, per_leaf, leaves_per_rail, down_used, uplinks, spare), nics_per_rail


def _ufm(
    switch: Part, shape: _ComputeShape, phys: SystemPhysical, nics_per_rail: int, a: Assumptions
) -> tuple[int, int]:
    """(UFM links, systems displaced): UFM attaches to InfiniBand leaves only, in spare ports or a system's slot."""
    ufm_links = a["ufm_links"] if switch.text("technology") == "infiniband" else 0
    displaced = 0
    if ufm_links > shape.spare_ports_per_su:
        displaced = math.ceil((ufm_links - shape.spare_ports_per_su) / (phys.compute_rails * nics_per_rail))
    return ufm_links, displaced


def _notes(
    system: System,
    phys: SystemPhysical,
    sus: int,
    shape: _ComputeShape,
    tree: Clos,
    link_gbps: float,
    radix: int,
    planes: int,
) -> list[str]:
    return [
        f"{sus} SU x {shape.su_systems} {system.name}; {shape.systems_per_leaf} systems per leaf per rail, "
        f"{shape.leaves_per_rail_per_su} leaf per rail per SU, {phys.compute_rails} rails, "
        f"{planes} plane(s).",
        f"{tree.tiers}-tier: each leaf {shape.down_used} down / {tree.leaf_uplinks[0]} up at {link_gbps:g}G "
        f"(radix {radix}).",
    ]


def compute_fabric(
    system: System,
    phys: SystemPhysical,
    systems: int,
    fabric_id: str,
    parts: PartsCatalog,
    a: Assumptions,
    needed: bool,
    look_for_alternatives: bool = True,
) -> ComputeSizing:
    """The compute fabric of `systems` systems on the `fabric_id` technology, the first design that connects it:
    the reference plane split in at most three tiers, then more planes (a NIC split further, each plane of higher
    radix), then a fourth tier (reference planes first); the spines oversubscribed toward the cores only when the
    request asks (compute_upper_oversubscription). None connects it: an empty fabric with the plain reason (which
    names the catalog fabrics that would connect the cluster)."""
    sus_plain = math.ceil(systems / system.su_systems)
    if not needed:
        note = (
            "No scale-out compute fabric: each replica (or the whole job) fits inside one NVLink domain, so "
            "systems talk only over the storage and in-band networks."
        )
        empty = empty_fabric("compute", note, no_fabric_reason(system, systems))
        return ComputeSizing(empty, sus_plain, 0, 0, system.su_systems, design="none")
    switch = parts[FABRIC_SWITCH[fabric_id]]
    options = plane_options(system, phys, fabric_id, switch)
    for max_tiers in (3, 4):
        for link_gbps, planes in options:
            sized = _planes_fabric(system, phys, systems, fabric_id, switch, (link_gbps, planes), a, max_tiers)
            if sized is not None:
                return _named_design(sized, system, options, link_gbps, planes)
    alternatives = []
    if look_for_alternatives:
        alternatives = [
            other
            for other in FABRIC_SWITCH
            if other != fabric_id
            and compute_fabric(system, phys, systems, other, parts, a, needed, False).fabric.leaf > 0
        ]
    problem = beyond_four_tiers(system, phys, systems, switch, options, alternatives)
    return ComputeSizing(empty_fabric("compute", "beyond four tiers"), sus_plain, 0, 0, system.su_systems, [problem])


def _named_design(
    sized: ComputeSizing, system: System, options: list[tuple[float, int]], link_gbps: float, planes: int
) -> ComputeSizing:
    """Label the design that connected the cluster and, for more planes than the reference, say why."""
    fab = sized.fabric
    if sized.problems or not fab.leaf:
        return sized
    base_link, base_planes = options[0]
    if planes > base_planes:
        note = (
            f"Multi-plane: {base_planes} plane(s) at {base_link:g}G would need more than three tiers, so "
            f"each NIC's {system.compute_nic_gbps:g}G splits over {planes} planes of {link_gbps:g}G, each its "
            "own Clos of higher radix."
        )
        fab = replace(fab, notes=(*fab.notes, note), reason=f"Multi-plane design. {fab.reason}")
    design = "four-tier" if fab.tiers == 4 else "multi-plane" if planes > base_planes else "fat-tree"
    if fab.design == "oversubscribed":
        design = "oversubscribed"
    return replace(sized, fabric=replace(fab, design=design))


def _planes_fabric(
    system: System,
    phys: SystemPhysical,
    systems: int,
    fabric_id: str,
    switch: Part,
    plane: tuple[float, int],
    a: Assumptions,
    max_tiers: int = 3,
) -> ComputeSizing | None:
    """One identical Clos per plane at `plane` = (link Gb/s, planes); None when one plane needs more than
    `max_tiers` tiers. The Fabric record is written one field per line."""
    link_gbps, planes = plane
    upper = a["compute_upper_oversubscription"]
    radix = switch_radix(switch, link_gbps)
    shape, nics_per_rail = _compute_shape(system, phys, radix, a["compute_oversubscription"])
    if shape is None:
        problem = (
            f"fabric: a {switch.part_number} leaf ({radix} ports at {link_gbps:g}G) cannot take one {system.id}'s "
            f"{nics_per_rail} rail ports."
        )
        empty = empty_fabric("compute", "no leaf fits")
        return ComputeSizing(empty, math.ceil(systems / system.su_systems), 0, 0, system.su_systems, [problem])
    ufm_links, displaced = _ufm(switch, shape, phys, nics_per_rail, a)
    if systems + displaced < shape.su_systems:  # below one SU, even counting the UFM's slot: smallest design
        ratio = a["compute_oversubscription"]
        small = small_compute_fabric(system, phys, systems, fabric_id, switch, link_gbps, radix, planes, ratio)
        return None if small is None else ComputeSizing(small.fabric, 1, 0, 0, shape.su_systems, design="below_su")
    sus = math.ceil((systems + displaced) / shape.su_systems)
    rails_shared = phys.spine_groups == "shared"
    groups = 1 if rails_shared else phys.compute_rails
    tree = _su_clos(phys, sus, systems + displaced, shape, radix, (upper, max_tiers))
    if tree is None:
        return None
    notes = _notes(system, phys, sus, shape, tree, link_gbps, radix, planes)
    oversubscribed = upper > 1.0 and tree.tiers >= 3
    if displaced:
        notes.append(f"UFM takes {ufm_links} leaf ports in SU 1, displacing {displaced} system slot(s).")
    fab = Fabric(
        name="compute",
        technology=fabric_id,
        switch=switch.id,
        link_gbps=link_gbps,
        radix=radix,
        planes=planes,
        tiers=tree.tiers,
        leaf=tree.leaves * planes,
        spine=tree.spines * planes,
        core=tree.cores * planes,
        node_links=(systems * system.compute_nic_count + ufm_links) * planes,
        leaf_spine_links=tree.leaf_spine_links * planes,
        spine_core_links=tree.spine_core_links * planes,
        switches=switch_tiers("compute", switch.id, tree, planes),
        notes=tuple(notes),
        reason=reference_reason(
            system,
            (systems, displaced),
            sus,
            (shape.su_systems, shape.down_used),
            tree,
            switch,
            rails_shared,
            radix,
            planes,
        )
        + (oversubscribed_reason(upper) if oversubscribed else ""),
        super_core=tree.super_cores * planes,
        core_super_links=tree.core_super_links * planes,
        design="oversubscribed" if oversubscribed else "",
        sus_per_pod=sus * groups / tree.pods if tree.pods else float(sus),
        sus_per_super_pod=sus / tree.super_pods if tree.super_pods else 0.0,
    )
    return ComputeSizing(fab, sus, ufm_links, displaced, shape.su_systems)


def _su_clos(
    phys: SystemPhysical, sus: int, slots: int, shape: _ComputeShape, radix: int, upper: tuple[float, int]
) -> Clos | None:
    """The Clos over `sus` scalable units for `slots` system slots (systems plus any the UFM displaces); `upper` is
    (upper-tier oversubscription, most tiers). One spine group when the rails share the spines, else one per rail;
    a per-rail leaf serves whole racks only, so the last SU's leaves that would serve no system are left out."""
    rails_shared = phys.spine_groups == "shared"
    leaves_per_su_group = shape.leaves_per_rail_per_su * (phys.compute_rails if rails_shared else 1)
    groups = 1 if rails_shared else phys.compute_rails
    ratio, max_tiers = upper
    max_up = radix - shape.down_used
    tree = clos(
        sus, [LeafType(leaves_per_su_group, shape.uplinks, max_up)], groups, radix, radix,
        max_tiers=max_tiers, upper_ratio=ratio,
    )  # fmt: skip
    if tree is None or rails_shared:
        return tree
    empty_leaves = (sus * shape.su_systems - slots) // shape.systems_per_leaf * phys.compute_rails
    return replace(
        tree,
        leaves=tree.leaves - empty_leaves,
        leaf_spine_links=tree.leaf_spine_links - empty_leaves * tree.leaf_uplinks[0],
    )


def compute_link_groups(
    system: System,
    phys: SystemPhysical,
    systems: int,
    sized: ComputeSizing,
    geo: Geometry,
    parts: PartsCatalog,
    a: Assumptions,
) -> list[LinkGroup]:
    """Node-leaf (and UFM-leaf) runs to the end of the row, leaf-spine runs to the central row, spine-core (and
    core-super-core) inside it. The UFM pair sits in a management rack beside SU 1's network rack."""
    compute = sized.fabric
    if not compute.leaf:
        return []
    switch = parts[compute.switch]
    port, native = switch.text("port_type"), switch.num("port_gbps")
    groups = [_node_links(system, phys, systems, compute, geo, port, native)]
    if sized.ufm_links:
        groups.append(_ufm_links(sized, geo, parts, a, port))
    if compute.spine:  # none with one tier below an SU: only the node links
        groups += _switch_links(compute, geo, port, native)
    return groups


def _node_links(
    system: System, phys: SystemPhysical, systems: int, compute: Fabric, geo: Geometry, port: str, native: float
) -> LinkGroup:
    """Every system NIC (per plane) to its rail leaf, run to the end of the row at the slower of NIC and port."""
    return LinkGroup(
        "compute", "node-leaf", "system", "leaf",
        links=systems * system.compute_nic_count * compute.planes,
        link_gbps=compute.link_gbps,
        a_devices=systems,
        b_devices=compute.leaf,
        a_port_type=phys.compute_port_type,
        b_port_type=port,
        native_gbps=min(system.compute_nic_gbps, native),
        distance_class="end_of_row",
        length_m=geo.end_of_row_m(),
    )  # fmt: skip


def _ufm_links(sized: ComputeSizing, geo: Geometry, parts: PartsCatalog, a: Assumptions, port: str) -> LinkGroup:
    """The UFM appliances' links to the leaves of SU 1 (per plane), from the management rack at the row's end."""
    compute, ufm = sized.fabric, parts["ufm-3.1"]
    per_plane_leaves = compute.leaf // compute.planes
    return LinkGroup(
        "compute", "ufm-leaf", "ufm", "leaf",
        links=sized.ufm_links * compute.planes,
        link_gbps=ufm.num("link_gbps"),
        a_devices=a["ufm_appliances_per_ib_fabric"],
        b_devices=min(sized.ufm_links, per_plane_leaves) * compute.planes,
        a_port_type=ufm.text("port_type"),
        b_port_type=port,
        native_gbps=ufm.num("link_gbps"),
        distance_class="end_of_row",
        length_m=geo.end_of_row_m(),
    )  # fmt: skip


# Switches per network rack of the central row, as the in-row run lengths count them.
_SWITCHES_PER_NETWORK_RACK = 32


def _switch_links(compute: Fabric, geo: Geometry, port: str, native: float) -> list[LinkGroup]:
    """Switch-to-switch runs: leaf-spine to the central network row, spine-core and core-super-core inside it,
    each as long as the network racks the tiers up to it fill."""

    def tier(name: str, ends: tuple[str, str], links: int, devices: tuple[int, int], where: str, length_m: float
             ) -> LinkGroup:  # fmt: skip
        return LinkGroup("compute", name, *ends, links, compute.link_gbps, *devices, port, port, native, where,
                         length_m)  # fmt: skip

    def in_row_m(switches: int) -> float:
        return geo.in_centre_m(math.ceil(switches / _SWITCHES_PER_NETWORK_RACK))

    c = compute
    groups = [tier("leaf-spine", ("leaf", "spine"), c.leaf_spine_links, (c.leaf, c.spine), "between_rows",
                   geo.to_centre_m())]  # fmt: skip
    if c.core:
        groups.append(tier("spine-core", ("spine", "core"), c.spine_core_links, (c.spine, c.core), "in_network_row",
                           in_row_m(c.spine + c.core)))  # fmt: skip
    if c.super_core:
        groups.append(tier("core-super", ("core", "super-core"), c.core_super_links, (c.core, c.super_core),
                           "in_network_row", in_row_m(c.spine + c.core + c.super_core)))  # fmt: skip
    return groups
