"""Fabric stage: the compute, storage, in-band and out-of-band networks of a built cluster, down to cables and
transceivers.

Compute fabric (fabric.md sections 2-5): scalable units of `su_systems` systems; NIC i of every system goes to
the rail-i leaf of its SU (rail-optimised); a leaf serves whole systems only, as many as its down ports allow
(an NVL72 rack's 18 trays per rail, 32 DGX); the full SU fabric is built even when the SU is partly populated;
UFM links take spare leaf ports or, where leaves have none, the slot of one system. Spines and cores follow the
Clos rules in clos.py. Multi-plane designs (B300, GB300) build one identical fabric per plane.

Every link group then gets a length from the rack geometry (one row per SU with its network rack at the end,
spines and cores in a central network row), hence a medium (DAC, active copper, multimode, single-mode), hence
cables and transceivers from the parts catalog.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import System
from engine.catalog.parts import Part, PartsCatalog, SystemPhysical
from engine.physical.clos import Clos, LeafType, clos

__all__ = [
    "FABRIC_LINK_GBPS",
    "FABRIC_SWITCH",
    "Fabric",
    "FabricPlan",
    "LinkGroup",
    "SwitchTier",
    "size_fabrics",
]

# Request `hardware.fabric` -> switch part and the link speed it runs at.
FABRIC_SWITCH = {"infiniband-ndr": "qm9700", "infiniband-xdr": "q3400", "roce-400g": "sn5600", "roce-800g": "sn5600"}
FABRIC_LINK_GBPS = {"infiniband-ndr": 400.0, "infiniband-xdr": 800.0, "roce-400g": 400.0, "roce-800g": 800.0}
OOB_AGGREGATION_SWITCH = "sn4600c"
OOB_SWITCH = "sn2201"
# Media tried shortest-reach first: the cheapest and lowest-power medium that spans the run wins.
MEDIA_ORDER = ("dac", "acc", "mmf", "smf")


@dataclass(frozen=True)
class LinkGroup:
    """Identical links between two device classes of one fabric: same tier, speed, length and medium."""

    fabric: str
    tier: str
    a: str
    b: str
    links: int
    link_gbps: float
    a_devices: int
    b_devices: int
    a_port_type: str
    b_port_type: str
    native_gbps: float
    distance_class: str
    length_m: float
    medium: str = ""
    cable_part: str | None = None
    cable_length_m: int | None = None
    cables: int = 0
    a_module_part: str | None = None
    a_modules: int = 0
    b_module_part: str | None = None
    b_modules: int = 0
    optics_w: float = 0.0

    @property
    def transceivers(self) -> int:
        return self.a_modules + self.b_modules

    def as_dict(self) -> dict[str, object]:
        return {
            "tier": self.tier,
            "from": self.a,
            "to": self.b,
            "links": self.links,
            "link_gbps": self.link_gbps,
            "distance_class": self.distance_class,
            "length_m": round(self.length_m, 1),
            "medium": self.medium,
            "cable_part": self.cable_part,
            "cable_length_m": self.cable_length_m,
            "cables": self.cables,
            "from_module": self.a_module_part,
            "from_modules": self.a_modules,
            "to_module": self.b_module_part,
            "to_modules": self.b_modules,
            "optics_w": self.optics_w,
        }


@dataclass(frozen=True)
class SwitchTier:
    """`count` switches of one part in one tier; `placement` says where the facility stage racks them."""

    fabric: str
    tier: str
    part: str
    count: int
    placement: str  # "row" (the SU's end-of-row network rack) or "central" (spine/core network row)


@dataclass(frozen=True)
class Fabric:
    """One network. Switch and link counts follow the design.md contract; `links` carries the media."""

    name: str
    technology: str
    switch: str | None
    link_gbps: float
    radix: int
    planes: int
    tiers: int
    leaf: int
    spine: int
    core: int
    node_links: int
    leaf_spine_links: int
    spine_core_links: int
    switches: tuple[SwitchTier, ...] = ()
    links: tuple[LinkGroup, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def cables(self) -> int:
        return sum(g.cables for g in self.links)

    @property
    def transceivers(self) -> int:
        return sum(g.transceivers for g in self.links)

    @property
    def optics_w(self) -> float:
        return sum(g.optics_w for g in self.links)

    def as_dict(self) -> dict[str, object]:
        return {
            "technology": self.technology,
            "switch": self.switch,
            "link_gbps": self.link_gbps,
            "radix": self.radix,
            "planes": self.planes,
            "tiers": self.tiers,
            "leaf": self.leaf,
            "spine": self.spine,
            "core": self.core,
            "node_links": self.node_links,
            "leaf_spine_links": self.leaf_spine_links,
            "spine_core_links": self.spine_core_links,
            "cables": self.cables,
            "transceivers": self.transceivers,
            "optics_w": round(self.optics_w, 1),
            "link_groups": [g.as_dict() for g in self.links],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Geometry:
    """Rack rows for cable lengths: one row per SU (its compute racks plus its end-of-row network rack)."""

    rows: int
    racks_per_row: int
    rack_width_m: float
    row_pitch_m: float
    slack_m: float

    def end_of_row_m(self) -> float:
        """Farthest compute rack of a row to the network rack at its end."""
        return self.racks_per_row * self.rack_width_m + self.slack_m

    def to_centre_m(self) -> float:
        """A row's network rack to the central spine/core row (the farthest row sets the length)."""
        if self.rows <= 1:
            return self.end_of_row_m()
        return math.ceil(self.rows / 2) * self.row_pitch_m + self.racks_per_row * self.rack_width_m / 2 + self.slack_m

    def in_centre_m(self, racks: int) -> float:
        """Within the central network row (spine to core, storage appliances to storage leaves)."""
        return max(1, racks) * self.rack_width_m + self.slack_m


@dataclass
class FabricPlan:
    """All four fabrics plus the devices they add (UFM appliances, management servers) and any problems."""

    compute: Fabric
    storage: Fabric
    inband: Fabric
    oob: Fabric
    ufm_appliances: int
    management_servers: int
    scalable_units: int
    displaced_systems: int
    compute_needed: bool
    problems: list[str] = field(default_factory=list)

    def fabrics(self) -> list[Fabric]:
        return [self.compute, self.storage, self.inband, self.oob]

    def switch_tiers(self) -> list[SwitchTier]:
        return [t for f in self.fabrics() for t in f.switches]

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {f.name: f.as_dict() for f in self.fabrics()}
        out["scalable_units"] = self.scalable_units
        out["ufm_appliances"] = self.ufm_appliances
        out["management_servers"] = self.management_servers
        out["systems_displaced_by_ufm"] = self.displaced_systems
        out["compute_fabric_needed"] = self.compute_needed
        return out


def _empty(name: str, note: str) -> Fabric:
    return Fabric(name, "none", None, 0.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, notes=(note,))


def _radix(switch: Part, link_gbps: float) -> int:
    """Ports at the link speed: a faster port splits into several slower ones (e.g. 1 x 400G -> 2 x 200G)."""
    port = switch.num("port_gbps")
    if link_gbps >= port:
        return int(switch.num("ports"))
    split = max(link_gbps, switch.num("min_split_gbps", port))
    return int(switch.num("ports") * port // split)


def _leaf_down(radix: int, ratio: float) -> int:
    """Most node-facing ports a leaf can have while keeping down/up <= ratio: d + ceil(d / ratio) <= radix."""
    down = int(radix * ratio / (ratio + 1))
    while down > 0 and down + math.ceil(down / ratio - 1e-9) > radix:
        down -= 1
    return down


# ---------------------------------------------------------------------------------------------- compute fabric


@dataclass(frozen=True)
class _ComputeShape:
    systems_per_leaf: int
    leaves_per_rail_per_su: int
    down_used: int
    uplinks: int
    spare_ports_per_su: int


def _compute_shape(
    system: System, phys: SystemPhysical, radix: int, ratio: float
) -> tuple[_ComputeShape, int] | tuple[None, int]:
    nics_per_rail = system.compute_nic_count // phys.compute_rails  # per plane as well: every NIC splits over planes
    down_max = _leaf_down(radix, ratio)
    per_leaf = min(system.su_systems, down_max // nics_per_rail)
    if per_leaf < 1:
        return None, nics_per_rail
    leaves_per_rail = math.ceil(system.su_systems / per_leaf)
    down_used = per_leaf * nics_per_rail
    spare = (leaves_per_rail * down_max - system.su_systems * nics_per_rail) * phys.compute_rails
    uplinks = math.ceil(down_used / ratio - 1e-9)
    return _ComputeShape(per_leaf, leaves_per_rail, down_used, uplinks, spare), nics_per_rail


def _compute_fabric(
    system: System,
    phys: SystemPhysical,
    systems: int,
    fabric_id: str,
    parts: PartsCatalog,
    a: Assumptions,
    needed: bool,
) -> tuple[Fabric, int, int, int, list[str]]:
    """(fabric, scalable units, UFM links, systems displaced by UFM, problems)."""
    sus_plain = math.ceil(systems / system.su_systems)
    if not needed:
        note = (
            "No scale-out compute fabric: each replica (or the whole job) fits inside one NVLink domain, so "
            "systems talk only over the storage and in-band networks."
        )
        return _empty("compute", note), sus_plain, 0, 0, []
    switch = parts[FABRIC_SWITCH[fabric_id]]
    planes = phys.compute_planes
    link_gbps = min(FABRIC_LINK_GBPS[fabric_id], system.compute_nic_gbps / planes)
    radix = _radix(switch, link_gbps)
    ratio = a["compute_oversubscription"]
    shape, nics_per_rail = _compute_shape(system, phys, radix, ratio)
    if shape is None:
        return (
            _empty("compute", "no leaf fits"),
            sus_plain,
            0,
            0,
            [
                f"fabric: a {switch.part_number} leaf ({radix} ports at {link_gbps:g}G) cannot take one {system.id}'s "
                f"{nics_per_rail} rail ports."
            ],
        )
    infiniband = switch.text("technology") == "infiniband"
    ufm_links = a["ufm_links"] if infiniband else 0
    displaced = 0
    if ufm_links > shape.spare_ports_per_su:
        displaced = math.ceil((ufm_links - shape.spare_ports_per_su) / (phys.compute_rails * nics_per_rail))
    sus = math.ceil((systems + displaced) / system.su_systems)
    rails_shared = phys.spine_groups == "shared"
    leaves_per_su_group = shape.leaves_per_rail_per_su * (phys.compute_rails if rails_shared else 1)
    groups = 1 if rails_shared else phys.compute_rails
    max_up = radix - shape.down_used
    tree = clos(sus, [LeafType(leaves_per_su_group, shape.uplinks, max_up)], groups, radix, radix)
    if tree is None:
        endpoints = radix**3 // 4
        return (
            _empty("compute", "beyond three tiers"),
            sus,
            ufm_links,
            displaced,
            [
                f"fabric: {systems} x {system.id} on {switch.part_number} ({radix} ports at {link_gbps:g}G) need more "
                f"than a three-tier fat tree (about {endpoints} endpoints per plane); a fourth tier is not modelled. "
                "Choose a higher-radix fabric (hardware.fabric) or a smaller cluster."
            ],
        )
    node_links = (systems * system.compute_nic_count + ufm_links) * planes
    notes = [
        f"{sus} SU x {system.su_systems} {system.id}; {shape.systems_per_leaf} systems per leaf per rail, "
        f"{shape.leaves_per_rail_per_su} leaf per rail per SU, {phys.compute_rails} rails, {planes} plane(s).",
        f"{tree.tiers}-tier: each leaf {shape.down_used} down / {tree.leaf_uplinks[0]} up at {link_gbps:g}G "
        f"(radix {radix}).",
    ]
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
        node_links=node_links,
        leaf_spine_links=tree.leaf_spine_links * planes,
        spine_core_links=tree.spine_core_links * planes,
        switches=_tiers("compute", switch.id, tree, planes),
        notes=tuple(notes),
    )
    return fab, sus, ufm_links, displaced, []


def _tiers(name: str, switch: str, tree: Clos, planes: int) -> tuple[SwitchTier, ...]:
    out = [SwitchTier(name, "leaf", switch, tree.leaves * planes, "row")]
    if tree.spines:
        out.append(SwitchTier(name, "spine", switch, tree.spines * planes, "central"))
    if tree.cores:
        out.append(SwitchTier(name, "core", switch, tree.cores * planes, "central"))
    return tuple(out)


# --------------------------------------------------------------------------------- storage, in-band, OOB fabrics


def _edge_fabric(
    name: str,
    switch: Part,
    link_gbps: float,
    node_ports: int,
    node_ratio: float,
    target_ports: int,
) -> Fabric:
    """Two leaf kinds: node-facing leaves at `node_ratio`, target-facing (storage) leaves at 1:1."""
    radix = _radix(switch, link_gbps)
    node_down = _leaf_down(radix, node_ratio)
    target_down = radix // 2
    node_leaves = math.ceil(node_ports / node_down) if node_ports else 0
    target_leaves = math.ceil(target_ports / target_down) if target_ports else 0
    if node_leaves + target_leaves == 1 and node_ports + target_ports <= radix:
        fab = Fabric(
            name,
            switch.text("technology"),
            switch.id,
            link_gbps,
            radix,
            1,
            1,
            1,
            0,
            0,
            node_ports,
            0,
            0,
            switches=(SwitchTier(name, "leaf", switch.id, 1, "central"),),
        )
        return fab
    # Bonded/dual-homed ports go to a leaf pair, so node leaves come in pairs.
    node_leaves += node_leaves % 2
    node_used = math.ceil(node_ports / node_leaves) if node_leaves else 0
    target_used = math.ceil(target_ports / target_leaves) if target_leaves else 0
    types = [
        LeafType(node_leaves, math.ceil(node_used / node_ratio - 1e-9), radix - node_used),
        LeafType(target_leaves, target_used, radix - target_used),
    ]
    tree = clos(1, types, 1, radix, radix, allow_two_tier=True)
    if tree is None:  # very large: k-ary pods of radix/2 leaves each
        widest = max(types, key=lambda t: t.uplinks)
        leaves = node_leaves + target_leaves
        tree = clos(
            leaves,
            [LeafType(1, widest.uplinks, widest.max_uplinks)],
            1,
            radix,
            radix,
            first_pod_units=radix // 2,
            allow_two_tier=False,
        )
    assert tree is not None, "edge fabrics always fit three tiers at the sizes the planner allows"
    fab = Fabric(
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
        switches=_tiers(name, switch.id, tree, 1),
        notes=(
            f"node leaves {node_leaves} ({node_used} ports used, {node_ratio:.3g}:1), target leaves "
            f"{target_leaves} ({target_used} ports, 1:1), {tree.tiers} tier(s), radix {radix} at {link_gbps:g}G.",
        ),
    )
    return fab


# ------------------------------------------------------------------------------------------------ media choice


def _module(parts: PartsCatalog, port_type: str, medium: str, length_m: float) -> Part | None:
    for part in parts.of_kind("transceiver"):
        if part.text("port_type") == port_type and part.text("medium") == medium and part.num("reach_m") >= length_m:
            return part
    return None


def _cable(parts: PartsCatalog, medium: str, length_m: float) -> tuple[Part, int] | None:
    for part in parts.of_kind("cable"):
        if part.text("medium") != medium:
            continue
        for length in part.spec.get("lengths_m", []):
            if length >= length_m:
                return part, int(length)
    return None


def _modules(devices: int, links: int, link_gbps: float, module: Part) -> int:
    """Modules at one end: per device, enough cages for its links' bandwidth (a twin-port module carries 2)."""
    if devices <= 0 or links <= 0:
        return 0
    capacity_gbps = module.num("links_per_module", 1) * module.num("link_gbps", link_gbps)
    per_device_links = math.ceil(links / devices)
    return devices * math.ceil(per_device_links * link_gbps / capacity_gbps - 1e-9)


def _choose_media(group: LinkGroup, parts: PartsCatalog) -> LinkGroup:
    """The first medium (copper before optics, multimode before single-mode) whose reach spans the run and for
    which both ends have a part; copper needs OSFP cages at both ends (DAC/ACC have the modules built in)."""
    cables = math.ceil(group.links * group.link_gbps / group.native_gbps - 1e-9)
    if group.a_port_type == "rj45_1g" or group.b_port_type == "rj45_1g":
        found = _cable(parts, "copper_rj45", group.length_m)
        if found:
            part, length = found
            return replace(group, medium="copper_rj45", cable_part=part.id, cable_length_m=length, cables=group.links)
    for medium in MEDIA_ORDER:
        if medium in ("dac", "acc"):
            if not (group.a_port_type.startswith("osfp") and group.b_port_type.startswith("osfp")):
                continue
            found = _cable(parts, medium, group.length_m)
            if found:
                part, length = found
                count = math.ceil(group.links / part.num("links_per_cable", 1))
                power = count * part.num("power_max_w") * 2
                return replace(
                    group, medium=medium, cable_part=part.id, cable_length_m=length, cables=count, optics_w=power
                )
            continue
        a_mod = _module(parts, group.a_port_type, medium, group.length_m)
        b_mod = _module(parts, group.b_port_type, medium, group.length_m)
        fibre = _cable(parts, medium, group.length_m)
        if a_mod is None or b_mod is None or fibre is None:
            continue
        a_n = _modules(group.a_devices, group.links, group.link_gbps, a_mod)
        b_n = _modules(group.b_devices, group.links, group.link_gbps, b_mod)
        power = a_n * a_mod.num("power_max_w") + b_n * b_mod.num("power_max_w")
        return replace(
            group,
            medium=medium,
            cable_part=fibre[0].id,
            cable_length_m=fibre[1],
            cables=cables,
            a_module_part=a_mod.id,
            a_modules=a_n,
            b_module_part=b_mod.id,
            b_modules=b_n,
            optics_w=power,
        )
    return replace(group, medium="unavailable", cables=cables)


def _group(
    fabric: str,
    tier: str,
    a: str,
    b: str,
    links: int,
    gbps: float,
    a_dev: int,
    b_dev: int,
    a_port: str,
    b_port: str,
    native: float,
    dclass: str,
    length: float,
) -> LinkGroup:
    return LinkGroup(fabric, tier, a, b, links, gbps, a_dev, b_dev, a_port, b_port, native, dclass, length)


# ------------------------------------------------------------------------------------------------------ stage


def size_fabrics(
    system: System,
    systems: int,
    racks_per_su: int,
    storage_part: Part | None,
    storage_units: int,
    hardware_fabric: str,
    needed: bool,
    parts: PartsCatalog,
    a: Assumptions,
) -> FabricPlan:
    """All four fabrics for `systems` systems. `racks_per_su` sets the row length for cable lengths;
    storage appliances come from the storage stage."""
    phys = parts.systems[system.id]
    fabric_id = phys.compute_fabric if hardware_fabric == "auto" else hardware_fabric
    problems: list[str] = []
    compute, sus, ufm_links, displaced, found = _compute_fabric(system, phys, systems, fabric_id, parts, a, needed)
    problems.extend(found)

    rack = parts.of_kind("rack")[0]
    geo = Geometry(
        rows=max(1, sus),
        racks_per_row=racks_per_su + 1,
        rack_width_m=rack.num("width_mm") / 1000.0,
        row_pitch_m=a["row_pitch_m"],
        slack_m=a["cable_slack_m"],
    )
    ib_compute = compute.switch is not None and parts[compute.switch].text("technology") == "infiniband"

    # Storage-side and in-band devices.
    storage_ports_total = storage_units * int(storage_part.num("fabric_ports")) if storage_part else 0
    storage_gbps = storage_part.num("fabric_gbps") if storage_part else phys.storage_gbps
    mgmt = parts["mgmt-server-2s"]
    mgmt_servers = a["management_servers"]
    converged = phys.north_south == "converged"

    if converged:
        sw = parts[phys.storage_switch]
        node_ports = systems * (phys.storage_ports + phys.inband_ports)
        storage = _edge_fabric(
            "storage",
            sw,
            phys.storage_gbps,
            node_ports,
            a["converged_fabric_node_oversubscription"],
            storage_ports_total + mgmt_servers * int(mgmt.num("inband_ports")),
        )
        inband = _empty(
            "inband",
            "Converged: in-band management rides the storage Ethernet fabric (VXLAN segments), as in the GB200 RA.",
        )
    else:
        sw = parts[phys.storage_switch]
        storage = _edge_fabric(
            "storage",
            sw,
            phys.storage_gbps,
            systems * phys.storage_ports,
            a["storage_fabric_node_oversubscription"],
            storage_ports_total,
        )
        ib_sw = parts[phys.inband_switch]
        inband = _edge_fabric(
            "inband",
            ib_sw,
            phys.inband_gbps,
            systems * phys.inband_ports,
            a["inband_fabric_oversubscription"],
            mgmt_servers * int(mgmt.num("inband_ports")),
        )
    ib_storage = parts[phys.storage_switch].text("technology") == "infiniband"
    ufm_count = a["ufm_appliances_per_ib_fabric"] * (int(ib_compute) + int(ib_storage))

    # Link groups with lengths.
    groups: dict[str, list[LinkGroup]] = {"compute": [], "storage": [], "inband": [], "oob": []}
    eor, centre = geo.end_of_row_m(), geo.to_centre_m()
    if compute.leaf:
        per_plane_leaves = compute.leaf // compute.planes
        groups["compute"].append(
            _group(
                "compute",
                "node-leaf",
                "system",
                "leaf",
                systems * system.compute_nic_count * compute.planes,
                compute.link_gbps,
                systems,
                compute.leaf,
                phys.compute_port_type,
                parts[compute.switch].text("port_type"),
                min(system.compute_nic_gbps, parts[compute.switch].num("port_gbps")),
                "end_of_row",
                eor,
            )
        )
        if ufm_links:
            ufm = parts["ufm-3.1"]
            groups["compute"].append(
                _group(
                    "compute",
                    "ufm-leaf",
                    "ufm",
                    "leaf",
                    ufm_links * compute.planes,
                    ufm.num("link_gbps"),
                    a["ufm_appliances_per_ib_fabric"],
                    min(ufm_links, per_plane_leaves) * compute.planes,
                    ufm.text("port_type"),
                    parts[compute.switch].text("port_type"),
                    ufm.num("link_gbps"),
                    "end_of_row",
                    eor,
                )
            )  # the UFM pair sits in a management rack beside SU 1's network rack
        port = parts[compute.switch].text("port_type")
        native = parts[compute.switch].num("port_gbps")
        groups["compute"].append(
            _group(
                "compute",
                "leaf-spine",
                "leaf",
                "spine",
                compute.leaf_spine_links,
                compute.link_gbps,
                compute.leaf,
                compute.spine,
                port,
                port,
                native,
                "between_rows",
                centre,
            )
        )
        if compute.core:
            groups["compute"].append(
                _group(
                    "compute",
                    "spine-core",
                    "spine",
                    "core",
                    compute.spine_core_links,
                    compute.link_gbps,
                    compute.spine,
                    compute.core,
                    port,
                    port,
                    native,
                    "in_network_row",
                    geo.in_centre_m(math.ceil((compute.spine + compute.core) / 32)),
                )
            )

    def edge_groups(fab: Fabric, node_port_type: str, node_links: int, node_gbps: float, targets: list[tuple]) -> None:
        if not fab.leaf:
            return
        port = parts[fab.switch].text("port_type") if fab.switch else ""
        native = parts[fab.switch].num("port_gbps") if fab.switch else fab.link_gbps
        groups[fab.name].append(
            _group(
                fab.name,
                "node-leaf",
                "system",
                "leaf",
                node_links,
                fab.link_gbps,
                systems,
                fab.leaf,
                node_port_type,
                port,
                min(node_gbps, native),
                "end_of_row",
                eor,
            )
        )
        for label, links, devices, dev_port, dev_gbps in targets:
            if links:
                groups[fab.name].append(
                    _group(
                        fab.name,
                        f"{label}-leaf",
                        label,
                        "leaf",
                        links,
                        fab.link_gbps,
                        devices,
                        fab.leaf,
                        dev_port,
                        port,
                        min(dev_gbps, native),
                        "in_network_row",
                        geo.in_centre_m(2),
                    )
                )
        if fab.spine:
            groups[fab.name].append(
                _group(
                    fab.name,
                    "leaf-spine",
                    "leaf",
                    "spine",
                    fab.leaf_spine_links,
                    fab.link_gbps,
                    fab.leaf,
                    fab.spine,
                    port,
                    port,
                    native,
                    "between_rows",
                    centre,
                )
            )
        if fab.core:
            groups[fab.name].append(
                _group(
                    fab.name,
                    "spine-core",
                    "spine",
                    "core",
                    fab.spine_core_links,
                    fab.link_gbps,
                    fab.spine,
                    fab.core,
                    port,
                    port,
                    native,
                    "in_network_row",
                    geo.in_centre_m(2),
                )
            )

    mgmt_links = mgmt_servers * int(mgmt.num("inband_ports"))
    storage_targets = [
        (
            "storage",
            storage_ports_total,
            storage_units,
            storage_part.text("port_type") if storage_part else "",
            storage_gbps,
        )
    ]
    if converged:
        storage_targets.append(("mgmt", mgmt_links, mgmt_servers, "qsfp112_400g", mgmt.num("inband_gbps")))
        edge_groups(
            storage,
            phys.storage_port_type,
            systems * (phys.storage_ports + phys.inband_ports),
            phys.storage_gbps,
            storage_targets,
        )
    else:
        edge_groups(storage, phys.storage_port_type, systems * phys.storage_ports, phys.storage_gbps, storage_targets)
        edge_groups(
            inband,
            phys.inband_port_type,
            systems * phys.inband_ports,
            phys.inband_gbps,
            [("mgmt", mgmt_links, mgmt_servers, "qsfp112_400g", mgmt.num("inband_gbps"))],
        )

    # Out-of-band: one RJ45 port per BMC/management port; SN2201 leaves per row, uplinked to an aggregation pair.
    switches_total = sum(t.count for f in (compute, storage, inband) for t in f.switches)
    rows = geo.rows
    racks_per_row = math.ceil(systems / max(1, system.systems_per_rack) / rows)
    row_oob = math.ceil(systems / rows) * phys.oob_ports + racks_per_row * 2  # BMCs + two metered PDUs per rack
    row_oob += math.ceil(compute.leaf / rows) if compute.leaf else 0
    central_oob = (
        (switches_total - (compute.leaf if compute.leaf else 0))
        + ufm_count
        + mgmt_servers * int(mgmt.num("oob_ports"))
        + storage_units * int(storage_part.num("oob_ports") if storage_part else 0)
    )
    oob_sw = parts[OOB_SWITCH]
    oob_ports_per = int(oob_sw.num("ports"))
    oob_leaves = rows * math.ceil(row_oob / oob_ports_per) + math.ceil(central_oob / oob_ports_per)
    up = a["oob_uplinks_per_leaf"]
    agg = parts[OOB_AGGREGATION_SWITCH]
    agg_tree = clos(
        oob_leaves,
        [LeafType(1, up, int(oob_sw.num("uplink_ports")))],
        1,
        int(agg.num("ports")),
        int(agg.num("ports")),
        first_pod_units=int(agg.num("ports")) // 2,
    )
    assert agg_tree is not None
    oob_ports_total = rows * row_oob + central_oob
    oob_switches = [SwitchTier("oob", "leaf", OOB_SWITCH, oob_leaves, "row")]
    if agg_tree.spines:
        oob_switches.append(SwitchTier("oob", "spine", OOB_AGGREGATION_SWITCH, agg_tree.spines, "central"))
    if agg_tree.cores:
        oob_switches.append(SwitchTier("oob", "core", OOB_AGGREGATION_SWITCH, agg_tree.cores, "central"))
    oob = Fabric(
        "oob",
        "ethernet-1g",
        OOB_SWITCH,
        1.0,
        oob_ports_per,
        1,
        agg_tree.tiers,
        oob_leaves,
        agg_tree.spines,
        agg_tree.cores,
        oob_ports_total,
        agg_tree.leaf_spine_links,
        agg_tree.spine_core_links,
        switches=tuple(oob_switches),
        notes=(
            f"{oob_ports_total} management ports (BMCs, switch, PDU, UFM, server and storage "
            f"management) on {oob_sw.part_number} leaves.",
        ),
    )
    groups["oob"].append(
        _group(
            "oob",
            "device-leaf",
            "device",
            "leaf",
            oob_ports_total,
            1.0,
            oob_ports_total,
            oob_leaves,
            "rj45_1g",
            "rj45_1g",
            1.0,
            "end_of_row",
            eor,
        )
    )
    if agg_tree.spines:
        groups["oob"].append(
            _group(
                "oob",
                "leaf-spine",
                "leaf",
                "spine",
                agg_tree.leaf_spine_links,
                100.0,
                oob_leaves,
                agg_tree.spines,
                "qsfp28_100g",
                "qsfp28_100g",
                100.0,
                "between_rows",
                centre,
            )
        )

    def finish(fab: Fabric) -> Fabric:
        return replace(fab, links=tuple(_choose_media(g, parts) for g in groups[fab.name]))

    result = FabricPlan(
        compute=finish(compute),
        storage=finish(storage),
        inband=finish(inband),
        oob=finish(oob),
        ufm_appliances=ufm_count,
        management_servers=mgmt_servers,
        scalable_units=sus,
        displaced_systems=displaced,
        compute_needed=needed,
        problems=problems,
    )
    for fab in result.fabrics():
        for g in fab.links:
            if g.medium == "unavailable":
                problems.append(f"fabric: no catalog medium spans {g.length_m:.0f} m for {fab.name} {g.tier} links.")
    return result
