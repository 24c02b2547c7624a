"""Plan result parts for the site plant (engine/physical/plant.py): the electrical chain and the heat rejection.
Field names are the plan's JSON keys (`plant`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HeatRejectionSummary", "PlantSummary", "PlantUnitsSummary"]


@dataclass(frozen=True)
class PlantUnitsSummary:
    """One class of electrical equipment: units of `unit_rating` (`unit`: MVA or kW) carrying `load`."""

    name: str
    unit_rating: float
    unit: str
    load: float
    working: int
    redundant: int
    total: int
    label: str = ""  # for people: "MV/LV transformers"


@dataclass(frozen=True)
class HeatRejectionSummary:
    """How one cooling loop's heat leaves the site: dry coolers or chillers, by the design ambient."""

    loop: str
    heat_kw: float
    supply_c: float
    equipment: str
    unit_rating: float
    unit: str
    working: int
    redundant: int
    total: int


@dataclass(frozen=True)
class PlantSummary:
    """The `plant` section: counted from the facility power and the heat split, at the site's design ambient."""

    it_kw: float
    facility_kw: float
    facility_mva: float
    ambient_c: float
    ambient_from_site: bool
    substation: bool
    electrical: tuple[PlantUnitsSummary, ...]
    heat_rejection: tuple[HeatRejectionSummary, ...]
    reason: str
