"""Topology JSON: nodes (system groups, switches by fabric, tier and plane) and links with counts, for the
diagrams and for export. Nodes are aggregated (one node per tier, not per switch) so a 16k-GPU plan stays small;
each node carries its count."""

from __future__ import annotations

from engine.catalog.hardware import System
from engine.physical.fabric import FabricPlan

__all__ = ["build_topology"]


def build_topology(system: System, systems: int, fabric: FabricPlan, storage_units: int) -> dict[str, object]:
    nodes: list[dict[str, object]] = [
        {"id": "systems", "kind": "system", "part": system.id, "count": systems},
    ]
    if storage_units:
        nodes.append({"id": "storage", "kind": "storage", "count": storage_units})
    if fabric.ufm_appliances:
        nodes.append({"id": "ufm", "kind": "ufm", "count": fabric.ufm_appliances})
    if fabric.management_servers:
        nodes.append({"id": "mgmt", "kind": "management_server", "count": fabric.management_servers})
    links: list[dict[str, object]] = []
    endpoint = {"system": "systems", "storage": "storage", "ufm": "ufm", "mgmt": "mgmt", "device": "devices"}
    for fab in fabric.fabrics():
        for tier in fab.switches:
            nodes.append(
                {
                    "id": f"{fab.name}.{tier.tier}",
                    "kind": "switch",
                    "fabric": fab.name,
                    "tier": tier.tier,
                    "part": tier.part,
                    "count": tier.count,
                    "planes": fab.planes,
                }
            )
        for group in fab.links:
            if group.a == group.b:  # an MLAG pair's peer link stays inside its switch node
                continue
            source = endpoint.get(group.a, f"{fab.name}.{group.a}")
            links.append(
                {
                    "fabric": fab.name,
                    "from": source,
                    "to": f"{fab.name}.{group.b}",
                    "tier": group.tier,
                    "links": group.links,
                    "link_gbps": group.link_gbps,
                    "medium": group.medium,
                    "cables": group.cables,
                }
            )
    if any(link["from"] == "devices" for link in links):
        nodes.append({"id": "devices", "kind": "management_ports", "count": fabric.oob.node_links})
    return {"nodes": nodes, "links": links}
