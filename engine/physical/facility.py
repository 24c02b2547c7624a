"""Facility stage: IT and facility power, rack load, cooling method and heat split; then the rack layout.

One power model (`FacilityPower`): it_kw = systems_kw + network_kw + storage_kw + management_kw and
facility_kw = it_kw x PUE, every part at maximum rated draw because circuits and cooling are sized for peak.
`size_facility` knows the GPU systems only (every candidate system is ranked on it); `size_site` lays out the
chosen system's racks and fills in the network, storage and management parts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import System
from engine.catalog.parts import Part, PartsCatalog
from engine.physical.cluster import ClusterBuild, usable_feed_kw
from engine.physical.fabric import FabricPlan
from engine.physical.rack_devices import RackDevice, item_dict, rack_devices
from engine.request.spec import SiteSpec
from engine.result.physical import CoolingSummary, PowerSummary

__all__ = [
    "KW_PER_TON",
    "FacilityPower",
    "FacilityResult",
    "Rack",
    "SiteResult",
    "airflow_cfm",
    "choose_cdus",
    "coolant_lpm",
    "cooling_method_for",
    "feeds_for",
    "size_facility",
    "size_site",
]

# One ton of refrigeration = 12,000 BTU/h = 3.517 kW (facility.md section 3).
KW_PER_TON = 3.517


@dataclass(frozen=True)
class FacilityPower:
    """The one facility power: named IT parts (kW at maximum draw), their sum and the facility draw at the PUE.

    Parts not laid out yet are 0 with `laid_out` False (a candidate system's power counts its GPU systems only).
    """

    systems_kw: float
    pue: float
    network_kw: float = 0.0
    storage_kw: float = 0.0
    management_kw: float = 0.0
    laid_out: bool = False

    @property
    def it_kw(self) -> float:
        return self.systems_kw + self.network_kw + self.storage_kw + self.management_kw

    @property
    def facility_kw(self) -> float:
        return self.it_kw * self.pue


@dataclass(frozen=True)
class FacilityResult:
    """Power and cooling for the built cluster."""

    power: FacilityPower
    per_rack_kw: float
    pue_from_site: bool
    cooling_method: str
    liquid_kw: float
    air_kw: float
    tons: float

    @property
    def it_kw(self) -> float:
        return self.power.it_kw

    @property
    def facility_kw(self) -> float:
        return self.power.facility_kw

    @property
    def pue(self) -> float:
        return self.power.pue

    def power_summary(self) -> PowerSummary:
        """The plan's `power` before a rack layout: GPU systems only (the plan's notes say so)."""
        return PowerSummary(
            it_kw=self.it_kw,
            facility_kw=self.facility_kw,
            per_rack_kw=self.per_rack_kw,
            pue=self.pue,
            systems_kw=self.power.systems_kw,
        )

    def cooling_summary(self) -> CoolingSummary:
        return CoolingSummary(method=self.cooling_method, liquid_kw=self.liquid_kw, air_kw=self.air_kw, tons=self.tons)


def cooling_method_for(per_rack_kw: float, system: System, assumptions: Assumptions) -> str:
    """Liquid-cooled systems need direct liquid cooling; otherwise the rack load picks the method
    (facility.md section 4 bands: air, air with containment, rear-door heat exchangers, direct liquid)."""
    if system.cooling == "liquid":
        return "liquid"
    if per_rack_kw <= assumptions["cooling_air_max_kw"]:
        return "air"
    if per_rack_kw <= assumptions["cooling_containment_max_kw"]:
        return "air_containment"
    if per_rack_kw <= assumptions["cooling_rdhx_max_kw"]:
        return "rdhx"
    return "liquid"


def size_facility(
    build: ClusterBuild, system: System, requested_cooling: str, site: SiteSpec, assumptions: Assumptions
) -> FacilityResult:
    """it_kw = systems_kw = systems x max kW (GPU systems only); facility_kw = it_kw x PUE; heat split by method;
    tons = kW / 3.517."""
    it_kw = build.systems * system.max_power_kw
    per_rack_kw = min(build.systems, build.systems_per_rack) * system.max_power_kw
    method = cooling_method_for(per_rack_kw, system, assumptions)
    if requested_cooling == "rdhx" and method in ("air", "air_containment"):
        method = "rdhx"
    if method == "liquid":
        air_kw = it_kw * assumptions["liquid_residual_air_fraction"]
        liquid_kw = it_kw - air_kw
    else:
        # Rear doors move rack exhaust heat into water, but it leaves the equipment as air: counted as air here.
        air_kw, liquid_kw = it_kw, 0.0
    if site.pue is not None:
        pue, from_site = site.pue, True
    else:
        pue, from_site = assumptions[f"pue_{method}"], False
    return FacilityResult(
        power=FacilityPower(systems_kw=it_kw, pue=pue),
        per_rack_kw=per_rack_kw,
        pue_from_site=from_site,
        cooling_method=method,
        liquid_kw=liquid_kw,
        air_kw=air_kw,
        tons=it_kw / KW_PER_TON,
    )


# ------------------------------------------------------------------------------------- racks, circuits, cooling


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

    def as_dict(self, devices: dict[str, RackDevice] | None = None) -> dict[str, object]:
        """The rack as plan JSON; each item carries its height, kind and name from `devices` when given."""
        devices = devices or {}
        return {
            "id": self.id,
            "row": self.row,
            "role": self.role,
            "items": [item_dict(i, q, devices.get(i)) for i, q in self.items],
            "kw": round(self.kw, 3),
            "rack_units": self.rack_units,
            "weight_kg": round(self.weight_kg, 1),
            "feeds": self.feeds,
            "cooling": self.cooling,
        }


@dataclass(frozen=True)
class SiteResult:
    """Racks, power and cooling for the whole build (systems, network, storage, management)."""

    facility: FacilityResult
    racks: tuple[Rack, ...]
    usable_feed_kw: float
    feeds: int
    rack_pdus: int
    worst_feed_after_failure_kw: float
    airflow_cfm: float
    coolant_lpm: float
    cdu_part: str | None
    cdus: int
    unknown_power: tuple[str, ...] = ()
    rack_height_u: int = 0
    devices: tuple[tuple[str, RackDevice], ...] = ()  # (catalog id, device) for every item placed in a rack

    @property
    def power(self) -> FacilityPower:
        return self.facility.power

    @property
    def systems_kw(self) -> float:
        return self.power.systems_kw

    @property
    def network_kw(self) -> float:
        return self.power.network_kw

    @property
    def storage_kw(self) -> float:
        return self.power.storage_kw

    @property
    def management_kw(self) -> float:
        return self.power.management_kw

    def power_summary(self) -> PowerSummary:
        """The plan's `power` with every IT part of the rack layout (parts rounded to the watt for display)."""
        fac = self.facility
        return PowerSummary(
            it_kw=fac.it_kw,
            facility_kw=fac.facility_kw,
            per_rack_kw=fac.per_rack_kw,
            pue=fac.pue,
            systems_kw=round(self.systems_kw, 3),
            network_kw=round(self.network_kw, 3),
            storage_kw=round(self.storage_kw, 3),
            management_kw=round(self.management_kw, 3),
            usable_feed_kw=round(self.usable_feed_kw, 3),
            feeds=self.feeds,
            rack_pdus=self.rack_pdus,
            worst_feed_after_failure_kw=round(self.worst_feed_after_failure_kw, 3),
            power_not_published=self.unknown_power,
        )

    def cooling_summary(self) -> CoolingSummary:
        fac = self.facility
        return CoolingSummary(
            method=fac.cooling_method,
            liquid_kw=fac.liquid_kw,
            air_kw=fac.air_kw,
            tons=fac.tons,
            cdus=self.cdus,
            cdu_part=self.cdu_part,
            airflow_cfm=round(self.airflow_cfm, 1),
            coolant_lpm=round(self.coolant_lpm, 1),
            racks_by_method=_count_by(self.racks, "cooling"),
            laid_out=True,
        )

    def racks_dict(self) -> dict[str, object]:
        """Racks as plan JSON, with the rack height and each item's height, kind and name (for elevations)."""
        devices = dict(self.devices)
        return {
            "total": len(self.racks),
            "by_role": _count_by(self.racks, "role"),
            "rack_height_u": self.rack_height_u,
            "layout": [r.as_dict(devices) for r in self.racks],
        }


def _count_by(racks: tuple[Rack, ...], attr: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for rack in racks:
        key = getattr(rack, attr)
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


def feeds_for(kw: float, power_redundancy: str, usable_kw: float) -> int:
    """N+1: enough feeds for the load plus one spare (DGX H100 40.8 kW -> 2 + 1 = 3); N+N: every feed doubled."""
    needed = max(1, math.ceil(kw / usable_kw - 1e-9))
    return 2 * needed if power_redundancy == "n+n" else needed + 1


def airflow_cfm(air_kw: float, delta_t_f: float) -> float:
    """CFM = 3.16 x W / dT_F (sea level; facility.md section 3)."""
    return 3.16 * air_kw * 1000.0 / delta_t_f


def coolant_lpm(liquid_kw: float, delta_t_k: float) -> float:
    """L/min = 60 x kW / (4.18 x dT_K) (water; facility.md section 3)."""
    return 60.0 * liquid_kw / (4.18 * delta_t_k)


def choose_cdus(liquid_kw: float, cdu_parts: list[Part], assumptions: Assumptions) -> tuple[Part | None, int]:
    """Smallest capacity class that carries the load with at most cdu_max_units working units, plus spares."""
    if liquid_kw <= 0 or not cdu_parts:
        return None, 0
    ordered = sorted(cdu_parts, key=lambda p: p.num("capacity_kw"))
    for part in ordered:
        working = math.ceil(liquid_kw / part.num("capacity_kw") - 1e-9)
        if working <= assumptions["cdu_max_units"] or part is ordered[-1]:
            return part, working + assumptions["cdu_redundant_units"]
    return None, 0  # unreachable: the last class always returns


def _pack(items: list[tuple[str, int, int, float, float]], usable_u: int, max_kw: float) -> list[list[tuple]]:
    """First-fit by U and kW, in the given order: items are (id, quantity, U each, kW each, kg each)."""
    racks: list[list[tuple]] = []
    used_u = used_kw = 0.0
    for item_id, qty, u_each, kw_each, kg_each in items:
        for _ in range(qty):
            if not racks or used_u + u_each > usable_u or used_kw + kw_each > max_kw + 1e-9:
                racks.append([])
                used_u = used_kw = 0.0
            racks[-1].append((item_id, u_each, kw_each, kg_each))
            used_u += u_each
            used_kw += kw_each
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
    counts: dict[str, int] = {}
    for item in content:
        counts[item[0]] = counts.get(item[0], 0) + 1
    kw = sum(item[2] for item in content)
    u = sum(item[1] for item in content)
    kg = empty_kg + sum(item[3] for item in content)
    cooling = cooling_method_for(kw, system if role == "compute" else _AIR_SYSTEM, assumptions)
    return Rack(rid, row, role, tuple(counts.items()), kw, int(u), kg, feeds_for(kw, redundancy, usable_kw), cooling)


@dataclass(frozen=True)
class _AirSystem:
    cooling: str = "air"


_AIR_SYSTEM = _AirSystem()


def size_site(
    build: ClusterBuild,
    system: System,
    fabric: FabricPlan,
    storage_part: Part | None,
    storage_units: int,
    requested_cooling: str,
    site: SiteSpec,
    parts: PartsCatalog,
    assumptions: Assumptions,
) -> SiteResult:
    """Lay out racks (one row per SU: compute racks then the row's network rack; a central row of spine/core
    switches; management racks for UFM, head nodes and storage), then power, feeds, cooling and CDUs."""
    phys = parts.systems[system.id]
    rack = parts.of_kind("rack")[0]
    usable_kw = usable_feed_kw(assumptions)
    usable_u = rack.rack_units - assumptions["rack_reserved_u"]
    net_kw = assumptions["network_rack_max_kw"]
    unknown: list[str] = []

    def dev(part_id: str) -> tuple[int, float, float]:
        part = parts[part_id]
        if part.power_max_w is None:
            unknown.append(part_id)
        return part.rack_units, (part.power_max_w or 0.0) / 1000.0, part.weight_kg or 0.0

    racks: list[Rack] = []
    empty_kg = rack.weight_kg or 0.0

    def pack_racks(row: int, tag: str, role: str, items: list) -> None:
        """Pack network or management devices into n+1-fed racks r<row>-<tag><n>."""
        for n_idx, content in enumerate(_pack(items, usable_u, net_kw), start=1):
            rid = f"r{row:02d}-{tag}{n_idx:02d}"
            racks.append(_rack(rid, row, role, content, "n+1", usable_kw, empty_kg, system, assumptions))

    rows = max(1, fabric.scalable_units)
    per_rack = build.systems_per_rack
    remaining = build.systems
    row_tiers = [t for t in fabric.switch_tiers() if t.placement == "row"]
    central_tiers = [t for t in fabric.switch_tiers() if t.placement == "central"]
    for row in range(1, rows + 1):
        in_row = min(remaining, system.su_systems) if row < rows else remaining
        remaining -= in_row
        col = 0
        while in_row > 0:
            n = min(per_rack, in_row)
            in_row -= n
            col += 1
            content = [(system.id, system.rack_units, system.max_power_kw, phys.weight_kg)] * n
            racks.append(
                _rack(
                    f"r{row:02d}-c{col:02d}",
                    row,
                    "compute",
                    content,
                    phys.power_redundancy,
                    usable_kw,
                    empty_kg,
                    system,
                    assumptions,
                )
            )
        items = []
        for tier in row_tiers:
            share = tier.count // rows + (1 if row <= tier.count % rows else 0)
            u, kw, kg = dev(tier.part)
            items.append((tier.part, share, u, kw, kg))
        pack_racks(row, "n", "network", items)
    central_row = rows + 1
    items = []
    for tier in central_tiers:
        u, kw, kg = dev(tier.part)
        items.append((tier.part, tier.count, u, kw, kg))
    pack_racks(central_row, "n", "network", items)
    mgmt_items = []
    if fabric.ufm_appliances:
        u, kw, kg = dev("ufm-3.1")
        mgmt_items.append(("ufm-3.1", fabric.ufm_appliances, u, kw, kg))
    if fabric.management_servers:
        u, kw, kg = dev("mgmt-server-2s")
        mgmt_items.append(("mgmt-server-2s", fabric.management_servers, u, kw, kg))
    if storage_part is not None and storage_units:
        u, kw, kg = dev(storage_part.id)
        mgmt_items.append((storage_part.id, storage_units, u, kw, kg))
    pack_racks(central_row, "m", "management", mgmt_items)

    def kw_of(ids: set[str]) -> float:
        total = 0.0
        for r in racks:
            for item_id, qty in r.items:
                if item_id in ids:
                    part_kw = system.max_power_kw if item_id == system.id else (parts[item_id].power_max_w or 0) / 1e3
                    total += qty * part_kw
        return total

    switch_ids = {t.part for t in fabric.switch_tiers()}
    base = size_facility(build, system, requested_cooling, site, assumptions)
    power = FacilityPower(
        systems_kw=base.power.systems_kw,
        pue=base.pue,
        network_kw=kw_of(switch_ids),
        storage_kw=kw_of({storage_part.id}) if storage_part is not None else 0.0,
        management_kw=kw_of({"ufm-3.1", "mgmt-server-2s"}),
        laid_out=True,
    )
    it_kw = power.it_kw
    liquid_kw = sum(r.kw for r in racks if r.cooling == "liquid") * (1.0 - assumptions["liquid_residual_air_fraction"])
    air_kw = it_kw - liquid_kw
    # The rack layout's IT parts and liquid share replace the systems-only figures; PUE and cooling method stay.
    fac = replace(base, power=power, liquid_kw=liquid_kw, air_kw=air_kw, tons=it_kw / KW_PER_TON)
    cdu, cdus = choose_cdus(liquid_kw, parts.of_kind("cdu"), assumptions)
    worst = max(
        (r.kw / (r.feeds - 1) if phys.power_redundancy != "n+n" or r.role != "compute" else r.kw / (r.feeds // 2))
        for r in racks
    )
    return SiteResult(
        facility=fac,
        racks=tuple(racks),
        usable_feed_kw=usable_kw,
        feeds=sum(r.feeds for r in racks),
        rack_pdus=sum(r.feeds for r in racks),
        worst_feed_after_failure_kw=worst,
        airflow_cfm=airflow_cfm(air_kw, assumptions["air_delta_t_f"]),
        coolant_lpm=coolant_lpm(liquid_kw, assumptions["liquid_delta_t_k"]),
        cdu_part=cdu.id if cdu else None,
        cdus=cdus,
        unknown_power=tuple(sorted(set(unknown))),
        rack_height_u=rack.rack_units,
        devices=rack_devices({i for r in racks for i, _ in r.items}, system, parts),
    )
