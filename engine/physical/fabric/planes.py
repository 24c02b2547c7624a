"""Planes of the compute fabric: how many independent Clos fabrics a system's compute NICs feed, and the reason a
cluster gets no compute fabric when no plane count connects it.

A NIC faster than the fabric's link splits its line rate over planes (a ConnectX-8 800G runs as 2 x 400G on 400G
Spectrum-X: DGX SuperPOD RA with DGX B300, NVL72 AI Factory Enterprise RA with GB300). When one plane would need
more than three tiers, more planes at a slower link give each plane a larger radix (Q3400: 144 ports at 800G,
288 at 400G) and three tiers of radix k reach about k^3/4 ports per plane (Al-Fares et al., SIGCOMM 2008), as
long as the NIC can split that far (`compute_nic_max_planes` in the catalog); past that a fourth tier (about
2 (k/2)^4 ports per plane), and past that no design.
"""

from __future__ import annotations

from engine.catalog.hardware import System
from engine.catalog.parts import Part, SystemPhysical
from engine.physical.fabric.ports import switch_radix
from engine.physical.fabric.types import FABRIC_LINK_GBPS

__all__ = ["beyond_four_tiers", "link_and_planes", "plane_options"]


def link_and_planes(system: System, fabric_id: str) -> tuple[float, int]:
    """(link Gb/s, planes) of the reference design: the fabric's link speed, or the NIC's if slower, and as many
    planes as the NIC's line rate fills at that speed."""
    link_gbps = min(FABRIC_LINK_GBPS[fabric_id], system.compute_nic_gbps)
    return link_gbps, max(1, round(system.compute_nic_gbps / link_gbps))


def plane_options(system: System, phys: SystemPhysical, fabric_id: str, switch: Part) -> list[tuple[float, int]]:
    """Every (link Gb/s, planes) to try, fewest planes first: the reference split, then more planes while the NIC
    can split that far and the switch can split its ports to that speed."""
    base_link, base_planes = link_and_planes(system, fabric_id)
    options = [(base_link, base_planes)]
    slowest = switch.num("min_split_gbps", switch.num("port_gbps"))
    for planes in range(base_planes + 1, phys.compute_nic_max_planes + 1):
        link_gbps = system.compute_nic_gbps / planes
        if link_gbps >= slowest and system.compute_nic_gbps % planes == 0:
            options.append((link_gbps, planes))
    return options


def beyond_four_tiers(
    system: System,
    phys: SystemPhysical,
    systems: int,
    switch: Part,
    options: list[tuple[float, int]],
    alternatives: list[str],
) -> str:
    """The plain reason a cluster gets no compute fabric: ports per plane against what four tiers reach at the
    largest radix tried (a k-ary fat tree of four tiers: 2 (k/2)^4 ports), whether the NIC could split further,
    and which catalog fabrics would connect it."""
    link_gbps, planes = options[-1]
    radix = switch_radix(switch, link_gbps)
    ports = systems * system.compute_nic_count
    split = (
        f"its NICs split over at most {phys.compute_nic_max_planes} plane(s) ({planes} tried at {link_gbps:g}G)"
        if len(options) > 1 or phys.compute_nic_max_planes > 1
        else f"its {system.compute_nic_gbps:g}G compute NICs cannot split over more planes"
    )
    others = (
        f"Set hardware.fabric to {' or '.join(alternatives)} to connect it"
        if alternatives
        else "No compute fabric in the catalog connects it"
    )
    return (
        f"fabric: {systems:,} x {system.id} need {ports:,} compute ports per plane, more than four tiers of "
        f"{switch.part_number} ({radix} ports at {link_gbps:g}G) connect in whole SUs (at most about "
        f"{2 * (radix // 2) ** 4:,}); {split}. {others}, or plan fewer GPUs."
    )
