"""Build stage: turn a GPU count into whole systems, racks and scalable units.

Racks follow the catalog's systems-per-rack (from the vendor facility guidance) unless a rack power budget or a
forced cooling method lowers it; scalable units follow the vendor reference architecture's SU size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.sizing.assumptions import Assumptions
from planner.sizing.catalog import System
from planner.sizing.request import HardwareSpec

__all__ = ["ClusterBuild", "build_cluster", "rack_budget_kw"]


@dataclass(frozen=True)
class ClusterBuild:
    """The physical cluster: `gpus` installed (whole systems) may exceed the `job_gpus` the workload uses."""

    system: str
    systems: int
    gpus: int
    job_gpus: int
    scalable_units: int
    racks: int
    systems_per_rack: int
    su_systems: int
    rack_budget_kw: float | None

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


def build_cluster(
    system: System, job_gpus: int, hardware: HardwareSpec, assumptions: Assumptions
) -> tuple[ClusterBuild | None, list[str]]:
    """systems = ceil(gpus / gpus_per_system); racks = ceil(systems / systems_per_rack); SUs likewise."""
    problems: list[str] = []
    if system.cooling == "liquid" and hardware.cooling in ("air", "rdhx"):
        problems.append(
            f"cooling: {system.id} is direct-liquid cooled by design; {hardware.cooling} cooling cannot carry it."
        )
    if system.cooling == "air" and hardware.cooling == "liquid":
        problems.append(f"cooling: {system.id} is an air-cooled chassis; the catalog has no direct-liquid variant.")
    budget = rack_budget_kw(system, hardware, assumptions)
    per_rack = system.systems_per_rack
    if budget is not None:
        per_rack = min(per_rack, math.floor(budget / system.max_power_kw + 1e-9))
        if per_rack < 1:
            problems.append(
                f"rack power: one {system.id} draws up to {system.max_power_kw:g} kW, above the "
                f"{budget:g} kW rack budget."
            )
    if problems:
        return None, problems
    systems = math.ceil(job_gpus / system.gpus_per_system)
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
    ), []
