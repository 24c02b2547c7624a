"""Facility stage (first version): IT and facility power, rack load, cooling method and heat split.

IT power counts the GPU systems only (network, storage and management gear are later stages), at their
maximum rated draw, because circuits and cooling must be sized for peak.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.sizing.assumptions import Assumptions
from planner.sizing.build import ClusterBuild
from planner.sizing.catalog import System
from planner.sizing.request import SiteSpec

__all__ = ["KW_PER_TON", "FacilityResult", "cooling_method_for", "size_facility"]

# One ton of refrigeration = 12,000 BTU/h = 3.517 kW (facility.md section 3).
KW_PER_TON = 3.517


@dataclass(frozen=True)
class FacilityResult:
    """Power and cooling for the built cluster."""

    it_kw: float
    facility_kw: float
    per_rack_kw: float
    pue: float
    pue_from_site: bool
    cooling_method: str
    liquid_kw: float
    air_kw: float
    tons: float

    def power_dict(self) -> dict[str, object]:
        return {"it_kw": self.it_kw, "facility_kw": self.facility_kw, "per_rack_kw": self.per_rack_kw, "pue": self.pue}

    def cooling_dict(self) -> dict[str, object]:
        return {"method": self.cooling_method, "liquid_kw": self.liquid_kw, "air_kw": self.air_kw, "tons": self.tons}


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
    """it_kw = systems x max kW; facility_kw = it_kw x PUE; heat split by method; tons = kW / 3.517."""
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
        it_kw=it_kw,
        facility_kw=it_kw * pue,
        per_rack_kw=per_rack_kw,
        pue=pue,
        pue_from_site=from_site,
        cooling_method=method,
        liquid_kw=liquid_kw,
        air_kw=air_kw,
        tons=it_kw / KW_PER_TON,
    )
