"""What the fabric stage produces: link groups, switch tiers, one Fabric per network and the FabricPlan of all
four, plus the row Geometry that turns a link's distance class into a length.

Plain frozen records with `as_dict` for the plan JSON, so the facility, BOM and topology stages (and the outputs)
read the fabrics without knowing how they were sized.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = [
    "FABRIC_LINK_GBPS",
    "FABRIC_SWITCH",
    "OOB_AGGREGATION_SWITCH",
    "OOB_SWITCH",
    "Fabric",
    "FabricPlan",
    "Geometry",
    "LinkGroup",
    "SwitchTier",
    "empty_fabric",
]

# Request `hardware.fabric` -> switch part and the link speed it runs at.
FABRIC_SWITCH = {"infiniband-ndr": "qm9700", "infiniband-xdr": "q3400", "roce-400g": "sn5600", "roce-800g": "sn5600"}
FABRIC_LINK_GBPS = {"infiniband-ndr": 400.0, "infiniband-xdr": 800.0, "roce-400g": 400.0, "roce-800g": 800.0}
OOB_AGGREGATION_SWITCH = "sn4600c"
OOB_SWITCH = "sn2201"


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
    reason: str = ""  # one line for users: why this many tiers (or no switch at all)
    super_core: int = 0  # fourth tier (0 in fabrics of three tiers or fewer)
    core_super_links: int = 0
    design: str = ""  # which design connects it: "fat-tree", "multi-plane", "four-tier", "oversubscribed"
    sus_per_pod: float = 0.0  # scalable units under one pod's spines (campus run lengths; not in the plan JSON)
    sus_per_super_pod: float = 0.0  # scalable units under one super-pod's cores (four tiers)

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
            "super_core": self.super_core,
            "core_super_links": self.core_super_links,
            "design": self.design,
            "cables": self.cables,
            "transceivers": self.transceivers,
            "optics_w": round(self.optics_w, 1),
            "link_groups": [g.as_dict() for g in self.links],
            "notes": list(self.notes),
            "reason": self.reason,
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
    su_systems: int
    displaced_systems: int
    compute_needed: bool
    problems: list[str] = field(default_factory=list)
    management_reason: str = ""
    compute_design: str = "reference"  # "none", "below_su" (smallest design) or "reference" (whole SUs)

    def fabrics(self) -> list[Fabric]:
        return [self.compute, self.storage, self.inband, self.oob]

    def switch_tiers(self) -> list[SwitchTier]:
        return [t for f in self.fabrics() for t in f.switches]

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {f.name: f.as_dict() for f in self.fabrics()}
        out["scalable_units"] = self.scalable_units
        out["su_systems"] = self.su_systems
        out["ufm_appliances"] = self.ufm_appliances
        out["management_servers"] = self.management_servers
        out["systems_displaced_by_ufm"] = self.displaced_systems
        out["compute_fabric_needed"] = self.compute_needed
        out["management_reason"] = self.management_reason
        return out


def empty_fabric(name: str, note: str, reason: str = "") -> Fabric:
    """A network that is not built (no compute fabric needed, converged in-band, or no feasible design); the
    reason for users defaults to the note."""
    return Fabric(name, "none", None, 0.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, notes=(note,), reason=reason or note)
