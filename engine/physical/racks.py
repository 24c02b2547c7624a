"""Rack layout: GPU systems, switches, management servers and storage packed into racks under U and kW budgets.

One row per scalable unit (its compute racks, then the row's network rack), then a central row of spine/core
switches and management racks (UFM, head nodes, storage). Each rack gets its circuits (N+1 or N+N feeds) and the
cooling its load needs; the facility stage sums what the layout holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import System
from engine.catalog.parts import Part, PartsCatalog
from engine.physical.cluster import ClusterBuild, usable_feed_kw
from engine.physical.cooling import cooling_method_for
from engine.physical.fabric import FabricPlan
from engine.physical.rack_devices import RackDevice, item_dict, rack_devices

__all__ = ["Rack", "RackLayout", "feeds_for", "lay_out_racks"]


@dataclass(frozen=True)
class Rack:
    """One rack of the layout: what is in it and what it draws (at maximum) for circuits and cooling."""

    id: str
    row: int
    role: str  # compute | network | management
    items: tuple[tuple[str, int], ...]  # (catalog id, quantity)
    kw: float
    rack_units: int
    weight_kg: float
    feeds: int
    cooling: str

    def as_dict(self, devices: dict[str, RackDevice] | None = None, cache: dict | None = None) -> dict[str, object]:
        """The rack as plan JSON; each item carries its height, kind and name from `devices` when given. Racks
        of the same items share one items list through `cache` (a million-GPU layout has tens of thousands)."""
        devices = devices or {}
        items = cache.get(self.items) if cache is not None else None
        if items is None:
            items = [item_dict(i, q, devices.get(i)) for i, q in self.items]
            if cache is not None:
                cache[self.items] = items
        return {
            "id": self.id,
            "row": self.row,
            "role": self.role,
            "items": items,
            "kw": round(self.kw, 3),
            "rack_units": self.rack_units,
            "weight_kg": round(self.weight_kg, 1),
            "feeds": self.feeds,
            "cooling": self.cooling,
        }


@dataclass(frozen=True)
class RackLayout:
    """Every rack of the build, the usable kW of one feed, the rack height and what each placed device is."""

    racks: tuple[Rack, ...]
    usable_feed_kw: float
    rack_height_u: int
    unknown_power: tuple[str, ...]  # parts placed whose power the catalog does not publish (counted as 0 W)
    devices: tuple[tuple[str, RackDevice], ...]  # (catalog id, device) for every item placed in a rack


def feeds_for(kw: float, power_redundancy: str, usable_kw: float) -> int:
    """N+1: enough feeds for the load plus one spare (DGX H100 40.8 kW -> 2 + 1 = 3); N+N: every feed doubled."""
    needed = max(1, math.ceil(kw / usable_kw - 1e-9))
    return 2 * needed if power_redundancy == "n+n" else needed + 1


def _pack(items: list[tuple[str, int, int, float, float]], usable_u: int, max_kw: float) -> list[list[tuple]]:
    """First-fit by U and kW, in the given order: items are (id, quantity, U each, kW each, kg each). Each rack is
    a list of (id, count, U, kW, kg) chunks; a chunk takes as many units as the rack's U and kW left allow, so
    packing costs one step per rack, not per device (a million-GPU build places over 100,000 switches)."""
    racks: list[list[tuple]] = []
    used_u = used_kw = 0.0
    for item_id, qty, u_each, kw_each, kg_each in items:
        left = qty
        while left > 0:
            fit = left
            if racks:
                if u_each > 0:
                    fit = min(fit, int((usable_u - used_u) // u_each))
                if kw_each > 0:
                    fit = min(fit, int((max_kw - used_kw + 1e-9) // kw_each))
            if not racks or fit <= 0:
                racks.append([])
                used_u = used_kw = 0.0
                fit = 1 if u_each > usable_u or kw_each > max_kw + 1e-9 else left
                if u_each > 0:
                    fit = min(fit, max(1, int(usable_u // u_each)))
                if kw_each > 0:
                    fit = min(fit, max(1, int((max_kw + 1e-9) // kw_each)))
            racks[-1].append((item_id, fit, u_each, kw_each, kg_each))
            used_u += fit * u_each
            used_kw += fit * kw_each
            left -= fit
    return racks


def _rack(
    rid: str,
    row: int,
    role: str,
    content: list[tuple],
    redundancy: str,
    usable_kw: float,
    empty_kg: float,
    system: System,
    assumptions: Assumptions,
) -> Rack:
    """One rack from its chunks (id, count, U, kW, kg each)."""
    counts: dict[str, int] = {}
    kw = u = kg = 0.0
    for item_id, count, u_each, kw_each, kg_each in content:
        counts[item_id] = counts.get(item_id, 0) + count
        kw += count * kw_each
        u += count * u_each
        kg += count * kg_each
    cooling = cooling_method_for(kw, system if role == "compute" else _AIR_SYSTEM, assumptions)
    feeds = feeds_for(kw, redundancy, usable_kw)
    return Rack(rid, row, role, tuple(counts.items()), kw, int(u), empty_kg + kg, feeds, cooling)


@dataclass(frozen=True)
class _AirSystem:
    cooling: str = "air"


_AIR_SYSTEM = _AirSystem()


class _Packer:
    """The racks laid out so far and what packing needs to know (budgets, catalog, the parts without a power)."""

    def __init__(self, system: System, parts: PartsCatalog, assumptions: Assumptions) -> None:
        self.system, self.parts, self.assumptions = system, parts, assumptions
        self.rack = parts.of_kind("rack")[0]
        self.usable_kw = usable_feed_kw(assumptions)
        self.usable_u = self.rack.rack_units - assumptions["rack_reserved_u"]
        self.empty_kg = self.rack.weight_kg or 0.0
        self.racks: list[Rack] = []
        self.unknown: list[str] = []
        self.made: dict[tuple, Rack] = {}  # racks built so far by content: the same content is built once

    def item(self, part_id: str, quantity: int) -> tuple[str, int, int, float, float]:
        """(id, quantity, U, kW, kg) of a catalog part; a part without a published power counts 0 W and is named."""
        part = self.parts[part_id]
        if part.power_max_w is None:
            self.unknown.append(part_id)
        return part_id, quantity, part.rack_units, (part.power_max_w or 0.0) / 1000.0, part.weight_kg or 0.0

    def compute_row(self, row: int, systems: int, per_rack: int) -> None:
        """GPU systems of one row, `per_rack` to a rack, fed as the system's power redundancy requires."""
        phys = self.parts.systems[self.system.id]
        unit = (self.system.id, 1, self.system.rack_units, self.system.max_power_kw, phys.weight_kg)
        made = self.made  # racks differ only in their id and row (and the last one's fill): build each once
        for col, first in enumerate(range(0, systems, per_rack), start=1):
            count = min(per_rack, systems - first)
            rid = f"r{row:02d}-c{col:02d}"
            key = ("compute", count)
            if key not in made:
                made[key] = self._rack(rid, row, "compute", [unit] * count, phys.power_redundancy)
            r = made[key]
            self.racks.append(Rack(rid, row, r.role, r.items, r.kw, r.rack_units, r.weight_kg, r.feeds, r.cooling))

    def pack(self, row: int, tag: str, role: str, items: list[tuple[str, int, int, float, float]]) -> None:
        """Network or management devices first-fit into n+1-fed racks r<row>-<tag><n> under the network kW cap;
        racks of the same content are built once and copied under their own id."""
        max_kw = self.assumptions["network_rack_max_kw"]
        made = self.made
        for n_idx, content in enumerate(_pack(items, self.usable_u, max_kw), start=1):
            rid = f"r{row:02d}-{tag}{n_idx:02d}"
            key = (role, *content)
            if key not in made:
                made[key] = self._rack(rid, row, role, content, "n+1")
            r = made[key]
            self.racks.append(Rack(rid, row, r.role, r.items, r.kw, r.rack_units, r.weight_kg, r.feeds, r.cooling))

    def _rack(self, rid: str, row: int, role: str, content: list[tuple], redundancy: str) -> Rack:
        return _rack(rid, row, role, content, redundancy, self.usable_kw, self.empty_kg, self.system, self.assumptions)


def lay_out_racks(
    build: ClusterBuild,
    system: System,
    fabric: FabricPlan,
    storage_part: Part | None,
    storage_units: int,
    parts: PartsCatalog,
    assumptions: Assumptions,
) -> RackLayout:
    """Compute rows (systems per rack from the build, then the row's share of leaf switches), a central row of
    spine/core switches, and management racks for UFM, head nodes and storage; every rack with feeds and cooling.
    Below one scalable unit one row holds it all: the compute racks, then network racks shared by every switch,
    server and storage device."""
    packer = _Packer(system, parts, assumptions)
    rows = max(1, fabric.scalable_units)
    remaining = build.systems
    tiers = fabric.switch_tiers()
    management = _management_items(packer, fabric, storage_part, storage_units)
    if rows == 1 and build.systems < system.su_systems:
        # Below one SU: every switch, server and storage device shares the row's network racks (no central row).
        packer.compute_row(1, build.systems, build.systems_per_rack)
        packer.pack(1, "n", "network", [packer.item(t.part, t.count) for t in tiers] + management)
        return _layout(packer, system, parts)
    for row in range(1, rows + 1):
        in_row = min(remaining, fabric.su_systems) if row < rows else remaining
        remaining -= in_row
        packer.compute_row(row, in_row, build.systems_per_rack)
        # Leaf switches spread evenly over the rows, the first rows taking the remainder.
        leaves = [
            packer.item(t.part, t.count // rows + (1 if row <= t.count % rows else 0))
            for t in tiers
            if t.placement == "row"
        ]
        packer.pack(row, "n", "network", leaves)
    central_row = rows + 1
    packer.pack(central_row, "n", "network", [packer.item(t.part, t.count) for t in tiers if t.placement == "central"])
    packer.pack(central_row, "m", "management", management)
    return _layout(packer, system, parts)


def _management_items(
    packer: _Packer, fabric: FabricPlan, storage_part: Part | None, storage_units: int
) -> list[tuple[str, int, int, float, float]]:
    """UFM appliances, head nodes and storage, as packing items."""
    management = []
    if fabric.ufm_appliances:
        management.append(packer.item("ufm-3.1", fabric.ufm_appliances))
    if fabric.management_servers:
        management.append(packer.item("mgmt-server-2s", fabric.management_servers))
    if storage_part is not None and storage_units:
        management.append(packer.item(storage_part.id, storage_units))
    return management


def _layout(packer: _Packer, system: System, parts: PartsCatalog) -> RackLayout:
    racks = tuple(packer.racks)
    return RackLayout(
        racks=racks,
        usable_feed_kw=packer.usable_kw,
        rack_height_u=packer.rack.rack_units,
        unknown_power=tuple(sorted(set(packer.unknown))),
        devices=rack_devices({i for r in racks for i, _ in r.items}, system, parts),
    )
