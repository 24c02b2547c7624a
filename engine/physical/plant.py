"""Site plant: the electrical chain from the utility to the rack feeds, and the heat rejection outside the hall.

Why: at tens of MW the plant, not the racks, decides whether and when a cluster can be built (switchgear,
transformers and generators have the longest lead times of a data centre build), and a buyer who owns the site
pays for it. Everything is counted from the one facility power (facility.py) and the heat split the CDUs and the
air handlers already carry; every unit size and coverage is a named assumption (engine/data/assumptions/plant.toml).

Electrical chain, utility to rack:
- utility feeds = ceil(facility MVA / feed MVA) + utility_feeds_redundant (facility MVA = facility kW / power
  factor); up to mv_service_max_mva the feeds are medium-voltage feeders of that size, above it high-voltage
  circuits of utility_feed_mva into a substation of the site's own, with
  HV/MV transformers = working + redundant, working = ceil(facility MVA / substation_transformer_mva);
- MV/LV transformers (unit substations) = working + redundant, working = ceil(facility MVA / mv_lv_transformer_mva);
- UPS modules for ups_it_fraction of the IT power, generators for generator_facility_fraction of the facility
  power (0: none), each working + redundant.
Redundant units: one per electrical_redundancy_block_units working units (block-redundant N+1), at least one.

Heat rejection by climate: dry coolers reject heat to outside air whenever the water they return is warm enough,
i.e. design ambient + dry_cooler_approach_k <= the loop's supply temperature; otherwise chillers. Direct-liquid
heat rides the warm facility-water loop (liquid_facility_supply_c, ASHRAE W32 by default), air-side heat the
chilled-water loop of the air handlers (air_chilled_water_supply_c), so a hot site may reject its liquid heat with
dry coolers and still need chillers for the air-side heat.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.assumptions.registry import Assumptions

__all__ = ["HeatRejection", "PlantResult", "PlantUnits", "redundant_units", "size_plant"]

LABELS = {
    "utility_feeds": "Utility feeds",
    "substation_transformers": "HV/MV substation transformers",
    "mv_lv_transformers": "MV/LV transformers",
    "ups_modules": "UPS modules",
    "generators": "Standby generators",
    "chillers": "Chillers",
    "dry_coolers": "Dry coolers",
}


def redundant_units(working: int, a: Assumptions) -> int:
    """One redundant unit per block of working units (at least one when any work)."""
    if working <= 0:
        return 0
    return math.ceil(working / a["electrical_redundancy_block_units"])


@dataclass(frozen=True)
class PlantUnits:
    """One class of plant equipment: what it is, the unit's rating, units working and redundant, and the load."""

    name: str
    unit_rating: float
    unit: str  # MVA or kW
    load: float  # in the unit's own unit
    working: int
    redundant: int

    @property
    def total(self) -> int:
        return self.working + self.redundant

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "label": LABELS.get(self.name, self.name),
            "unit_rating": self.unit_rating,
            "unit": self.unit,
            "load": round(self.load, 3),
            "working": self.working,
            "redundant": self.redundant,
            "total": self.total,
        }


def _units(name: str, load: float, rating: float, unit: str, a: Assumptions) -> PlantUnits:
    working = math.ceil(load / rating - 1e-9) if load > 0 else 0
    return PlantUnits(name, rating, unit, load, working, redundant_units(working, a))


@dataclass(frozen=True)
class HeatRejection:
    """One loop's heat and how it leaves the site."""

    loop: str  # liquid | air
    heat_kw: float
    supply_c: float
    equipment: str  # dry_coolers | chillers
    units: PlantUnits

    def as_dict(self) -> dict[str, object]:
        return {
            "loop": self.loop,
            "heat_kw": round(self.heat_kw, 3),
            "supply_c": self.supply_c,
            "equipment": self.equipment,
            **{k: v for k, v in self.units.as_dict().items() if k not in ("name", "load", "label")},
        }


@dataclass(frozen=True)
class PlantResult:
    """The site's electrical chain and heat rejection, with the inputs they were counted from."""

    it_kw: float
    facility_kw: float
    facility_mva: float
    ambient_c: float
    ambient_from_site: bool
    substation: bool
    electrical: tuple[PlantUnits, ...]
    heat_rejection: tuple[HeatRejection, ...]
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {
            "it_kw": round(self.it_kw, 3),
            "facility_kw": round(self.facility_kw, 3),
            "facility_mva": round(self.facility_mva, 3),
            "ambient_c": self.ambient_c,
            "ambient_from_site": self.ambient_from_site,
            "substation": self.substation,
            "electrical": [u.as_dict() for u in self.electrical],
            "heat_rejection": [h.as_dict() for h in self.heat_rejection],
            "reason": self.reason,
        }


def _electrical(it_kw: float, facility_kw: float, mva: float, a: Assumptions) -> tuple[bool, list[PlantUnits]]:
    substation = mva > a["mv_service_max_mva"]
    feed_mva = a["utility_feed_mva"] if substation else a["mv_service_max_mva"]  # HV circuits, else MV feeders
    feeds = math.ceil(mva / feed_mva - 1e-9)
    chain = [PlantUnits("utility_feeds", feed_mva, "MVA", mva, feeds, int(a["utility_feeds_redundant"]))]
    if substation:
        chain.append(_units("substation_transformers", mva, a["substation_transformer_mva"], "MVA", a))
    chain.append(_units("mv_lv_transformers", mva, a["mv_lv_transformer_mva"], "MVA", a))
    ups_kw = it_kw * a["ups_it_fraction"]
    if ups_kw > 0:
        chain.append(_units("ups_modules", ups_kw, a["ups_module_kw"], "kW", a))
    gen_kw = facility_kw * a["generator_facility_fraction"]
    if gen_kw > 0:
        chain.append(_units("generators", gen_kw, a["generator_unit_kw"], "kW", a))
    return substation, chain


def _rejection(loop: str, heat_kw: float, supply_c: float, ambient_c: float, a: Assumptions) -> HeatRejection:
    dry = ambient_c + a["dry_cooler_approach_k"] <= supply_c
    equipment = "dry_coolers" if dry else "chillers"
    rating = a["dry_cooler_unit_kw"] if dry else a["chiller_unit_kw"]
    return HeatRejection(loop, heat_kw, supply_c, equipment, _units(equipment, heat_kw, rating, "kW", a))


def _reason(substation: bool, mva: float, rejection: list[HeatRejection], ambient_c: float, a: Assumptions) -> str:
    service = (
        f"high-voltage service into the site's own substation ({mva:,.1f} MVA is above the "
        f"{a['mv_service_max_mva']:g} MVA a utility serves at medium voltage)"
        if substation
        else f"medium-voltage utility service ({mva:,.2f} MVA, no substation of its own)"
    )
    loops = "; ".join(
        f"{h.loop}-side heat ({h.heat_kw:,.0f} kW, {h.supply_c:g} C supply) by "
        + ("dry coolers" if h.equipment == "dry_coolers" else "chillers")
        + (
            f" (ambient {ambient_c:g} C + {a['dry_cooler_approach_k']:g} K approach "
            + ("<=" if h.equipment == "dry_coolers" else ">")
            + f" {h.supply_c:g} C)"
        )
        for h in rejection
    )
    return f"Electrical: {service}. Heat rejection: {loops}." if loops else f"Electrical: {service}."


def size_plant(
    it_kw: float,
    facility_kw: float,
    liquid_kw: float,
    air_kw: float,
    ambient_c: float | None,
    a: Assumptions,
) -> PlantResult:
    """The plant for a facility drawing `facility_kw` (IT `it_kw`) with this liquid/air heat split, at a site whose
    design dry-bulb is `ambient_c` (None: the assumption site_design_ambient_c)."""
    from_site = ambient_c is not None
    ambient = float(ambient_c) if ambient_c is not None else float(a["site_design_ambient_c"])
    mva = facility_kw / 1000.0 / a["feed_power_factor"]
    substation, chain = _electrical(it_kw, facility_kw, mva, a)
    rejection = []
    if liquid_kw > 0:
        rejection.append(_rejection("liquid", liquid_kw, a["liquid_facility_supply_c"], ambient, a))
    if air_kw > 0:
        rejection.append(_rejection("air", air_kw, a["air_chilled_water_supply_c"], ambient, a))
    return PlantResult(
        it_kw=it_kw,
        facility_kw=facility_kw,
        facility_mva=mva,
        ambient_c=ambient,
        ambient_from_site=from_site,
        substation=substation,
        electrical=tuple(chain),
        heat_rejection=tuple(rejection),
        reason=_reason(substation, mva, rejection, ambient, a),
    )
