"""Rack elevations: one drawing per distinct rack build, with how many racks share it, wrapped into rows.

Identical racks (same role, contents and cooling) are drawn once with a "x N" count, so a 16,384-GPU plan's 678
racks are 11 drawings, and the drawings wrap into as many rows as the width needs instead of scrolling sideways.
Each rack shows its kW, feeds and cooling method above it, its units bottom-up, and the racks it stands for below.
Every device is named: big devices one by one, a run of identical 1-2U devices (nine QM9700 leaves) once across
the run with its count; a key under the racks gives each name's full catalog description and height.

Unit heights, kinds and names are the ones the plan stored (`RacksView`), never the live catalog's, so a plan
re-opened after a catalog change draws the racks it drew before; a device stored without a height is not drawn
(the rack's stored U total is still shown).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.outputs.view_models import RackDeviceView, RacksView, RackView

from .base import (
    MIN_FONT_PX,
    PAGE_WIDTH_PX,
    ROLE_NAMES,
    cooling_name,
    fitting,
    fmt,
    new_drawing,
    plural,
    wrap,
)

U_PX = 11  # one rack unit: a 1U device holds one line of 10 px text
RACK_W, COL_GAP, MARGIN = 140, 28, 10
HEAD_H, FOOT_H, ROW_GAP, TITLE_H, LINE_H = 50, 36, 18, 48, 15
DEVICE_W = RACK_W - 22  # the right edge of the rack holds the PDU bars
KIND_CSS = {"system": "unit-system", "switch": "unit-switch", "storage": "unit-storage"}
ROLE_ORDER = {"compute": 0, "network": 1, "management": 2}


@dataclass(frozen=True)
class RackGroup:
    """A distinct rack build and every rack of the plan built that way."""

    rack: RackView
    ids: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.ids)


def rack_groups(racks: tuple[RackView, ...]) -> list[RackGroup]:
    """Racks grouped by build (role, contents, cooling), compute first, then network and management, each in
    first-seen order; the counts add up to the plan's racks."""
    groups: dict[tuple, list[RackView]] = {}
    for rack in racks:
        key = (rack.role, tuple((device.id, device.quantity) for device in rack.devices), rack.cooling)
        groups.setdefault(key, []).append(rack)
    ordered = sorted(groups.values(), key=lambda members: ROLE_ORDER.get(members[0].role, 3))
    return [RackGroup(members[0], tuple(rack.id for rack in members)) for members in ordered]


def _columns(width_px: float) -> int:
    return max(1, int((width_px - 2 * MARGIN + COL_GAP) // (RACK_W + COL_GAP)))


class RackElevationSVG:
    """The groups (all, or one page's share) drawn in rows that fit `width_px`, with a title and the key."""

    def __init__(
        self,
        racks: RacksView,
        width_px: float = PAGE_WIDTH_PX,
        groups: list[RackGroup] | None = None,
        part: str = "",
        key: bool = True,
    ) -> None:
        self.view = racks
        self.width = width_px
        self.all_groups = rack_groups(racks.racks)
        self.groups = self.all_groups if groups is None else groups
        self.part = part
        self.columns = _columns(width_px)
        self.row_h = HEAD_H + racks.height_u * U_PX + FOOT_H + ROW_GAP
        self.key_lines = self._key_lines() if key else []
        rows = -(-len(self.groups) // self.columns)
        self.drawing_height = TITLE_H + rows * self.row_h + len(self.key_lines) * LINE_H + 10
        self.drawing = new_drawing(width_px, self.drawing_height, "Rack elevations")

    def render(self) -> str:
        self._title()
        for index, group in enumerate(self.groups):
            row, column = divmod(index, self.columns)
            self._rack(MARGIN + column * (RACK_W + COL_GAP), TITLE_H + row * self.row_h, group)
        self._key(TITLE_H + (-(-len(self.groups) // self.columns)) * self.row_h)
        return self.drawing.tostring()

    def _title(self) -> None:
        d, racks = self.drawing, self.view.racks
        by_role: dict[str, int] = {}
        for rack in racks:
            by_role[rack.role] = by_role.get(rack.role, 0) + 1
        roles = ", ".join(
            f"{fmt(n)} {role}" for role, n in sorted(by_role.items(), key=lambda r: ROLE_ORDER.get(r[0], 3))
        )
        d.add(d.text(f"Rack elevations{self.part}", insert=(MARGIN, 20), class_="title"))
        builds = plural(len(self.all_groups), "distinct build")
        note = f"{plural(len(racks), 'rack')}: {roles} · {builds}, each drawn once with its count"
        for line_no, line in enumerate(wrap(note, self.width - 2 * MARGIN)[:2]):
            d.add(d.text(line, insert=(MARGIN, 36 + line_no * 12), class_="small"))

    def _rack(self, x: float, y: float, group: RackGroup) -> None:
        d, rack = self.drawing, group.rack
        body_h = self.view.height_u * U_PX
        top = y + HEAD_H
        g = d.g(class_="rack-group")
        g["data-role"], g["data-count"], g["data-kw"] = rack.role, str(group.count), f"{rack.kw:g}"
        ids = ", ".join(group.ids[:12]) + (" ..." if group.count > 12 else "")
        g.set_desc(title=f"{ROLE_NAMES.get(rack.role, rack.role)} racks: {ids}")
        g.add(
            d.text(
                f"{ROLE_NAMES.get(rack.role, rack.role.capitalize())} x {fmt(group.count)}",
                insert=(x, y + 12),
                class_="label",
            )
        )
        g.add(d.text(f"{fmt(rack.kw)} kW · {plural(rack.feeds, 'feed')}", insert=(x, y + 27), class_="small"))
        g.add(d.rect(insert=(x, y + 33), size=(10, 10), class_=f"cool-{rack.cooling}"))
        g.add(d.text(cooling_name(rack.cooling), insert=(x + 14, y + 42), class_="small"))
        g.add(d.rect(insert=(x, top), size=(RACK_W, body_h), class_="rack"))
        for feed in range(rack.feeds):  # zero-U PDUs along the rear rail, one bar per feed
            g.add(d.rect(insert=(x + RACK_W - 7 - feed * 5, top + 3), size=(3, body_h - 6), class_="pdu"))
        self._devices(g, x + 3, top + body_h, rack)
        g.add(d.text(f"{rack.used_u}U used of {self.view.height_u}U", insert=(x, top + body_h + 14), class_="small"))
        span = group.ids[0] if group.count == 1 else f"{group.ids[0]} ... {group.ids[-1]}"
        g.add(d.text(span, insert=(x, top + body_h + 28), class_="small"))
        d.add(g)

    def _devices(self, g, x: float, bottom: float, rack: RackView) -> None:
        """Each device bottom-up at its stored height; big ones named one by one, runs of small ones once."""
        used_u = 0
        for device in rack.devices:
            if device.rack_units <= 0:
                continue
            run_u = device.rack_units * device.quantity
            top = bottom - (used_u + run_u) * U_PX
            if device.quantity == 1 or device.rack_units >= 4:
                for n in range(device.quantity):
                    y = bottom - (used_u + (n + 1) * device.rack_units) * U_PX
                    self._device(g, x, y, device, 1)
            else:
                self._device(g, x, top, device, device.quantity)
            used_u += run_u

    def _device(self, g, x: float, y: float, device: RackDeviceView, count: int) -> None:
        """One device, or a run of `count` identical ones with a divider per unit and one label for the run."""
        d = self.drawing
        unit_h = device.rack_units * U_PX
        block = d.g(class_="device")
        block["data-count"] = str(count)
        block.set_desc(
            title=f"{fmt(count)} x {device.label} ({device.rack_units}U)"
            if count > 1
            else f"{device.label} ({device.rack_units}U)"
        )
        block.add(
            d.rect(
                insert=(x, y + 0.5), size=(DEVICE_W, unit_h * count - 1), class_=KIND_CSS.get(device.kind, "unit-other")
            )
        )
        for n in range(1, count):
            block.add(d.line(start=(x, y + n * unit_h), end=(x + DEVICE_W, y + n * unit_h), class_="divider"))
        suffix = f" x {count}" if count > 1 else ""
        short = device.short or device.id
        name = fitting([device.label + suffix, short + suffix, f"{count}x {short}"], DEVICE_W - 6) or short
        baseline = y + min(unit_h, 2 * U_PX) / 2 + MIN_FONT_PX * 0.36  # inside the first unit, clear of dividers
        block.add(d.text(name, insert=(x + 4, baseline), class_="dev"))
        g.add(block)

    def _key_lines(self) -> list[tuple[str, str]]:
        """(css class of the swatch, text) per device drawn and one for the cooling bands."""
        devices: dict[str, RackDeviceView] = {}
        for group in self.all_groups:
            for device in group.rack.devices:
                if device.rack_units > 0:
                    devices.setdefault(device.id, device)
        width = self.width - 2 * MARGIN - 16
        lines = []
        for device in devices.values():
            short = device.short or device.id
            text = (
                f"{device.label}, {device.rack_units}U"
                if short == device.label
                else f"{short}: {device.label}, {device.rack_units}U"
            )
            lines += [
                (KIND_CSS.get(device.kind, "unit-other") if i == 0 else "", t) for i, t in enumerate(wrap(text, width))
            ]
        if self.view.cooling_thresholds_kw:
            bands = ", ".join(f"{label} up to {fmt(kw)} kW" for label, kw in self.view.cooling_thresholds_kw)
            text = f"Cooling by rack load (the plan's assumptions): {bands}, direct liquid above."
            lines += [("", t) for t in wrap(text, width)]
        return lines

    def _key(self, y: float) -> None:
        d = self.drawing
        for n, (css, text) in enumerate(self.key_lines):
            if css:
                d.add(d.rect(insert=(MARGIN, y + n * LINE_H), size=(10, 10), class_=f"{css} key-swatch"))
            d.add(d.text(text, insert=(MARGIN + 16, y + n * LINE_H + 9), class_="small"))


def racks_svg(racks: RacksView, width_px: float = PAGE_WIDTH_PX) -> str:
    return RackElevationSVG(racks, width_px).render()


def racks_svg_pages(racks: RacksView, width_px: float, max_height_px: float) -> list[str]:
    """The elevations split into drawings no taller than `max_height_px` (a printed page cannot split a drawing);
    the key follows the last rows, or stands alone when it does not fit under them."""
    columns = _columns(width_px)
    groups = rack_groups(racks.racks)
    row_h = HEAD_H + racks.height_u * U_PX + FOOT_H + ROW_GAP
    per_page = columns * max(1, int((max_height_px - TITLE_H) // row_h))
    chunks = [groups[i : i + per_page] for i in range(0, len(groups), per_page)] or [[]]
    if len(chunks) == 1:
        return [RackElevationSVG(racks, width_px).render()]
    last = RackElevationSVG(racks, width_px, chunks[-1], key=True)
    key_apart = last.drawing_height > max_height_px
    total = len(chunks) + key_apart
    pages = []
    for n, chunk in enumerate(chunks, start=1):
        with_key = n == len(chunks) and not key_apart
        pages.append(RackElevationSVG(racks, width_px, chunk, f" ({n} of {total})", key=with_key).render())
    if key_apart:
        pages.append(RackElevationSVG(racks, width_px, [], f" ({total} of {total}): key", key=True).render())
    return pages
