"""Facility stage: IT and facility power, rack load, cooling method and heat split; then the rack layout.

One power model (`FacilityPower`): it_kw = systems_kw + network_kw + optics_kw + storage_kw + management_kw and
facility_kw = it_kw x PUE, every part at maximum rated draw because circuits and cooling are sized for peak.
`size_facility` knows the GPU systems only (every candidate system is ranked on it); `size_site` lays out the
chosen system's racks and fills in the network, storage and management parts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import System
from engine.catalog.parts import Part, PartsCatalog
from engine.physical.cluster import ClusterBuild
from engine.physical.cooling import KW_PER_TON, airflow_cfm, choose_cdus, coolant_lpm, cooling_method_for
from engine.physical.fabric import FabricPlan
from engine.physical.fabric.optics import uncovered_optics_w
from engine.physical.rack_devices import RackDevice
from engine.physical.racks import Rack, RackLayout, lay_out_racks
from engine.request.spec import SiteSpec
from engine.result.physical import CoolingSummary, PowerSummary

__all__ = ["FacilityPower", "FacilityResult", "SiteResult", "size_facility", "size_site"]


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
    optics_kw: float = 0.0  # transceivers no device's power figure covers (engine.physical.fabric.optics)

    @property
    def it_kw(self) -> float:
        return self.systems_kw + self.network_kw + self.optics_kw + self.storage_kw + self.management_kw

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
    def optics_kw(self) -> float:
        return self.power.optics_kw

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
            optics_kw=round(self.optics_kw, 3),
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
        devices, cache = dict(self.devices), {}
        return {
            "total": len(self.racks),
            "by_role": _count_by(self.racks, "role"),
            "rack_height_u": self.rack_height_u,
            "layout": [r.as_dict(devices, cache) for r in self.racks],
        }


def _count_by(racks: tuple[Rack, ...], attr: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for rack in racks:
        key = getattr(rack, attr)
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


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
    layout: RackLayout | None = None,
) -> SiteResult:
    """Lay out the racks (racks.py; or reuse `layout`, the same fabric's switches laid out before), then the one
    facility power with every IT part, feeds, cooling and CDUs."""
    phys = parts.systems[system.id]
    layout = layout or lay_out_racks(build, system, fabric, storage_part, storage_units, parts, assumptions)
    racks = layout.racks

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
        optics_kw=uncovered_optics_w(fabric.fabrics(), parts) / 1e3,
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
        racks=racks,
        usable_feed_kw=layout.usable_feed_kw,
        feeds=sum(r.feeds for r in racks),
        rack_pdus=sum(r.feeds for r in racks),
        worst_feed_after_failure_kw=worst,
        airflow_cfm=airflow_cfm(air_kw, assumptions["air_delta_t_f"]),
        coolant_lpm=coolant_lpm(liquid_kw, assumptions["liquid_delta_t_k"]),
        cdu_part=cdu.id if cdu else None,
        cdus=cdus,
        unknown_power=layout.unknown_power,
        rack_height_u=layout.rack_height_u,
        devices=layout.devices,
    )
