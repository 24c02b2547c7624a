"""Optics power: the watts of every transceiver (and active cable) that no device's power figure already covers,
so IT power counts the network's optics.

A switch's maximum power is budgeted "with optics" where its source says so (QM9700: 1,720 W with optics vs 747 W
with passive DAC; SN5610/SN5600 with 64 optics; SN4600C's typical figure includes its 100G optics), so its own
modules are not added again (`power_max_includes_optics` in the catalog). Every other end (GPU systems, UFM,
storage and management servers, and switches without such a figure) adds its modules at their LinkX maximum.
An active copper cable's watts are the whole cable's, half per end.
"""

from __future__ import annotations

from engine.catalog.parts import PartsCatalog
from engine.physical.fabric.types import Fabric, LinkGroup

__all__ = ["uncovered_optics_w"]


def _covered(fabric: Fabric, end: str, parts: PartsCatalog) -> bool:
    """True when `end` (a switch tier of this fabric) has a power figure that already includes its optics."""
    part = next((t.part for t in fabric.switches if t.tier == end), None)
    return part is not None and bool(parts[part].spec.get("power_max_includes_optics", False))


def _group_w(fabric: Fabric, group: LinkGroup, parts: PartsCatalog) -> float:
    a_covered, b_covered = _covered(fabric, group.a, parts), _covered(fabric, group.b, parts)
    watts = 0.0
    if group.a_module_part and not a_covered:
        watts += group.a_modules * (parts[group.a_module_part].power_max_w or 0.0)
    if group.b_module_part and not b_covered:
        watts += group.b_modules * (parts[group.b_module_part].power_max_w or 0.0)
    if group.medium in ("dac", "acc") and group.cable_part:
        per_end = group.cables * (parts[group.cable_part].power_max_w or 0.0) / 2
        watts += per_end * ((not a_covered) + (not b_covered))
    return watts


def uncovered_optics_w(fabrics: list[Fabric], parts: PartsCatalog) -> float:
    """Watts of the optics in every link group of `fabrics` that their devices' power figures leave out."""
    return sum(_group_w(f, g, parts) for f in fabrics for g in f.links)
