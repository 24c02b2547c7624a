"""Build stage: turn a GPU count into whole systems, racks and scalable units.

Racks follow the catalog's systems-per-rack (from the vendor facility guidance) unless a rack power budget or a
forced cooling method lowers it; scalable units follow the vendor reference architecture's SU size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import System
from engine.catalog.parts import PartsCatalog
from engine.physical.spares import HotSpares
from engine.request.spec import HardwareSpec

__all__ = [
    "ClusterBuild",
    "build_cluster",
    "physical_rack_limits",
    "rack_budget_kw",
    "rack_power_cap_kw",
    "usable_feed_kw",
]


@dataclass(frozen=True)
class ClusterBuild:
    """The physical cluster: `gpus` installed (whole systems) may exceed the `job_gpus` the workload uses; with
    elastic recovery `systems` includes the `spares` (engine/physical/spares.py)."""

    system: str
    systems: int
    gpus: int
    job_gpus: int
    scalable_units: int
    racks: int
    systems_per_rack: int
    su_systems: int
    rack_budget_kw: float | None
    spares: HotSpares | None = None

    @property
    def spare_systems(self) -> int:
        return self.spares.systems if self.spares is not None else 0

    def as_dict(self) -> dict[str, object]:
        return {
            "system": self.system,
            "systems": self.systems,
            "gpus": self.gpus,
            "job_gpus": self.job_gpus,
            "scalable_units": self.scalable_units,
            "racks": self.racks,
            "systems_per_rack": self.systems_per_rack,
            "su_systems": self.su_systems,
        }


def rack_budget_kw(system: System, hardware: HardwareSpec, assumptions: Assumptions) -> float | None:
    """The per-rack kW ceiling: the user's rack_kw, the forced cooling method's limit, and for air-cooled
    chassis the rear-door limit (they cannot take direct liquid cooling). None = no ceiling."""
    limits: list[float] = []
    if hardware.rack_kw is not None:
        limits.append(hardware.rack_kw)
    if hardware.cooling == "air":
        limits.append(assumptions["cooling_containment_max_kw"])
    elif hardware.cooling == "rdhx" or system.cooling == "air":
        limits.append(assumptions["cooling_rdhx_max_kw"])
    return min(limits) if limits else None


def usable_feed_kw(assumptions: Assumptions) -> float:
    """One 3-phase feed: sqrt(3) x V x A x continuous derate x power factor (415 V / 60 A -> 32.8 kW)."""
    volts, amps = assumptions["feed_voltage_v"], assumptions["feed_current_a"]
    return math.sqrt(3) * volts * amps * assumptions["feed_derate"] * assumptions["feed_power_factor"] / 1000.0


def rack_power_cap_kw(power_redundancy: str, assumptions: Assumptions) -> float:
    """Most a rack can draw on its feeds with one failed (N+1) or half failed (N+N)."""
    feeds = assumptions["rack_max_feeds"]
    working = feeds // 2 if power_redundancy == "n+n" else feeds - 1
    return working * usable_feed_kw(assumptions)


def physical_rack_limits(system: System, parts: PartsCatalog | None, assumptions: Assumptions) -> dict[str, int]:
    """Systems per rack allowed by U, weight and feed capacity (rack-scale systems are their own rack)."""
    if parts is None or system.id not in parts.systems:
        return {}
    phys = parts.systems[system.id]
    rack = parts.of_kind("rack")[0]
    limits = {
        "weight": math.floor((assumptions["rack_max_weight_kg"] + 1e-9) / phys.weight_kg),
        "circuits": math.floor(rack_power_cap_kw(phys.power_redundancy, assumptions) / system.max_power_kw + 1e-9),
    }
    if system.rack_units < rack.rack_units:
        limits["rack_units"] = (rack.rack_units - assumptions["rack_reserved_u"]) // system.rack_units
    return limits


def build_cluster(
    system: System,
    job_gpus: int,
    hardware: HardwareSpec,
    assumptions: Assumptions,
    parts: PartsCatalog | None = None,
    spares: HotSpares | None = None,
) -> tuple[ClusterBuild | None, list[str]]:
    """systems = ceil(gpus / gpus_per_system) + hot spares; racks = ceil(systems / systems_per_rack); SUs likewise.
    systems_per_rack is the catalog default lowered by the rack kW budget and, with parts data, by the rack's
    usable U, its weight rating and what its feeds can carry with one failed. Spares are racked like the others."""
    problems: list[str] = []
    if system.cooling == "liquid" and hardware.cooling in ("air", "rdhx"):
        problems.append(
            f"cooling: the {system.name} is direct-liquid cooled by design; {hardware.cooling} cooling cannot carry it."
        )
    if system.cooling == "air" and hardware.cooling == "liquid":
        problems.append(
            f"cooling: the {system.name} is an air-cooled chassis; the catalog has no direct-liquid variant."
        )
    budget = rack_budget_kw(system, hardware, assumptions)
    per_rack = system.systems_per_rack
    if budget is not None:
        per_rack = min(per_rack, math.floor(budget / system.max_power_kw + 1e-9))
        if per_rack < 1:
            problems.append(
                f"rack power: one {system.id} draws up to {system.max_power_kw:g} kW, above the "
                f"{budget:g} kW rack budget."
            )
    for limit, count in physical_rack_limits(system, parts, assumptions).items():
        if count < 1:
            problems.append(f"rack {limit}: one {system.id} exceeds the rack's {limit.replace('_', ' ')} limit.")
        per_rack = min(per_rack, count)
    if problems:
        return None, problems
    systems = math.ceil(job_gpus / system.gpus_per_system) + (spares.systems if spares is not None else 0)
    return ClusterBuild(
        system=system.id,
        systems=systems,
        gpus=systems * system.gpus_per_system,
        job_gpus=job_gpus,
        scalable_units=math.ceil(systems / system.su_systems),
        racks=math.ceil(systems / per_rack),
        systems_per_rack=per_rack,
        su_systems=system.su_systems,
        rack_budget_kw=budget,
        spares=spares,
    ), []
