"""The four fabrics by tier, with switch counts and the links between tiers.

Drawn as one column per fabric (compute, storage, in-band, out-of-band), tiers stacked from the
systems at the bottom to the core at the top, each link bundle labelled with its count, speed
and medium. Reads only the plan's stored fabric and topology (through `TopologyView`), never the database
or the catalog.
"""

from __future__ import annotations

from planner.outputs.view_models import FabricView, TopologyView

from .base import fmt, new_drawing

FABRICS = [("compute", "Compute"), ("storage", "Storage"), ("inband", "In-band"), ("oob", "Out-of-band")]
TIERS = ["core", "spine", "leaf"]
COLUMN_W, BOX_W, BOX_H, ROW_H, TOP = 250, 200, 46, 110, 70


class TopologySVG:
    def __init__(self, topology: TopologyView) -> None:
        self.topology = topology
        depth = max([len(fabric.tier_counts) for fabric in topology.fabrics.values()] + [1])
        self.drawing = new_drawing(COLUMN_W * len(FABRICS) + 20, TOP + ROW_H * depth + BOX_H + 20, "Cluster fabrics")

    def render(self) -> str:
        """A short recipe: title, then one column per fabric."""
        self._title()
        for index, (key, label) in enumerate(FABRICS):
            self._fabric_column(index, self.topology.fabrics[key], label)
        return self.drawing.tostring()

    def _title(self) -> None:
        d, topology = self.drawing, self.topology
        d.add(d.text(f"Fabrics for {fmt(topology.systems)} x {topology.system}", insert=(12, 24), class_="title"))
        compute = topology.fabrics["compute"]
        if compute.tiers:
            note = f"compute: {compute.technology}, {compute.tiers} tiers, non-blocking"
            d.add(d.text(note, insert=(12, 44), class_="small"))

    def _box(self, x: float, y: float, text: str, sub: str, css: str = "tier") -> None:
        d = self.drawing
        d.add(d.rect(insert=(x, y), size=(BOX_W, BOX_H), class_=css))
        d.add(d.text(text, insert=(x + BOX_W / 2, y + 20), text_anchor="middle", class_="count"))
        d.add(d.text(sub, insert=(x + BOX_W / 2, y + 36), text_anchor="middle", class_="small"))

    def _fabric_column(self, index: int, fabric: FabricView, label: str) -> None:
        d = self.drawing
        x = 12 + index * COLUMN_W
        d.add(d.text(label, insert=(x, TOP - 8), class_="label"))
        if not fabric.present:
            d.add(d.text("not needed for this plan", insert=(x, TOP + 20), class_="small"))
            return
        present = [tier for tier in TIERS if tier in fabric.tier_counts]
        rows = {tier: row for row, tier in enumerate(present)}
        bottom_y = TOP + ROW_H * len(present)
        for tier, row in rows.items():
            part = fabric.tier_parts.get(tier, "").upper()
            self._box(x, TOP + row * ROW_H, f"{fmt(fabric.tier_counts[tier])} {tier}", part)
        bottom = f"{fmt(self.topology.systems)} systems" if fabric.key != "oob" else "management ports"
        self._box(x, bottom_y, bottom, f"{fmt(fabric.node_links)} links", css="tier tier-system")
        # Link bundles between adjacent tiers, labelled with count, speed and medium.
        pairs = [("leaf", None, "node-leaf"), ("spine", "leaf", "leaf-spine"), ("core", "spine", "spine-core")]
        for upper, lower, name in pairs:
            count = fabric.bundle_counts.get(name)
            if upper not in rows or not count:
                continue
            y_top = TOP + rows[upper] * ROW_H + BOX_H
            y_bottom = bottom_y if lower is None else TOP + rows[lower] * ROW_H
            centre = x + BOX_W / 2
            d.add(d.line(start=(centre, y_top), end=(centre, y_bottom), class_="link"))
            bundle = fabric.bundles.get(name)
            text = (
                f"{fmt(bundle.links)} x {fmt(bundle.link_gbps)}G {bundle.medium}".strip()
                if bundle
                else f"{fmt(count)} links"
            )
            d.add(d.text(text, insert=(centre + 6, (y_top + y_bottom) / 2 + 4), class_="linklabel"))


def topology_svg(topology: TopologyView) -> str:
    return TopologySVG(topology).render()
