"""Cooling formulas shared by the facility stage and the rack layout: method by rack load, air and water flow, CDUs.

Kept apart so the rack layout (each rack's cooling) and the facility totals use the same thresholds and formulas.
"""

from __future__ import annotations

import math
from typing import Protocol

from engine.assumptions.registry import Assumptions
from engine.catalog.parts import Part

__all__ = ["KW_PER_TON", "airflow_cfm", "choose_cdus", "coolant_lpm", "cooling_method_for"]

# One ton of refrigeration = 12,000 BTU/h = 3.517 kW (ASHRAE definition of the refrigeration ton).
KW_PER_TON = 3.517


class _Cooled(Protocol):
    cooling: str


def cooling_method_for(per_rack_kw: float, system: _Cooled, assumptions: Assumptions) -> str:
    """Liquid-cooled systems need direct liquid cooling; otherwise the rack load picks the method
    (bands per rack load: air, air with containment, rear-door heat exchangers, direct liquid; the thresholds
    are named assumptions)."""
    if system.cooling == "liquid":
        return "liquid"
    if per_rack_kw <= assumptions["cooling_air_max_kw"]:
        return "air"
    if per_rack_kw <= assumptions["cooling_containment_max_kw"]:
        return "air_containment"
    if per_rack_kw <= assumptions["cooling_rdhx_max_kw"]:
        return "rdhx"
    return "liquid"


def airflow_cfm(air_kw: float, delta_t_f: float) -> float:
    """CFM = 3.16 x W / dT_F (sea-level sensible-heat equation for air, ASHRAE Fundamentals)."""
    return 3.16 * air_kw * 1000.0 / delta_t_f


def coolant_lpm(liquid_kw: float, delta_t_k: float) -> float:
    """L/min = 60 x kW / (4.18 x dT_K) (water: specific heat 4.18 kJ/kg K, 1 kg per litre)."""
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
