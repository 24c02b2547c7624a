"""The cluster's networks by tier: tiers as rows, counts in the boxes, link counts and speeds on the edges.

The compute fabric gets the full width: core and spine switches as one row each, then its scalable units side by
side (each SU's leaves above its systems), so a 16,384-GPU plan shows 65 SUs as a few SU columns and "61 more SUs
alike" instead of 520 leaf shapes; a fabric of several planes says so (the counts are totals over the planes).
Storage, in-band and out-of-band networks follow as smaller columns of tiers. A tier of a few switches is drawn
switch by switch, so a small plan's diagram is exact; a large one is drawn as counts. The number of shapes is
bounded by the width, never by the plan's size.

Reads only the plan's stored fabric and topology (through `TopologyView`), never the database or the catalog.
"""

from __future__ import annotations

from planner.outputs.formatting import catalog_name
from planner.outputs.view_models import FabricView, TopologyView

from .base import PAGE_WIDTH_PX, fitting, fmt, new_drawing, plural, wrap

OTHER_FABRICS = [("storage", "Storage network"), ("inband", "In-band network"), ("oob", "Out-of-band network")]
MARGIN, LABEL_W, ROW_H, BOX_H, SU_W, SU_GAP = 10, 62, 84, 40, 118, 10
NOTE_LINES = 3
MAX_ICONS = 32  # a tier of at most this many switches is drawn one icon per switch
SIDE_TIERS = {"ufm-leaf": "ufm", "storage-leaf": "storage", "mgmt-leaf": "mgmt"}
ENDPOINT_NAMES = {"ufm": "UFM appliance", "storage": "storage appliance", "mgmt": "management server"}
MEDIA = {"mmf": "MMF", "smf": "SMF", "dac": "DAC", "acc": "ACC", "copper_rj45": "RJ45"}


def _bundle_text(fabric: FabricView, name: str) -> str | None:
    bundle = fabric.bundles.get(name)
    if bundle is not None:
        return f"{fmt(bundle.links)} x {fmt(bundle.link_gbps)}G {MEDIA.get(bundle.medium, bundle.medium)}".strip()
    count = fabric.bundle_counts.get(name)
    return f"{fmt(count)} links" if count else None


def _technology(fabric: FabricView) -> str:
    """`infiniband-ndr` -> 'InfiniBand NDR', `roce-400g` -> 'RoCE 400G', `ethernet-1g` -> 'Ethernet 1G'."""
    names = {"infiniband": "InfiniBand", "ethernet": "Ethernet", "roce": "RoCE", "spectrum": "Spectrum"}
    words = fabric.technology.replace("_", "-").split("-")
    return " ".join(names.get(word, word.upper() if word[:1].isdigit() or len(word) <= 3 else word) for word in words)


class TopologySVG:
    def __init__(self, topology: TopologyView, width_px: float = PAGE_WIDTH_PX) -> None:
        self.topology = topology
        self.width = width_px
        compute = topology.fabrics.get("compute")
        self.compute = compute if compute is not None and compute.present else None
        compute_rows = len(self.compute.tier_counts) + 1 if self.compute else 0
        self.compute_h = 44 + compute_rows * ROW_H + NOTE_LINES * 14 if self.compute else 64
        others = [(key, label) for key, label in OTHER_FABRICS if key in topology.fabrics]
        self.other_cols = max(1, min(len(others), int((width_px - 2 * MARGIN) // 220)))
        self.others = others
        depth = max([len(topology.fabrics[key].tier_counts) + 1 for key, _ in others] + [1])
        self.other_h = 30 + depth * ROW_H + 26
        other_rows = -(-len(others) // self.other_cols)
        height = 58 + self.compute_h + other_rows * self.other_h
        self.drawing = new_drawing(width_px, height, "Cluster networks by tier")

    def render(self) -> str:
        d, topology = self.drawing, self.topology
        system = catalog_name(topology.system)  # the product ("NVIDIA GB200 NVL72 rack"), not "GB200-NVL72"
        d.add(d.text(f"Networks for {fmt(topology.systems)} x {system}", insert=(MARGIN, 20), class_="title"))
        d.add(
            d.text(
                "Tiers as rows, switch counts in the boxes, link count x speed and medium on each edge.",
                insert=(MARGIN, 38),
                class_="small",
            )
        )
        self._compute(58)
        for index, (key, label) in enumerate(self.others):
            row, column = divmod(index, self.other_cols)
            column_w = (self.width - 2 * MARGIN) / self.other_cols
            self._column(
                MARGIN + column * column_w,
                58 + self.compute_h + row * self.other_h,
                column_w - 14,
                topology.fabrics[key],
                label,
            )
        return d.tostring()

    # ------------------------------------------------------------------------------------------ compute fabric

    def _compute(self, y: float) -> None:
        d, fabric = self.drawing, self.compute
        if fabric is None:
            d.add(d.text("Compute fabric: none", insert=(MARGIN, y + 14), class_="label"))
            stored = self.topology.fabrics.get("compute")
            why = stored.notes[0] if stored is not None and stored.notes else ""
            for n, line in enumerate(wrap(why, self.width - 2 * MARGIN)[:2]):
                d.add(d.text(line, insert=(MARGIN, y + 30 + n * 13), class_="small"))
            return
        planes = f", {fabric.planes} planes (counts are totals over the planes)" if fabric.planes > 1 else ""
        head = (
            f"Compute fabric: {_technology(fabric)}, {plural(fabric.tiers or 0, 'tier')}, "
            f"{fmt(fabric.link_gbps)}G links{planes}"
        )
        for n, line in enumerate(wrap(head, self.width - 2 * MARGIN, 12)[:2]):
            d.add(d.text(line, insert=(MARGIN, y + 14 + n * 15), class_="label"))
        top = y + 44
        inner_x, inner_w = MARGIN + LABEL_W, self.width - 2 * MARGIN - LABEL_W
        shown = self._shown_sus(inner_w)
        # Core and spine span the SU columns (at least 300 px), so every edge lands on the boxes it joins.
        span = min(inner_w, max(300.0, len(shown) * (SU_W + SU_GAP) - SU_GAP))
        tiers = [tier for tier in ("core", "spine") if tier in fabric.tier_counts]
        for row, tier in enumerate(tiers):
            ty = top + row * ROW_H
            self._row_label(ty, tier.capitalize())
            self._tier_box(inner_x, ty, span, fabric, tier)
            lower = "spine-core" if tier == "core" else "leaf-spine"
            self._edge(inner_x + span / 2, ty + BOX_H, ty + ROW_H, _bundle_text(fabric, lower))
        self._su_rows(top + len(tiers) * ROW_H, inner_x, span, inner_w, shown)
        if fabric.planes > 1:
            d.add(d.rect(insert=(inner_x - 4, top - 6), size=(span + 8, (len(tiers) + 1) * ROW_H - 30), class_="plane"))

    def _shown_sus(self, width: float) -> list[int]:
        """The SU numbers drawn as columns (0 stands for the gap of SUs alike)."""
        sus = max(1, self.topology.scalable_units)
        fit = max(3, int((width + SU_GAP) // (SU_W + SU_GAP)))
        return list(range(1, sus + 1)) if sus <= fit else [*range(1, fit - 1), 0, sus]

    def _su_rows(self, y: float, x: float, span: float, width: float, shown: list[int]) -> None:
        """Leaves and systems per SU, side by side under the spine; many SUs show the first ones, a gap, the last."""
        d, topology, fabric = self.drawing, self.topology, self.compute
        assert fabric is not None
        sus = max(1, topology.scalable_units)
        leaves = fabric.tier_counts.get("leaf", 0)
        per_su = leaves // sus if leaves % sus == 0 else None
        self._row_label(y, "Leaf")
        self._row_label(y + ROW_H, "Systems")
        offset = (span - (len(shown) * (SU_W + SU_GAP) - SU_GAP)) / 2
        for column, su in enumerate(shown):
            cx = x + offset + column * (SU_W + SU_GAP)
            if su == 0:
                hidden = sus - len(shown) + 1
                for n, line in enumerate(["...", f"{plural(hidden, 'more SU')}", "alike"]):
                    d.add(d.text(line, insert=(cx + SU_W / 2, y + 14 + n * 13), text_anchor="middle", class_="small"))
                continue
            leaf_text = plural(per_su, "leaf switch") if per_su else "leaves"
            self._box(cx, y, SU_W, f"SU {su}", leaf_text, per_su if per_su and per_su <= 16 else 0)
            self._box(
                cx,
                y + ROW_H,
                SU_W,
                f"SU {su}",
                f"up to {fmt(topology.su_systems)} systems" if topology.su_systems else "systems",
                0,
                css="tier tier-system",
            )
            d.add(d.line(start=(cx + SU_W / 2, y + BOX_H), end=(cx + SU_W / 2, y + ROW_H), class_="link-thin"))
        totals = f"{plural(leaves, 'leaf switch')} in {plural(sus, 'SU')}"
        node = _bundle_text(fabric, "node-leaf")
        systems = f"{fmt(topology.systems)} x {catalog_name(topology.system)} in all"
        lines = [totals, f"systems to leaves: {node}" if node else "", systems]
        side = self._side_links(fabric)
        self._notes(x + span + 14, y, x + width, [*lines, *side])

    def _side_links(self, fabric: FabricView) -> list[str]:
        out = []
        for tier, node in SIDE_TIERS.items():
            text, count = _bundle_text(fabric, tier), self.topology.endpoints.get(node)
            if tier in fabric.bundles and text:
                who = plural(count, ENDPOINT_NAMES[node]) if count else ENDPOINT_NAMES[node]
                out.append(f"{who} to leaves: {text}")
        return out

    def _notes(self, x: float, y: float, right: float, lines: list[str]) -> None:
        """Totals beside the SU columns when they fit there, else under the systems row."""
        d = self.drawing
        lines = [line for line in lines if line]
        if right - x < 160:
            return self._notes_below(y + ROW_H + BOX_H + 14, lines)
        wrapped = [part for line in lines for part in wrap(line, right - x)]
        for n, line in enumerate(wrapped):
            d.add(d.text(line, insert=(x, y + 12 + n * 14), class_="small"))
        return None

    def _notes_below(self, y: float, lines: list[str]) -> None:
        """At most NOTE_LINES lines under the systems row (the drawing's height leaves room for them)."""
        wrapped = wrap(" · ".join(lines), self.width - 2 * MARGIN - LABEL_W)
        for n, line in enumerate(wrapped[:NOTE_LINES]):
            self.drawing.add(self.drawing.text(line, insert=(MARGIN + LABEL_W, y + n * 14), class_="small"))

    # ------------------------------------------------------------------------------------------ shapes

    def _row_label(self, y: float, text: str) -> None:
        self.drawing.add(self.drawing.text(text, insert=(MARGIN, y + BOX_H / 2 + 4), class_="small"))

    def _tier_box(self, x: float, y: float, width: float, fabric: FabricView, tier: str) -> None:
        count = fabric.tier_counts[tier]
        part = fabric.tier_parts.get(tier, "").upper()
        self._box(x, y, width, plural(count, tier + " switch"), part, count if count <= MAX_ICONS else 0)

    def _box(self, x: float, y: float, width: float, text: str, sub: str, icons: int, css: str = "tier") -> None:
        """A tier box with its count; `icons` > 0 draws one small square per switch along its bottom edge."""
        d = self.drawing
        d.add(d.rect(insert=(x, y), size=(width, BOX_H), class_=css))
        d.add(d.text(text, insert=(x + width / 2, y + 15), text_anchor="middle", class_="count"))
        if sub:
            d.add(d.text(sub, insert=(x + width / 2, y + 28), text_anchor="middle", class_="small"))
        if icons:
            step = min(10.0, (width - 8) / icons)
            start = x + (width - step * icons) / 2
            for n in range(icons):
                d.add(
                    d.rect(
                        insert=(start + n * step + 1, y + BOX_H - 8),
                        size=(max(step - 2, 1), 5),
                        class_="unit-switch switch-icon",
                    )
                )

    def _edge(self, x: float, y1: float, y2: float, text: str | None) -> None:
        d = self.drawing
        d.add(d.line(start=(x, y1), end=(x, y2), class_="link"))
        if text:
            d.add(d.text(text, insert=(x + 6, (y1 + y2) / 2 + 4), class_="linklabel"))

    # ------------------------------------------------------------------------------------------ other fabrics

    def _column(self, x: float, y: float, width: float, fabric: FabricView, label: str) -> None:
        d = self.drawing
        d.add(d.text(label, insert=(x, y + 12), class_="label"))
        if not fabric.present:
            d.add(d.text("not needed for this plan", insert=(x, y + 30), class_="small"))
            return
        d.add(
            d.text(
                fitting([f"{_technology(fabric)}, {fmt(fabric.link_gbps)}G"], width) or "",
                insert=(x, y + 27),
                class_="small",
            )
        )
        box_w = min(width, 200.0)
        present = [tier for tier in ("core", "spine", "leaf") if tier in fabric.tier_counts]
        top = y + 36
        for row, tier in enumerate(present):
            self._tier_box(x, top + row * ROW_H, box_w, fabric, tier)
            lower = {"core": "spine-core", "spine": "leaf-spine", "leaf": "node-leaf"}[tier]
            if tier == "leaf" and fabric.key == "oob":
                lower = "device-leaf"
            self._edge(x + box_w / 2, top + row * ROW_H + BOX_H, top + (row + 1) * ROW_H, _bundle_text(fabric, lower))
        bottom = top + len(present) * ROW_H
        ends = self._endpoints(fabric, width)
        self._box(x, bottom, box_w, ends[0], ends[1], 0, css="tier tier-system")

    def _endpoints(self, fabric: FabricView, width: float) -> tuple[str, str]:
        """What the fabric's leaves connect: the systems, plus storage or management servers on their own links."""
        if fabric.key == "oob":
            ports = self.topology.endpoints.get("devices")
            return (f"{fmt(ports)} management ports" if ports else "management ports", "every device's BMC")
        short = {"ufm": "UFM", "storage": "storage", "mgmt": "head nodes"}
        extra = [short[node] for tier, node in SIDE_TIERS.items() if tier in fabric.bundles]
        sub = fitting(["+ " + ", ".join(extra), "+ more"], min(200.0, width) - 8) if extra else ""
        return plural(self.topology.systems, "system"), sub or ""


def topology_svg(topology: TopologyView, width_px: float = PAGE_WIDTH_PX) -> str:
    return TopologySVG(topology, width_px).render()
