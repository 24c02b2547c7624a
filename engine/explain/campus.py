"""`explain` entries for frontier scale: which compute-fabric design connects the cluster, and the campus (halls,
buildings and the runs between them).

Read from the physical build after it is made (the import goes one way, explain -> physical), written for users:
the formula, the inputs the plan used and the public sources.
"""

from __future__ import annotations

from engine.assumptions.registry import Assumptions
from engine.physical.build import PhysicalBuild

__all__ = ["campus_explain", "design_explain"]

Entry = dict[str, object]

DESIGN_SRC = (
    "Al-Fares, Loukissas and Vahdat, 'A Scalable, Commodity Data Center Network Architecture' (SIGCOMM 2008): a "
    "k-port fat tree reaches k^2/2 ports in two tiers, k^3/4 in three and 2 (k/2)^4 in four; NVIDIA DGX SuperPOD "
    "Reference Architectures (DGX H100 RA-11333-001, DGX B300, GB300 NVL72 Enterprise RA): rail-optimised "
    "scalable units, a NIC faster than the link split over planes; Gangidi et al., 'RDMA over Ethernet for "
    "Distributed AI Training at Meta Scale' (ACM SIGCOMM 2024): non-blocking zones joined by an oversubscribed "
    "aggregation tier"
)
CAMPUS_SRC = (
    "Meta @Scale Networking 2025, 'Scaling AI network infrastructure to 100K GPUs' (four data halls to a "
    "building, AI zones of 2,000-4,000 GPUs per hall); NVIDIA DGX SuperPOD Reference Architecture, GB200 "
    "(RA-11338-001, 2025-06-16): 1.2 MW per scalable unit of 8 NVL72 racks; NVIDIA DGX SuperPOD Data Center Design, "
    "DGX H100: 800 x 1200 mm racks and 1.2 m aisles"
)
MEDIA_SRC = (
    "NVIDIA LinkX product documentation: MMA4Z00-NS 2 x SR4 multimode 50 m, MMS4X00-NM 2 x DR4 single-mode 500 m, "
    "MMS4X50-NM 2 x FR4 single-mode 2 km (rev 1.2, Nov 2023), MMS4A00-XM XDR 2 x DR4 500 m"
)


def _entry(formula: str, inputs: dict[str, object], source: str) -> Entry:
    return {"formula": formula, "inputs": inputs, "source": source}


def design_explain(pb: PhysicalBuild, a: Assumptions) -> dict[str, Entry]:
    """Which design connects the compute fabric and why (one line for users)."""
    c = pb.fabric.compute
    if not c.leaf:
        return {}
    design = {
        "fat-tree": "a rail-optimised fat tree of the reference planes",
        "multi-plane": "more planes: each NIC's line rate split over more planes of a slower link and higher radix",
        "four-tier": "a fourth switch tier above the cores, non-blocking",
        "oversubscribed": "spines oversubscribed toward the cores, as requested",
    }.get(c.design, "the smallest design below one scalable unit")
    return {
        "fabric.compute.design": _entry(
            "the first design that connects every GPU: the reference planes in at most three tiers; then more "
            "planes while the NIC can split; then a fourth tier; the spines oversubscribed toward the cores only "
            "when the request sets compute_upper_oversubscription above 1; no design = the plan is infeasible "
            "with that reason",
            {
                "design": design,
                "why": c.reason,
                "tiers": c.tiers,
                "planes": c.planes,
                "switches": c.leaf + c.spine + c.core + c.super_core,
                "compute_upper_oversubscription": a["compute_upper_oversubscription"],
            },
            DESIGN_SRC,
        )
    }


def campus_explain(pb: PhysicalBuild, a: Assumptions) -> dict[str, Entry]:
    """Halls, buildings and the runs between them."""
    campus = pb.campus
    if campus is None:
        return {}
    inputs: dict[str, object] = {
        "racks": len(pb.site.racks),
        "hall_max_it_mw": a["hall_max_it_mw"],
        "hall_max_racks": a["hall_max_racks"],
        "halls_per_building": a["halls_per_building"],
    }
    return {
        "racks.campus.halls": _entry(
            "racks packed in layout order (each scalable unit's row, then the network and management rows) into "
            "data halls: a row joins the current hall while its racks and IT kW (every rack at maximum draw) fit "
            "the hall's limits, else opens a hall; a row larger than an empty hall is split; buildings = "
            "ceil(halls / halls_per_building)",
            {**inputs, "halls": len(campus.halls), "buildings": campus.buildings},
            CAMPUS_SRC,
        ),
        "racks.campus.distances_m": _entry(
            "farthest run to the network core at each scale (fibre follows duct routes at right angles): in a "
            "hall laid out about square, ceil(rows / 2) x row_pitch_m + racks per row x rack width / 2 + "
            "cable_slack_m; a building, + (halls in it - 1) / 2 x hall_pitch_m; the campus (buildings in a "
            "near-square grid), + ((columns - 1) / 2 + (rows - 1) / 2) x building_pitch_m. Links that join a "
            "pod stay in its hall; those that join super-pods or the whole cluster take the building or campus "
            "run, and the shortest-reach optic that spans it (multimode 50 m, 2 x DR4 500 m, 2 x FR4 2 km)",
            {
                "within_hall_m": round(campus.hall_m, 1),
                "hall_to_hall_m": round(campus.building_m, 1),
                "building_to_building_m": round(campus.campus_m, 1),
                "hall_pitch_m": a["hall_pitch_m"],
                "building_pitch_m": a["building_pitch_m"],
                "optics_kw": round(pb.site.optics_kw, 1),
            },
            CAMPUS_SRC + "; " + MEDIA_SRC,
        ),
    }
