"""Fabric stage: the compute, storage, in-band and out-of-band networks of a built cluster, down to cables and
transceivers.

Compute fabric (NVIDIA DGX SuperPOD reference architectures): NIC i of every system goes to the rail-i leaf of
its SU (rail-optimised). The SU follows from the switch: a non-blocking leaf has radix/2 ports down at the link
speed, one leaf per rail takes a whole SU, so an SU holds (radix/2) / NICs-per-rail systems (QM9700 at 400G: 32
DGX; Q3400 at 800G: 72; SN5600 at 400G: 64); NVL72 spine-leaf groups are sized to the rack instead (a leaf takes
a rack's 18 trays per rail). The full SU fabric is built even when the SU is partly populated; UFM links take
spare leaf ports or, where leaves have none, the slot of one system. Spines and cores follow the Clos rules in
`engine.physical.clos`. A NIC faster than the fabric's link splits over planes (B300 and GB300 on 400G
Spectrum-X), one identical fabric per plane.

Every link group then gets a length from the rack geometry (one row per SU with its network rack at the end,
spines and cores in a central network row), hence a medium (DAC, active copper, multimode, single-mode), hence
cables and transceivers from the parts catalog.

Modules, one job each: `types` (the result: Fabric, LinkGroup, SwitchTier, FabricPlan, and the row Geometry),
`ports` (radix and leaf port arithmetic shared by every fabric), `compute` (the rail-optimised compute fabric),
`small` (the compute fabric below one SU: one tier of rail switches, two only when a rail outgrows a switch),
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
