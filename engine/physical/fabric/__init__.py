"""Fabric stage: the compute, storage, in-band and out-of-band networks of a built cluster, down to cables and
transceivers.

Compute fabric (NVIDIA DGX SuperPOD reference architectures): scalable units of `su_systems` systems; NIC i of
every system goes to the rail-i leaf of its SU (rail-optimised); a leaf serves whole systems only, as many as its
down ports allow (an NVL72 rack's 18 trays per rail, 32 DGX); the full SU fabric is built even when the SU is
partly populated; UFM links take spare leaf ports or, where leaves have none, the slot of one system. Spines and
cores follow the Clos rules in `engine.physical.clos`. Multi-plane designs (B300, GB300) build one identical
fabric per plane.

Every link group then gets a length from the rack geometry (one row per SU with its network rack at the end,
spines and cores in a central network row), hence a medium (DAC, active copper, multimode, single-mode), hence
cables and transceivers from the parts catalog.

Modules, one job each: `types` (the result: Fabric, LinkGroup, SwitchTier, FabricPlan, and the row Geometry),
`ports` (radix and leaf port arithmetic shared by every fabric), `compute` (the rail-optimised compute fabric),
`edge` (storage and in-band, separate or converged), `oob` (out-of-band management), `media` (cable and
transceiver choice per link group), `stage` (`size_fabrics`, which runs them in order).
"""

from engine.physical.fabric.stage import size_fabrics
from engine.physical.fabric.types import (
    FABRIC_LINK_GBPS,
    FABRIC_SWITCH,
    Fabric,
    FabricPlan,
    LinkGroup,
    SwitchTier,
)

__all__ = [
    "FABRIC_LINK_GBPS",
    "FABRIC_SWITCH",
    "Fabric",
    "FabricPlan",
    "LinkGroup",
    "SwitchTier",
    "size_fabrics",
]
