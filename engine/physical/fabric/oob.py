"""The out-of-band management fabric: one RJ45 port per BMC and management port, 1G leaves per row and in the
central row, uplinked to an aggregation pair (or tree); and its link groups.

Counted devices: every system's BMC ports, two metered PDUs per compute rack, every switch of the other fabrics,
the UFM appliances, management servers and storage appliances.
"""

from __future__ import annotations

import math

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import System
from engine.catalog.parts import PartsCatalog, SystemPhysical
from engine.physical.clos import LeafType, clos
from engine.physical.fabric.edge import EdgeDevices
from engine.physical.fabric.types import (
    OOB_AGGREGATION_SWITCH,
    OOB_SWITCH,
    Fabric,
    Geometry,
    LinkGroup,
    SwitchTier,
    empty_fabric,
)

__all__ = ["oob_fabric"]

_TIERS = {2: "Two", 3: "Three", 4: "Four"}


def _oob_ports(
    system: System,
    phys: SystemPhysical,
    systems: int,
    switched: tuple[Fabric, ...],
    ufm_count: int,
    devices: EdgeDevices,
    rows: int,
) -> tuple[int, int]:
    """(ports per SU row, ports in the central row): compute leaves sit in the rows, other switches centrally."""
    compute = switched[0]
    switches_total = sum(t.count for f in switched for t in f.switches)
    racks_per_row = math.ceil(systems / max(1, system.systems_per_rack) / rows)
    row_oob = math.ceil(systems / rows) * phys.oob_ports + racks_per_row * 2  # BMCs + two metered PDUs per rack
    row_oob += math.ceil(compute.leaf / rows) if compute.leaf else 0
    storage_part = devices.storage_part
    central_oob = (
        (switches_total - (compute.leaf if compute.leaf else 0))
        + ufm_count
        + devices.mgmt_servers * int(devices.mgmt.num("oob_ports"))
        + devices.storage_units * int(storage_part.num("oob_ports") if storage_part else 0)
    )
    return row_oob, central_oob


def oob_fabric(
    system: System,
    phys: SystemPhysical,
    systems: int,
    switched: tuple[Fabric, ...],
    ufm_count: int,
    devices: EdgeDevices,
    geo: Geometry,
    parts: PartsCatalog,
    a: Assumptions,
) -> tuple[Fabric, list[LinkGroup]]:
    """The OOB fabric and its link groups; `switched` = (compute, storage, in-band), whose switches it manages."""
    rows = geo.rows
    row_oob, central_oob = _oob_ports(system, phys, systems, switched, ufm_count, devices, rows)
    oob_sw = parts[OOB_SWITCH]
    oob_ports_per = int(oob_sw.num("ports"))
    oob_ports_total = rows * row_oob + central_oob
    if oob_ports_total <= oob_ports_per:  # every management port on one switch: no aggregation tier
        reason = (
            f"One tier: one {OOB_SWITCH.upper()} takes all {oob_ports_total} management ports (of "
            f"{oob_ports_per}); no aggregation switches are needed."
        )
        single = _one_switch(oob_sw.id, oob_ports_per, oob_ports_total, reason)
        return single, _oob_link_groups(single, geo)
    oob_leaves = rows * math.ceil(row_oob / oob_ports_per) + math.ceil(central_oob / oob_ports_per)
    agg = parts[OOB_AGGREGATION_SWITCH]
    agg_tree = clos(
        oob_leaves,
        [LeafType(1, a["oob_uplinks_per_leaf"], int(oob_sw.num("uplink_ports")))],
        1,
        int(agg.num("ports")),
        int(agg.num("ports")),
        first_pod_units=int(agg.num("ports")) // 2,
        max_tiers=4,
    )
    if agg_tree is None:
        note = f"no four-tier aggregation of {agg.id.upper()} switches takes {oob_leaves:,} management switches"
        empty = empty_fabric("oob", note, f"Not built: {note}.")
        return empty, []
    oob_switches = [SwitchTier("oob", "leaf", OOB_SWITCH, oob_leaves, "row")]
    if agg_tree.spines:
        oob_switches.append(SwitchTier("oob", "spine", OOB_AGGREGATION_SWITCH, agg_tree.spines, "central"))
    if agg_tree.cores:
        oob_switches.append(SwitchTier("oob", "core", OOB_AGGREGATION_SWITCH, agg_tree.cores, "central"))
    if agg_tree.super_cores:
        oob_switches.append(SwitchTier("oob", "super-core", OOB_AGGREGATION_SWITCH, agg_tree.super_cores, "central"))
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
        super_core=agg_tree.super_cores,
        core_super_links=agg_tree.core_super_links,
        notes=(
            f"{oob_ports_total} management ports (BMCs, switch, PDU, UFM, server and storage "
            f"management) on {oob_sw.part_number} leaves.",
        ),
        reason=(
            f"{_TIERS[agg_tree.tiers]} tiers: {oob_ports_total} management ports need {oob_leaves} "
            f"{OOB_SWITCH.upper()} switches (one set per row, {oob_ports_per} ports each), joined by "
            f"{agg_tree.spines} aggregation switch(es)"
            + (f" and {agg_tree.cores} core(s)" if agg_tree.cores else "")
            + (f" and {agg_tree.super_cores} super-core(s)." if agg_tree.super_cores else ".")
        ),
    )
    return oob, _oob_link_groups(oob, geo)


def _one_switch(part_id: str, ports: int, used: int, reason: str) -> Fabric:
    """The out-of-band network of a small cluster: one 1G switch, every management port on it."""
    switches = (SwitchTier("oob", "leaf", part_id, 1, "row"),)
    note = f"{used} management ports (BMCs, switch, PDU, server and storage management) on one switch."
    return Fabric(
        "oob",
        "ethernet-1g",
        part_id,
        1.0,
        ports,
        1,
        1,
        1,
        0,
        0,
        used,
        0,
        0,
        switches=switches,
        notes=(note,),
        reason=reason,
    )


def _oob_link_groups(oob: Fabric, geo: Geometry) -> list[LinkGroup]:
    """Device ports to the row's leaves (RJ45), leaves to the aggregation switches in the central row (100G)."""
    groups = [
        LinkGroup(
            "oob",
            "device-leaf",
            "device",
            "leaf",
            oob.node_links,
            1.0,
            oob.node_links,
            oob.leaf,
            "rj45_1g",
            "rj45_1g",
            1.0,
            "end_of_row",
            geo.end_of_row_m(),
        )
    ]
    if oob.spine:
        groups.append(
            LinkGroup(
                "oob",
                "leaf-spine",
                "leaf",
                "spine",
                oob.leaf_spine_links,
                100.0,
                oob.leaf,
                oob.spine,
                "qsfp28_100g",
                "qsfp28_100g",
                100.0,
                "between_rows",
                geo.to_centre_m(),
            )
        )
    return groups
