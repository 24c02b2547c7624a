"""The compute fabric below one scalable unit: the smallest design that still connects every GPU port.

NVIDIA's DGX SuperPOD reference architectures build whole scalable units (a leaf per rail, half its ports up to a
spine tier) because they grow to thousands of systems. Below one SU nothing needs to grow into a spine, so:

1. One tier when a switch can take whole rails: the fewest switches that each take an equal share of the rails
   (all rails on one switch when the ports allow, else 1/2, 1/4 ... down to one switch per rail). Rails are never
   split over switches, so the fabric stays rail-optimised: GPU i of every system meets GPU i of every other
   system on one switch, and traffic between rails crosses NVLink inside the system first (NCCL's PXN), as in
   the rail-only networks of Wang et al., "Rail-only: A Low-Cost High-Performance Network for Training LLMs
   with Trillion Parameters" (arXiv:2307.12169, 2023).
2. Two tiers only when one rail needs more ports than a switch has (NVL72 racks: 18 trays per rail per rack):
   leaves per rail = ceil(rail ports / a non-blocking leaf's down ports), each leaf's ports spread evenly over
   the rail's leaves, uplinks equal to the ports used, and shared spines by the Clos rules of
   `engine.physical.clos` (which add a third tier only when two cannot reach).

No UFM appliance below an SU: a managed InfiniBand switch runs the subnet manager itself (NVIDIA Quantum-2
QM9700 series data sheet: on-board subnet manager for fabrics of up to 2,000 nodes), so no system slot is given
up to a fabric manager either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.catalog.hardware import System
from engine.catalog.parts import Part, SystemPhysical
from engine.physical.clos import Clos, LeafType, clos
from engine.physical.fabric.ports import leaf_down_ports, switch_tiers
from engine.physical.fabric.types import Fabric, SwitchTier

__all__ = ["SmallFabric", "small_compute_fabric"]


@dataclass(frozen=True)
class SmallFabric:
    """A below-SU compute fabric and the one-line reason for its tier count."""

    fabric: Fabric
    reason: str


def _rails_per_switch(rails: int, rail_ports: int, radix: int) -> int | None:
    """The most rails one switch takes whole, an equal share of them (a divisor of the rail count); None when
    not even one rail fits a switch."""
    for share in range(rails, 0, -1):
        if rails % share == 0 and share * rail_ports <= radix:
            return share
    return None


@dataclass(frozen=True)
class _Design:
    """What every below-SU design shares: the technology, switch, link speed, radix, planes and GPU ports."""

    fabric_id: str
    switch: Part
    link_gbps: float
    radix: int
    planes: int
    node_links: int

    @property
    def name(self) -> str:
        return self.switch.id.upper()

    def fabric(self, tree: Clos, switches: tuple[SwitchTier, ...], note: str, reason: str) -> Fabric:
        p = self.planes
        return Fabric(
            name="compute",
            technology=self.fabric_id,
            switch=self.switch.id,
            link_gbps=self.link_gbps,
            radix=self.radix,
            planes=p,
            tiers=tree.tiers,
            leaf=tree.leaves * p,
            spine=tree.spines * p,
            core=tree.cores * p,
            node_links=self.node_links,
            leaf_spine_links=tree.leaf_spine_links * p,
            spine_core_links=tree.spine_core_links * p,
            switches=switches,
            notes=(note,),
            reason=reason,
        )


def _one_tier(system: System, systems: int, rails: int, share: int, rail_ports: int, d: _Design) -> SmallFabric:
    switches = rails // share
    per_plane = f" per plane ({d.planes} planes)" if d.planes > 1 else ""
    if switches == 1:
        reason = (
            f"One tier: all {rails * rail_ports} GPU ports of the {systems} {system.name} systems fit on one "
            f"{d.name} ({d.radix} ports at {d.link_gbps:g}G){per_plane}, so no spine tier is needed below a "
            "scalable unit."
        )
    else:
        reason = (
            f"One tier: {switches} {d.name} switches{per_plane}, each taking {share} whole rail(s) "
            f"({share * rail_ports} of {d.radix} ports), since one switch cannot take all {rails * rail_ports} GPU "
            "ports; traffic between rails crosses NVLink inside each system first (rail-optimised, as in rail-only "
            "networks), so no spine tier is needed below a scalable unit."
        )
    tree = Clos(1, switches, 0, 0, (0,), 0, 0, 0, 0, 0, 0, 0)
    tiers = (SwitchTier("compute", "leaf", d.switch.id, switches * d.planes, "row"),)
    note = f"Below one SU: one tier, {switches} switch(es) per plane, {share} rail(s) per switch."
    return SmallFabric(d.fabric(tree, tiers, note, reason), reason)


def _two_tier_reason(tree: Clos, rail_ports: int, d: _Design, leaves_per_rail: int, down: int, ratio: float) -> str:
    tiers = "Two tiers" if tree.tiers == 2 else "Three tiers (a leaf cannot reach enough spines for two)"
    uplinks = "an uplink for every GPU port (non-blocking)" if ratio == 1 else f"uplinks at {ratio:g}:1"
    return (
        f"{tiers}: one rail needs {rail_ports} ports, more than one {d.name} has ({d.radix}), so each rail gets "
        f"{leaves_per_rail} leaves of {down} GPU ports (sized to the ports needed) with {uplinks}, and the leaves "
        f"share {tree.spines} spines."
    )


def small_compute_fabric(
    system: System,
    phys: SystemPhysical,
    systems: int,
    fabric_id: str,
    switch: Part,
    link_gbps: float,
    radix: int,
    planes: int,
    ratio: float,
) -> SmallFabric | None:
    """The below-SU fabric of one identical design per plane; None when not even three tiers connect it."""
    rails = phys.compute_rails
    rail_ports = systems * (system.compute_nic_count // rails)
    d = _Design(fabric_id, switch, link_gbps, radix, planes, systems * system.compute_nic_count * planes)
    share = _rails_per_switch(rails, rail_ports, radix)
    if share is not None:
        return _one_tier(system, systems, rails, share, rail_ports, d)
    down_max = leaf_down_ports(radix, ratio)
    leaves_per_rail = math.ceil(rail_ports / down_max)
    down = math.ceil(rail_ports / leaves_per_rail)
    uplinks = math.ceil(down / ratio - 1e-9)
    tree = clos(1, [LeafType(rails * leaves_per_rail, uplinks, radix - down)], 1, radix, radix)
    if tree is None:
        return None
    reason = _two_tier_reason(tree, rail_ports, d, leaves_per_rail, down, ratio)
    note = (
        f"Below one SU: {leaves_per_rail} leaf per rail ({down} down / {tree.leaf_uplinks[0]} up), "
        f"{tree.spines} spine(s) and {tree.cores} core(s) per plane, {planes} plane(s)."
    )
    return SmallFabric(d.fabric(tree, switch_tiers("compute", switch.id, tree, planes), note, reason), reason)
