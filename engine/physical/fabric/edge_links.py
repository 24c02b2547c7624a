"""The storage and in-band fabrics' link groups: systems to leaves at the end of the row, storage appliances and
management servers to leaves in the central network row, and the leaf, spine and core runs above them.

Apart from the fabrics' sizing (`edge.py`): the sizing counts switches and links, this lays those links out over
the hall's geometry, per fabric, by which fabric carries which targets (converged, separate, or an NFS server on
the in-band network).
"""

from __future__ import annotations

from engine.catalog.parts import PartsCatalog, SystemPhysical
from engine.physical.fabric.edge import PEER_LINK_PORTS, EdgeDevices, storage_on_inband
from engine.physical.fabric.types import Fabric, Geometry, LinkGroup

__all__ = ["Target", "edge_link_groups", "north_south_link_groups"]

# (label, links, devices, device port type, device link Gbit/s) of one kind of target on an edge fabric.
Target = tuple[str, int, int, str, float]


def edge_link_groups(
    fab: Fabric,
    systems: int,
    node_port_type: str,
    node_links: int,
    node_gbps: float,
    targets: list[Target],
    geo: Geometry,
    parts: PartsCatalog,
) -> list[LinkGroup]:
    """Systems to leaves at the end of the row; targets (storage, management servers) to leaves and leaves to
    spines and cores inside the central network row (a one-switch fabric has only its node and target links).
    Long only because each LinkGroup is written one field per line (13 fields); the logic is a few appends."""
    if not fab.leaf:
        return []
    port = parts[fab.switch].text("port_type") if fab.switch else ""
    native = parts[fab.switch].num("port_gbps") if fab.switch else fab.link_gbps
    name, gbps = fab.name, fab.link_gbps
    groups = [
        LinkGroup(
            name,
            "node-leaf",
            "system",
            "leaf",
            node_links,
            gbps,
            systems,
            fab.leaf,
            node_port_type,
            port,
            min(node_gbps, native),
            "end_of_row",
            geo.end_of_row_m(),
        )
    ]
    for label, links, devices, dev_port, dev_gbps in targets:
        if links:
            groups.append(
                LinkGroup(
                    name,
                    f"{label}-leaf",
                    label,
                    "leaf",
                    links,
                    gbps,
                    devices,
                    fab.leaf,
                    dev_port,
                    port,
                    min(dev_gbps, native),
                    "in_network_row",
                    geo.in_centre_m(2),
                )
            )
    if fab.tiers == 1 and fab.leaf == 2 and fab.technology == "ethernet":  # the MLAG pair's peer link
        peer = (name, "peer-link", "leaf", "leaf", PEER_LINK_PORTS, native, 1, 1, port, port, native)
        groups.append(LinkGroup(*peer, "in_network_row", geo.in_centre_m(1)))
    if fab.spine:
        up = (name, "leaf-spine", "leaf", "spine", fab.leaf_spine_links, gbps, fab.leaf, fab.spine, port, port, native)
        groups.append(LinkGroup(*up, "between_rows", geo.to_centre_m()))
    if fab.core:
        core = (
            name,
            "spine-core",
            "spine",
            "core",
            fab.spine_core_links,
            gbps,
            fab.spine,
            fab.core,
            port,
            port,
            native,
        )
        groups.append(LinkGroup(*core, "in_network_row", geo.in_centre_m(2)))
    if fab.super_core:
        top = (name, "core-super", "core", "super-core", fab.core_super_links, gbps, fab.core, fab.super_core, port)
        groups.append(LinkGroup(*top, port, native, "in_network_row", geo.in_centre_m(2)))
    return groups


def north_south_link_groups(
    phys: SystemPhysical,
    systems: int,
    storage: Fabric,
    inband: Fabric,
    devices: EdgeDevices,
    geo: Geometry,
    parts: PartsCatalog,
) -> dict[str, list[LinkGroup]]:
    """Link groups of the storage and in-band fabrics; management servers join the converged fabric if there
    is one, else the in-band fabric."""
    storage_part, mgmt = devices.storage_part, devices.mgmt
    storage_port = storage_part.text("port_type") if storage_part else ""
    storage_gbps = storage_part.num("fabric_gbps") if storage_part else phys.storage_gbps
    storage_targets: list[Target] = [
        ("storage", devices.storage_ports, devices.storage_units, storage_port, storage_gbps)
    ]
    mgmt_target: Target = ("mgmt", devices.mgmt_links, devices.mgmt_servers, "qsfp112_400g", mgmt.num("inband_gbps"))

    def links(fab: Fabric, port_type: str, per_system: int, gbps: float, targets: list[Target]) -> list[LinkGroup]:
        return edge_link_groups(fab, systems, port_type, systems * per_system, gbps, targets, geo, parts)

    if phys.north_south == "converged":
        converged_ports = phys.storage_ports + phys.inband_ports
        groups = links(
            storage, phys.storage_port_type, converged_ports, phys.storage_gbps, [*storage_targets, mgmt_target]
        )
        return {"storage": groups, "inband": []}
    nfs = storage_on_inband(phys, devices)  # the storage is an NFS server on the in-band network
    inband_targets = [*storage_targets, mgmt_target] if nfs else [mgmt_target]
    inband_groups = links(inband, phys.inband_port_type, phys.inband_ports, phys.inband_gbps, inband_targets)
    if nfs:
        return {"storage": [], "inband": inband_groups}
    storage_groups = links(storage, phys.storage_port_type, phys.storage_ports, phys.storage_gbps, storage_targets)
    return {"storage": storage_groups, "inband": inband_groups}
