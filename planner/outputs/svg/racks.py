"""Rack elevations: one drawing per distinct rack build, with how many racks share it.

Identical racks (same role, contents and cooling) are drawn once with a "x N" count, so a
16,384-GPU plan stays readable. Each rack shows its units bottom-up, its PDU feeds, its kW and
its cooling method. Unit heights, kinds and names are the ones the plan stored (`RacksView`), never the
live catalog's, so a plan re-opened after a catalog change draws the racks it drew before.
"""

from __future__ import annotations

from planner.outputs.view_models import RacksView, RackView

from .base import fmt, new_drawing

U_PX, RACK_W, GAP, TOP = 9, 150, 46, 70
KIND_CSS = {"system": "unit-system", "switch": "unit-switch", "storage": "unit-storage"}


def rack_groups(racks: tuple[RackView, ...]) -> list[tuple[RackView, int, list[str]]]:
    """(representative rack, how many, their ids) for each distinct build, in first-seen order."""
    groups: dict[tuple, list[RackView]] = {}
    for rack in racks:
        key = (rack.role, tuple((device.id, device.quantity) for device in rack.devices), rack.cooling)
        groups.setdefault(key, []).append(rack)
    return [(members[0], len(members), [r.id for r in members]) for members in groups.values()]


class RackElevationSVG:
    def __init__(self, racks: RacksView) -> None:
        self.racks = racks.racks
        self.height_u = racks.height_u
        self.groups = rack_groups(self.racks)
        width = max(1, len(self.groups)) * (RACK_W + GAP) + 40
        self.drawing = new_drawing(width, TOP + self.height_u * U_PX + 80, "Rack elevations")

    def render(self) -> str:
        d = self.drawing
        d.add(
            d.text(
                f"Rack elevations: {fmt(len(self.racks))} racks, {len(self.groups)} distinct builds",
                insert=(12, 24),
                class_="title",
            )
        )
        for index, (rack, count, ids) in enumerate(self.groups):
            self._rack(20 + index * (RACK_W + GAP), rack, count, ids)
        return d.tostring()

    def _rack(self, x: float, rack: RackView, count: int, ids: list[str]) -> None:
        d = self.drawing
        height = self.height_u * U_PX
        group = d.g()
        group.set_desc(title=f"{rack.role} rack: {', '.join(ids[:12])}{' ...' if len(ids) > 12 else ''}")
        group.add(d.text(f"{rack.role.capitalize()} x {count}", insert=(x, TOP - 22), class_="label"))
        group.add(d.text(f"{fmt(rack.kw)} kW · {rack.feeds} feeds", insert=(x, TOP - 8), class_="small"))
        group.add(d.rect(insert=(x, TOP), size=(RACK_W, height), class_="rack"))
        # Zero-U PDUs along the rear rail, one bar per feed.
        for feed in range(rack.feeds):
            group.add(d.rect(insert=(x + RACK_W - 6 - feed * 5, TOP + 4), size=(3, height - 8), class_="pdu"))
        self._devices(group, x, rack, height)
        group.add(d.rect(insert=(x, TOP + height + 6), size=(RACK_W, 8), class_=f"cool-{rack.cooling}"))
        group.add(
            d.text(
                f"{rack.cooling.replace('_', ' ')} · {rack.used_u}U used", insert=(x, TOP + height + 28), class_="small"
            )
        )
        d.add(group)

    def _devices(self, group, x: float, rack: RackView, height: float) -> None:
        """Each device bottom-up at its stored height, named by its catalog id (the full name on hover)."""
        d = self.drawing
        used_u = 0
        for device in rack.devices:
            units = device.rack_units
            for _ in range(device.quantity if units > 0 else 0):
                y = TOP + height - (used_u + units) * U_PX
                unit = d.rect(
                    insert=(x + 4, y + 1),
                    size=(RACK_W - 26, units * U_PX - 2),
                    class_=KIND_CSS.get(device.kind, "unit-other"),
                )
                unit.set_desc(title=f"{device.label} ({units}U)")
                group.add(unit)
                if units * U_PX >= 12:
                    group.add(d.text(device.id, insert=(x + 8, y + min(units * U_PX - 3, 12)), class_="small"))
                used_u += units


def racks_svg(racks: RacksView) -> str:
    return RackElevationSVG(racks).render()
