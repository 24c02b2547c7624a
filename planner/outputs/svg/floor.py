"""Floor plan: the plan's rows of racks, each rack with its kW and cooling method, central racks marked.

Rows come from the stored rack layout (each rack's `row`, in layout order): one row per scalable unit (its compute
racks and its network rack), then the central row of spine/core switches and management racks. Consecutive rows
whose racks are alike (role, cooling, kW to 0.1) are drawn once with the row numbers they stand for, so 66 rows of
a 16,384-GPU plan are five drawn rows; a long row wraps onto further lines rather than scrolling sideways. The plan
stores no data halls or aisle positions, so none are drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.outputs.view_models import RacksView, RackView

from .base import PAGE_WIDTH_PX, ROLE_NAMES, cooling_name, fmt, new_drawing, plural, wrap

MARGIN, LABEL_W, CELL_W, CELL_H, CELL_GAP, LINE_GAP, GROUP_GAP, TITLE_H = 10, 120, 46, 30, 4, 6, 16, 52
ROLE_LETTER = {"compute": "C", "network": "N", "management": "M"}


@dataclass(frozen=True)
class RowGroup:
    """Consecutive rows of the layout whose racks are alike, and one of them to draw."""

    rows: tuple[int, ...]
    racks: tuple[RackView, ...]


def _signature(racks: list[RackView]) -> tuple:
    return tuple((rack.role, rack.cooling, round(rack.kw, 1)) for rack in racks)


def row_groups(racks: tuple[RackView, ...]) -> list[RowGroup]:
    """The layout's rows in order, consecutive alike rows merged; every rack of the plan is in exactly one row."""
    rows: dict[int, list[RackView]] = {}
    for rack in racks:
        rows.setdefault(rack.row, []).append(rack)
    groups: list[RowGroup] = []
    for number, members in rows.items():
        if groups and _signature(list(groups[-1].racks)) == _signature(members):
            groups[-1] = RowGroup((*groups[-1].rows, number), groups[-1].racks)
        else:
            groups.append(RowGroup((number,), tuple(members)))
    return groups


def _row_name(group: RowGroup) -> str:
    first, last = group.rows[0], group.rows[-1]
    return f"Row {first}" if first == last else f"Rows {first}-{last}"


class FloorPlanSVG:
    def __init__(self, racks: RacksView, width_px: float = PAGE_WIDTH_PX) -> None:
        self.view = racks
        self.width = width_px
        self.groups = row_groups(racks.racks)
        self.last_row = max((rack.row for rack in racks.racks), default=0)
        self.per_line = max(1, int((width_px - 2 * MARGIN - LABEL_W + CELL_GAP) // (CELL_W + CELL_GAP)))
        self.key = self._key_lines()
        body = sum(self._group_h(group) for group in self.groups)
        self.drawing = new_drawing(width_px, TITLE_H + body + 16 * len(self.key) + 10, "Floor plan")

    def _lines(self, group: RowGroup) -> int:
        return -(-len(group.racks) // self.per_line)

    def _group_h(self, group: RowGroup) -> float:
        label_h = 44 if any(rack.role == "compute" for rack in group.racks) else 58  # room for the role counts
        return max(self._lines(group) * (CELL_H + LINE_GAP), label_h) + GROUP_GAP

    def render(self) -> str:
        d = self.drawing
        rows = len({rack.row for rack in self.view.racks})
        d.add(d.text("Floor plan", insert=(MARGIN, 20), class_="title"))
        note = (
            f"{plural(len(self.view.racks), 'rack')} in {plural(rows, 'row')}: each rack coloured by its cooling, "
            "with its kW; N network, M management, the others compute; consecutive rows alike drawn once."
        )
        for n, line in enumerate(wrap(note, self.width - 2 * MARGIN)[:2]):
            d.add(d.text(line, insert=(MARGIN, 36 + n * 12), class_="small"))
        y = TITLE_H
        for group in self.groups:
            self._group(y, group)
            y += self._group_h(group)
        self._draw_key(y)
        return d.tostring()

    def _group(self, y: float, group: RowGroup) -> None:
        d = self.drawing
        g = d.g(class_="floor-row")
        g["data-rows"], g["data-racks"] = str(len(group.rows)), str(len(group.racks))
        g.add(d.text(_row_name(group), insert=(MARGIN, y + 13), class_="label"))
        roles: dict[str, int] = {}
        for rack in group.racks:
            roles[rack.role] = roles.get(rack.role, 0) + 1
        if len(group.rows) > 1:
            notes = [f"{len(group.rows)} rows alike"]
        elif group.rows[-1] == self.last_row and "compute" not in roles:
            notes = ["central row", *(f"{n} {role}" for role, n in roles.items())]
        elif "compute" not in roles:
            notes = ["no compute racks", *(f"{n} {role}" for role, n in roles.items())]
        else:
            notes = [plural(len(group.racks), "rack")]
        for n, note in enumerate(notes[:3]):
            g.add(d.text(note, insert=(MARGIN, y + 27 + n * 13), class_="small"))
        for index, rack in enumerate(group.racks):
            line, column = divmod(index, self.per_line)
            self._cell(g, MARGIN + LABEL_W + column * (CELL_W + CELL_GAP), y + line * (CELL_H + LINE_GAP), rack)
        d.add(g)

    def _cell(self, g, x: float, y: float, rack: RackView) -> None:
        """A rack: its cooling as the fill, its kW, and N or M with an outline for network and management racks
        (compute, the common case, unmarked); its id and figures on hover. Three elements, as a floor can be long."""
        d = self.drawing
        role = ROLE_NAMES.get(rack.role, rack.role)
        outline = f" role-{rack.role}" if rack.role != "compute" else ""
        cell = d.rect(
            insert=(x, y), size=(CELL_W, CELL_H), class_=f"floor-cell floor-rack cool-{rack.cooling}{outline}"
        )
        cell.set_desc(title=f"{rack.id}: {role}, {fmt(rack.kw)} kW, {cooling_name(rack.cooling)}")
        g.add(cell)
        letter = f" {ROLE_LETTER.get(rack.role, '?')}" if rack.role != "compute" else ""
        g.add(d.text(f"{fmt(rack.kw)}{letter}", insert=(x + CELL_W / 2, y + 21), text_anchor="middle", class_="dev"))

    def _key_lines(self) -> list[tuple[str, str]]:
        by_cooling: dict[str, int] = {}
        for rack in self.view.racks:
            by_cooling[rack.cooling] = by_cooling.get(rack.cooling, 0) + 1
        lines = [
            (f"floor-cell cool-{method}", f"{cooling_name(method)}: {plural(n, 'rack')}")
            for method, n in by_cooling.items()
        ]
        lines.append(
            ("floor-cell key-role role-network", "network rack (leaf switches in each row; spine and core centrally)")
        )
        if any(rack.role == "management" for rack in self.view.racks):
            lines.append(("floor-cell key-role role-management", "management rack (UFM, head nodes, storage)"))
        lines.append(("", "Numbers are each rack's maximum kW as the plan laid it out."))
        return lines

    def _draw_key(self, y: float) -> None:
        d = self.drawing
        for n, (css, text) in enumerate(self.key):
            if css:
                d.add(d.rect(insert=(MARGIN, y + n * 16), size=(14, 11), class_=css))
            d.add(d.text(text, insert=(MARGIN + 20, y + n * 16 + 10), class_="small"))


def floor_svg(racks: RacksView, width_px: float = PAGE_WIDTH_PX) -> str:
    return FloorPlanSVG(racks, width_px).render()
