"""The compute fabric's reasons for users: one line that says which design connects the cluster and why (or why no
compute switch is built).

Kept apart from `compute` so the sizing reads as arithmetic and the words live in one place.
"""

from __future__ import annotations

from engine.catalog.hardware import System
from engine.catalog.parts import Part
from engine.physical.clos import Clos

__all__ = ["four_tier_reason", "no_fabric_reason", "oversubscribed_reason", "reference_reason"]


def no_fabric_reason(system: System, systems: int) -> str:
    """Why no compute switch is built, for users."""
    if systems == 1:
        return (
            f"No compute switch: a single {system.name}; its {system.gpus_per_system} GPUs talk over NVLink inside "
            "the system."
        )
    return (
        f"No compute switch: each serving replica (or the whole job) fits inside one {system.name}'s NVLink domain "
        f"of {system.nvlink_domain_gpus} GPUs, and replicas do not talk to each other."
    )


def four_tier_reason(tree: Clos, sus: int, name: str, radix: int, planes: int) -> str:
    """Why a fourth tier: three tiers of this radix stop at about k^3/4 ports per plane (Al-Fares et al. 2008)."""
    return (
        f"Four tiers: {sus:,} scalable units need more ports than three tiers of {radix}-port {name} switches "
        f"connect ({radix**3 // 4:,} per plane at most) and the NICs cannot split over more than {planes} plane(s), "
        f"so the units are grouped into {tree.super_pods} super-pods (each with its own spines and cores) joined by "
        f"a fourth tier of {tree.super_cores * planes:,} super-core switches, non-blocking at every tier."
    )


def reference_reason(
    system: System,
    slots: tuple[int, int],
    sus: int,
    unit: tuple[int, int],
    tree: Clos,
    switch: Part,
    shared: bool,
    radix: int,
    planes: int = 1,
) -> str:
    """Why the design's tier count, for users; says why the last SU's leaves are part-filled.
    `slots` = (systems, system slots given up to the UFM appliances); `unit` = (systems per SU, leaf ports used)."""
    name = switch.id.upper()
    su_systems, down_used = unit
    if tree.tiers == 4:
        why = four_tier_reason(tree, sus, name, radix, planes)
    elif not shared:
        why = (
            f"Three tiers, as NVIDIA's GB200 SuperPOD design: one spine-leaf group per rail per scalable unit of "
            f"{su_systems} racks, each rack's trays on one leaf per rail ({down_used} of {radix} ports; "
            "a rack holds no more trays), joined by core switches."
        )
    elif tree.tiers == 2:
        why = (
            f"Two tiers, as NVIDIA's DGX SuperPOD design: {sus} scalable unit(s) of {su_systems} systems, one "
            f"leaf per rail per unit, uplinks spread evenly over {tree.spines} spines; two tiers of {radix}-port "
            f"{name} switches reach up to {radix * radix // 2:,} ports."
        )
    else:
        why = (
            f"Three tiers, as NVIDIA's DGX SuperPOD design: {sus} scalable units need more leaves than two tiers "
            f"of {radix}-port {name} switches connect ({radix * radix // 2:,} ports at most), so each unit gets its "
            "own spines and a core tier joins the units."
        )
    systems, displaced = slots
    last = systems + displaced - (sus - 1) * su_systems
    if 0 < last < su_systems and not shared:
        why += (
            f" The last unit holds {last} of its {su_systems} racks: its spines and cores are built in full, "
            "so racks can be added later without recabling, and leaves only for the racks present (a leaf serves "
            "one rack's trays)."
        )
    elif 0 < last < su_systems:
        ufm = (
            f" The UFM fabric managers take {displaced} system slot(s) of leaf ports in the first unit, so "
            f"{systems} systems need {systems + displaced} slots."
            if displaced
            else ""
        )
        why += (
            f"{ufm} The last unit holds {last} of its {su_systems} system slots; its leaves and uplinks are "
            "built in full, as the reference design does, so routing stays balanced and the unit can be filled later."
        )
    return why


def oversubscribed_reason(ratio: float) -> str:
    """The stated oversubscription of a requested oversubscribed upper tier (Meta's AI zones: non-blocking inside
    a zone, oversubscribed aggregation between zones)."""
    return (
        f" Oversubscribed {ratio:g}:1 above the spines (requested with compute_upper_oversubscription): each spine "
        f"keeps {ratio:g} times as many ports toward its leaves as toward the cores, so traffic between units gets "
        f"1/{ratio:g} of the bandwidth it has inside a unit; place communicating groups inside a unit."
    )
