"""Rack elevations: one drawing per distinct rack build, with how many racks share it.

Identical racks (same role, contents and cooling) are drawn once with a "x N" count, so a
16,384-GPU plan stays readable. Each rack shows its units bottom-up, its PDU feeds, its kW and
its cooling method. Unit heights come from the catalog (passed in as `rack_units_of`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import fmt, new_drawing

U_PX, RACK_W, GAP, TOP = 9, 150, 46, 70
KIND_CSS = {"system": "unit-system", "switch": "unit-switch", "storage": "unit-storage"}


def rack_groups(layout: list[dict]) -> list[tuple[dict, int, list[str]]]:
    """(representative rack, how many, their ids) for each distinct build, in first-seen order."""
    groups: dict[tuple, list[dict]] = {}
    for rack in layout:
        key = (rack.get("role"), tuple((i["id"], i["quantity"]) for i in rack.get("items", [])), rack.get("cooling"))
        groups.setdefault(key, []).append(rack)
    return [(members[0], len(members), [r["id"] for r in members]) for members in groups.values()]


class RackElevationSVG:
    def __init__(self, result: dict[str, Any], rack_units_of: Callable[[str], tuple[int, str]],
                 rack_height_u: int = 48) -> None:
        self.layout = (result.get("racks") or {}).get("layout") or []
        self.units_of = rack_units_of
        self.height_u = rack_height_u
        self.groups = rack_groups(self.layout)
        width = max(1, len(self.groups)) * (RACK_W + GAP) + 40
        self.drawing = new_drawing(width, TOP + rack_height_u * U_PX + 80, "Rack elevations")

    def render(self) -> str:
        d = self.drawing
        d.add(d.text(f"Rack elevations: {fmt(len(self.layout))} racks, {len(self.groups)} distinct builds",
                     insert=(12, 24), class_="title"))
        for index, (rack, count, ids) in enumerate(self.groups):
            self._rack(20 + index * (RACK_W + GAP), rack, count, ids)
        return d.tostring()

    def _rack(self, x: float, rack: dict, count: int, ids: list[str]) -> None:
        d = self.drawing
        height = self.height_u * U_PX
        group = d.g()
        group.set_desc(title=f"{rack.get('role')} rack: {', '.join(ids[:12])}{' ...' if len(ids) > 12 else ''}")
        header = f"{rack.get('role', '').capitalize()} x {count}"
        group.add(d.text(header, insert=(x, TOP - 22), class_="label"))
        group.add(d.text(f"{fmt(rack.get('kw', 0))} kW · {rack.get('feeds', 0)} feeds", insert=(x, TOP - 8),
                         class_="small"))
        group.add(d.rect(insert=(x, TOP), size=(RACK_W, height), class_="rack"))
        # Zero-U PDUs along the rear rail, one bar per feed.
        for feed in range(int(rack.get("feeds", 0))):
            group.add(d.rect(insert=(x + RACK_W - 6 - feed * 5, TOP + 4), size=(3, height - 8), class_="pdu"))
        used_u = 0
        for item in rack.get("items", []):
            units, kind = self.units_of(item["id"])
            for _ in range(int(item["quantity"])):
                if units <= 0:
                    continue
                y = TOP + height - (used_u + units) * U_PX
                group.add(d.rect(insert=(x + 4, y + 1), size=(RACK_W - 26, units * U_PX - 2),
                                 class_=KIND_CSS.get(kind, "unit-other")))
                if units * U_PX >= 12:
                    group.add(d.text(item["id"], insert=(x + 8, y + min(units * U_PX - 3, 12)), class_="small"))
                used_u += units
        cooling = str(rack.get("cooling", ""))
        group.add(d.rect(insert=(x, TOP + height + 6), size=(RACK_W, 8), class_=f"cool-{cooling}"))
        group.add(d.text(f"{cooling.replace('_', ' ')} · {used_u}U used", insert=(x, TOP + height + 28),
                         class_="small"))
        d.add(group)


def racks_svg(result: dict[str, Any], rack_units_of: Callable[[str], tuple[int, str]]) -> str:
    return RackElevationSVG(result, rack_units_of).render()
