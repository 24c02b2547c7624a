"""Campus geometry: the racks of a build packed into data halls under a hall's IT power and floor (rack positions)
limits, halls into buildings, and the run lengths that follow (within a row, within a hall, hall to hall, building
to building).

Why: a 100,000-GPU build draws well over 100 MW and a 1,000,000-GPU build over a gigawatt; no single hall holds
them, and the fabric's upper tiers then cross halls and buildings, so their links need single-mode optics of the
matching reach class (DR 500 m, FR 2 km), whose power counts in IT power. Racks are packed in layout order (each
SU's row, then the central network and management rows), a row kept whole in one hall when it fits an empty one.
Halls in a building stand in a line `hall_pitch_m` apart; buildings stand in a near-square grid
`building_pitch_m` apart, and fibre follows the duct routes at right angles (Manhattan distance) to the campus's
network core at its centre. The limits and distances are named assumptions (engine/data/assumptions/campus.toml).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.assumptions.registry import Assumptions
from engine.physical.racks import Rack

__all__ = ["Campus", "HallLoad", "pack_campus"]


@dataclass(frozen=True)
class HallLoad:
    """One data hall: the building it is in, its racks (positions used), rows and IT power at maximum draw."""

    building: int
    racks: int
    rows: int
    it_kw: float
    longest_row_racks: int


@dataclass(frozen=True)
class Campus:
    """Halls and buildings of a build and the farthest run at each scale (m)."""

    halls: tuple[HallLoad, ...]
    halls_per_building: int
    hall_max_it_kw: float
    hall_max_racks: int
    row_m: float  # farthest rack of a row to its end-of-row network rack
    hall_m: float  # farthest row of a hall to the hall's network core
    building_m: float  # farthest hall of a building to the building's network core
    campus_m: float  # farthest building to the campus network core

    @property
    def buildings(self) -> int:
        return math.ceil(len(self.halls) / self.halls_per_building)

    @property
    def multi_hall(self) -> bool:
        return len(self.halls) > 1

    def span_m(self, halls: float) -> tuple[str, float]:
        """(distance class, farthest run) of links that join `halls` halls' worth of racks to one point."""
        if halls <= 1 or not self.multi_hall:
            return "in_hall", self.hall_m
        if halls <= self.halls_per_building or self.buildings == 1:
            return "hall_to_hall", self.building_m
        return "building_to_building", self.campus_m

    def as_dict(self) -> dict[str, object]:
        return {
            "halls": len(self.halls),
            "buildings": self.buildings,
            "halls_per_building": self.halls_per_building,
            "hall_max_it_mw": round(self.hall_max_it_kw / 1000, 3),
            "hall_max_racks": self.hall_max_racks,
            "largest_hall_it_mw": round(max((h.it_kw for h in self.halls), default=0.0) / 1000, 3),
            "largest_hall_racks": max((h.racks for h in self.halls), default=0),
            "distances_m": {
                "within_row": round(self.row_m, 1),
                "within_hall": round(self.hall_m, 1),
                "hall_to_hall": round(self.building_m, 1),
                "building_to_building": round(self.campus_m, 1),
            },
            "per_hall": [
                {"hall": i, "building": h.building, "racks": h.racks, "rows": h.rows, "it_mw": round(h.it_kw / 1000, 3)}
                for i, h in enumerate(self.halls, start=1)
            ],
        }


@dataclass
class _Hall:
    racks: int = 0
    kw: float = 0.0
    rows: int = 0
    longest: int = 0


def _rows(racks: tuple[Rack, ...]) -> tuple[list[tuple[int, float]], int]:
    """(racks, kW) of each row in layout order, and the longest compute row (the physical row length: a longer
    row of the layout, such as the central network row, stands as several rows of that length)."""
    rows: dict[int, list[float]] = {}
    compute: dict[int, int] = {}
    for rack in racks:
        rows.setdefault(rack.row, []).append(rack.kw)
        compute[rack.row] = compute.get(rack.row, 0) + (rack.role == "compute")
    longest = max((len(rows[r]) for r, n in compute.items() if n), default=0)
    return [(len(kws), sum(kws)) for _, kws in sorted(rows.items())], max(1, longest)


def _pack(rows: list[tuple[int, float]], row_cap: int, max_racks: int, max_kw: float) -> list[_Hall]:
    """First fit in layout order: a row joins the current hall if it fits, else opens a hall; a row larger than
    an empty hall is split over as many halls as it needs (by racks and by kW, evenly per rack)."""
    halls: list[_Hall] = []
    for count, kw in rows:
        per_rack_kw = kw / count
        current = halls[-1] if halls else None
        if current is None or current.racks + count > max_racks or current.kw + kw > max_kw + 1e-9:
            current = _Hall()
            halls.append(current)
        left = count
        while left:
            room = max_racks - current.racks
            if per_rack_kw > 0:
                room = min(room, int((max_kw - current.kw) / per_rack_kw + 1e-9))
            if room <= 0:
                current = _Hall()
                halls.append(current)
                continue
            take = min(left, room)
            current.racks += take
            current.kw += take * per_rack_kw
            current.rows += math.ceil(take / row_cap)
            current.longest = max(current.longest, min(take, row_cap))
            left -= take
    return halls


def _hall_span_m(racks: int, pitch: float, width: float, slack: float) -> float:
    """Farthest rack of a hall to the hall's network core at its centre, the hall laid out about square: rows
    `pitch` apart, as many racks to a row as make its length about the depth of the rows together."""
    rows = max(1, math.ceil(math.sqrt(racks * width / pitch)))
    per_row = math.ceil(racks / rows)
    return math.ceil(rows / 2) * pitch + per_row * width / 2 + slack


def pack_campus(racks: tuple[Rack, ...], rack_width_m: float, a: Assumptions) -> Campus:
    """Halls, buildings and run lengths for `racks` (the rack layout, in row order)."""
    max_kw = a["hall_max_it_mw"] * 1000.0
    max_racks = int(a["hall_max_racks"])
    per_building = int(a["halls_per_building"])
    rows_kw, row_cap = _rows(racks)
    halls = _pack(rows_kw, row_cap, max_racks, max_kw)
    loads = tuple(HallLoad(i // per_building + 1, h.racks, h.rows, h.kw, h.longest) for i, h in enumerate(halls))
    pitch, slack, width = a["row_pitch_m"], a["cable_slack_m"], rack_width_m
    row_m = max((h.longest for h in halls), default=1) * width + slack
    hall_m = max(_hall_span_m(h.racks, pitch, width, slack) for h in halls)
    in_building = min(len(halls), per_building)
    building_m = (in_building - 1) / 2 * a["hall_pitch_m"] + hall_m
    buildings = math.ceil(len(halls) / per_building)
    cols = math.ceil(math.sqrt(buildings))
    grid_rows = math.ceil(buildings / cols)
    campus_m = ((cols - 1) / 2 + (grid_rows - 1) / 2) * a["building_pitch_m"] + building_m
    return Campus(loads, per_building, max_kw, max_racks, row_m, hall_m, building_m, campus_m)
