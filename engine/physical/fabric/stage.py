"""`size_fabrics`: the fabric stage in order (compute, storage and in-band, out-of-band, then media), so each
network is sized from what the previous ones need."""

from __future__ import annotations

import math
from dataclasses import replace

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import System
from engine.catalog.parts import Part, PartsCatalog
from engine.physical.fabric.compute import compute_fabric, compute_link_groups
from engine.physical.fabric.edge import EdgeDevices, north_south_fabrics
from engine.physical.fabric.edge_links import north_south_link_groups
from engine.physical.fabric.media import choose_media
from engine.physical.fabric.oob import oob_fabric
from engine.physical.fabric.types import Fabric, FabricPlan, Geometry
from engine.physical.management import management_servers

__all__ = ["size_fabrics"]


def size_fabrics(
    system: System,
    systems: int,
    systems_per_rack: int,
    storage_part: Part | None,
    storage_units: int,
    hardware_fabric: str,
    needed: bool,
    parts: PartsCatalog,
    a: Assumptions,
) -> FabricPlan:
    """All four fabrics for `systems` systems. The compute fabric's SU (systems per rail-leaf) over
    `systems_per_rack` sets the row length for cable lengths; storage appliances come from the storage stage."""
    phys = parts.systems[system.id]
    fabric_id = phys.compute_fabric if hardware_fabric == "auto" else hardware_fabric
    sized = compute_fabric(system, phys, systems, fabric_id, parts, a, needed)
    problems = list(sized.problems)
    compute = sized.fabric

    rack = parts.of_kind("rack")[0]
    geo = Geometry(
        rows=max(1, sized.scalable_units),
        racks_per_row=math.ceil(min(systems, sized.su_systems) / max(1, systems_per_rack)) + 1,  # racks present
        rack_width_m=rack.num("width_mm") / 1000.0,
        row_pitch_m=a["row_pitch_m"],
        slack_m=a["cable_slack_m"],
    )
    mgmt_servers, mgmt_reason = management_servers(system, systems, a)
    devices = EdgeDevices(storage_part, storage_units, parts["mgmt-server-2s"], mgmt_servers)
    storage, inband = north_south_fabrics(phys, systems, devices, parts, a)
    # A UFM pair per InfiniBand fabric that needs one: a compute fabric with UFM links (whole SUs) and a storage
    # fabric of more than one switch; a single managed switch runs its own subnet manager.
    ib_compute = sized.ufm_links > 0
    ib_storage = storage.switch is not None and storage.tiers > 1 and _infiniband(parts[storage.switch])
    ufm_count = a["ufm_appliances_per_ib_fabric"] * (int(ib_compute) + int(ib_storage))

    groups = {"compute": compute_link_groups(system, phys, systems, sized, geo, parts, a)}
    groups |= north_south_link_groups(phys, systems, storage, inband, devices, geo, parts)
    oob, groups["oob"] = oob_fabric(
        system, phys, systems, (compute, storage, inband), ufm_count, devices, geo, parts, a
    )

    def finish(fab: Fabric) -> Fabric:
        return replace(fab, links=tuple(choose_media(g, parts) for g in groups[fab.name]))

    result = FabricPlan(
        compute=finish(compute),
        storage=finish(storage),
        inband=finish(inband),
        oob=finish(oob),
        ufm_appliances=ufm_count,
        management_servers=devices.mgmt_servers,
        scalable_units=sized.scalable_units,
        su_systems=sized.su_systems,
        displaced_systems=sized.displaced_systems,
        compute_needed=needed,
        problems=problems,
        management_reason=mgmt_reason,
        compute_design=sized.design,
    )
    for fab in result.fabrics():
        if fab.reason.startswith("Not built:"):  # an edge network past four tiers: say so, never build without it
            problems.append(f"fabric: {fab.name} network {fab.reason[len('Not built: ') :]}")
        for g in fab.links:
            if g.medium == "unavailable":
                problems.append(f"fabric: no catalog medium spans {g.length_m:.0f} m for {fab.name} {g.tier} links.")
    return result


def _infiniband(switch: Part) -> bool:
    return switch.text("technology") == "infiniband"
