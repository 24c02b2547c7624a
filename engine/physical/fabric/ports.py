"""Port arithmetic every fabric shares: a switch's radix at a link speed, the most node-facing ports a leaf can
have at an oversubscription ratio, and the switch tiers of a sized Clos.

Kept apart from `engine.physical.clos` (which knows no product) because the radix reads a switch part's ports.
"""

from __future__ import annotations

import math

from engine.catalog.parts import Part
from engine.physical.clos import Clos
from engine.physical.fabric.types import SwitchTier

__all__ = ["leaf_down_ports", "switch_radix", "switch_tiers"]


def switch_radix(switch: Part, link_gbps: float) -> int:
    """Ports at the link speed: a faster port splits into several slower ones (e.g. 1 x 400G -> 2 x 200G)."""
    port = switch.num("port_gbps")
    if link_gbps >= port:
        return int(switch.num("ports"))
    split = max(link_gbps, switch.num("min_split_gbps", port))
    return int(switch.num("ports") * port // split)


def leaf_down_ports(radix: int, ratio: float) -> int:
    """Most node-facing ports a leaf can have while keeping down/up <= ratio: d + ceil(d / ratio) <= radix."""
    down = int(radix * ratio / (ratio + 1))
    while down > 0 and down + math.ceil(down / ratio - 1e-9) > radix:
        down -= 1
    return down


def switch_tiers(name: str, switch: str, tree: Clos, planes: int) -> tuple[SwitchTier, ...]:
    """Leaves sit in each SU's row; spines, cores and super-cores in the central network row."""
    out = [SwitchTier(name, "leaf", switch, tree.leaves * planes, "row")]
    if tree.spines:
        out.append(SwitchTier(name, "spine", switch, tree.spines * planes, "central"))
    if tree.cores:
        out.append(SwitchTier(name, "core", switch, tree.cores * planes, "central"))
    if tree.super_cores:
        out.append(SwitchTier(name, "super-core", switch, tree.super_cores * planes, "central"))
    return tuple(out)
