"""Media choice: for each link group, the cable (and the transceiver at each end) that spans its length.

Copper before optics, multimode before single-mode: the cheapest and lowest-power medium that spans the run wins.
Every optical link needs a transceiver at each end plus one fibre; twin-port modules carry two links.
"""

from __future__ import annotations

import math
from dataclasses import replace

from engine.catalog.parts import Part, PartsCatalog
from engine.physical.fabric.types import LinkGroup

__all__ = ["MEDIA_ORDER", "choose_media"]

# Media tried shortest-reach first: the cheapest and lowest-power medium that spans the run wins.
MEDIA_ORDER = ("dac", "acc", "mmf", "smf")


def _module(parts: PartsCatalog, port_type: str, medium: str, length_m: float) -> Part | None:
    """The shortest-reach module of the medium that spans the run (DR before FR: less power and cost)."""
    fits = [
        p
        for p in parts.of_kind("transceiver")
        if p.text("port_type") == port_type and p.text("medium") == medium and p.num("reach_m") >= length_m
    ]
    return min(fits, key=lambda p: p.num("reach_m")) if fits else None


def _cable(parts: PartsCatalog, medium: str, length_m: float) -> tuple[Part, int] | None:
    """The shortest orderable cable of the medium that spans the run (MPO cords to 500 m, LC runs beyond)."""
    best: tuple[Part, int] | None = None
    for part in parts.of_kind("cable"):
        if part.text("medium") != medium:
            continue
        length = next((int(x) for x in part.spec.get("lengths_m", []) if x >= length_m), None)
        if length is not None and (best is None or length < best[1]):
            best = (part, length)
    return best


def _modules(devices: int, links: int, link_gbps: float, module: Part) -> int:
    """Modules at one end: per device, enough cages for its links' bandwidth (a twin-port module carries 2)."""
    if devices <= 0 or links <= 0:
        return 0
    capacity_gbps = module.num("links_per_module", 1) * module.num("link_gbps", link_gbps)
    per_device_links = math.ceil(links / devices)
    return devices * math.ceil(per_device_links * link_gbps / capacity_gbps - 1e-9)


def choose_media(group: LinkGroup, parts: PartsCatalog) -> LinkGroup:
    """The first medium (copper before optics, multimode before single-mode) whose reach spans the run and for
    which both ends have a part; copper needs OSFP cages at both ends (DAC/ACC have the modules built in)."""
    cables = math.ceil(group.links * group.link_gbps / group.native_gbps - 1e-9)
    if group.a_port_type == "rj45_1g" or group.b_port_type == "rj45_1g":
        found = _cable(parts, "copper_rj45", group.length_m)
        if found:
            part, length = found
            return replace(group, medium="copper_rj45", cable_part=part.id, cable_length_m=length, cables=group.links)
    for medium in MEDIA_ORDER:
        if medium in ("dac", "acc"):
            if not (group.a_port_type.startswith("osfp") and group.b_port_type.startswith("osfp")):
                continue
            found = _cable(parts, medium, group.length_m)
            if found:
                part, length = found
                count = math.ceil(group.links / part.num("links_per_cable", 1))
                power = count * (part.power_max_w or 0.0)  # the whole cable's watts (both ends)
                return replace(
                    group, medium=medium, cable_part=part.id, cable_length_m=length, cables=count, optics_w=power
                )
            continue
        a_mod = _module(parts, group.a_port_type, medium, group.length_m)
        b_mod = _module(parts, group.b_port_type, medium, group.length_m)
        fibre = _cable(parts, medium, group.length_m)
        if a_mod is None or b_mod is None or fibre is None:
            continue
        a_n = _modules(group.a_devices, group.links, group.link_gbps, a_mod)
        b_n = _modules(group.b_devices, group.links, group.link_gbps, b_mod)
        power = a_n * (a_mod.power_max_w or 0.0) + b_n * (b_mod.power_max_w or 0.0)
        return replace(
            group,
            medium=medium,
            cable_part=fibre[0].id,
            cable_length_m=fibre[1],
            cables=cables,
            a_module_part=a_mod.id,
            a_modules=a_n,
            b_module_part=b_mod.id,
            b_modules=b_n,
            optics_w=power,
        )
    return replace(group, medium="unavailable", cables=cables)
