"""The four fabrics by tier, with switch counts and the links between tiers.

Drawn as one column per fabric (compute, storage, in-band, out-of-band), tiers stacked from the
systems at the bottom to the core at the top, each link bundle labelled with its count, speed
and medium. Reads only the plan JSON (fabric + topology), never the database.
"""

from __future__ import annotations

from typing import Any

from .base import fmt, new_drawing

FABRICS = [("compute", "Compute"), ("storage", "Storage"), ("inband", "In-band"), ("oob", "Out-of-band")]
TIERS = ["core", "spine", "leaf"]
COLUMN_W, BOX_W, BOX_H, ROW_H, TOP = 250, 200, 46, 110, 70


class TopologySVG:
    def __init__(self, result: dict[str, Any]) -> None:
        self.fabric = result.get("fabric") or {}
        self.topology = result.get("topology") or {}
        self.cluster = result.get("cluster") or {}
        depth = max([sum(1 for tier in TIERS if (self.fabric.get(key) or {}).get(tier)) for key, _ in FABRICS] + [1])
        self.drawing = new_drawing(COLUMN_W * len(FABRICS) + 20, TOP + ROW_H * depth + BOX_H + 20, "Cluster fabrics")

    def render(self) -> str:
        """A short recipe: title, then one column per fabric."""
        self._title()
        for index, (key, label) in enumerate(FABRICS):
            self._fabric_column(index, key, label)
        return self.drawing.tostring()

    def _title(self) -> None:
        d = self.drawing
        system, systems = self.cluster.get("system", "?"), self.cluster.get("systems", 0)
        d.add(d.text(f"Fabrics for {fmt(systems)} x {system}", insert=(12, 24), class_="title"))
        compute = self.fabric.get("compute") or {}
        if compute.get("tiers"):
            rails = self._rails()
            note = f"compute: {compute.get('technology', '')}, {compute.get('tiers')} tiers, non-blocking"
            if rails:
                note += f", rail-optimised ({rails} rails: NIC i of every system to leaf i of its SU)"
            d.add(d.text(note, insert=(12, 44), class_="small"))

    def _rails(self) -> int | None:
        for node in self.topology.get("nodes", []):
            if node.get("kind") == "system" and node.get("rails"):
                return node["rails"]
        return (self.fabric.get("compute") or {}).get("rails")

    def _switch_part(self, fabric: str, tier: str) -> str:
        for node in self.topology.get("nodes", []):
            if node.get("fabric") == fabric and node.get("tier") == tier:
                return str(node.get("part", "")).upper()
        return ""

    def _link_label(self, fabric: str, tier_pair: str) -> str:
        for link in self.topology.get("links", []):
            if link.get("fabric") == fabric and link.get("tier") == tier_pair:
                return f"{fmt(link['links'])} x {fmt(link.get('link_gbps', 0))}G {link.get('medium', '')}".strip()
        return ""

    def _box(self, x: float, y: float, text: str, sub: str, css: str = "tier") -> None:
        d = self.drawing
        d.add(d.rect(insert=(x, y), size=(BOX_W, BOX_H), class_=css))
        d.add(d.text(text, insert=(x + BOX_W / 2, y + 20), text_anchor="middle", class_="count"))
        d.add(d.text(sub, insert=(x + BOX_W / 2, y + 36), text_anchor="middle", class_="small"))

    def _fabric_column(self, index: int, key: str, label: str) -> None:
        d = self.drawing
        block = self.fabric.get(key) or {}
        x = 12 + index * COLUMN_W
        d.add(d.text(label, insert=(x, TOP - 8), class_="label"))
        if not block or not block.get("leaf"):
            d.add(d.text("not needed for this plan", insert=(x, TOP + 20), class_="small"))
            return
        present = [tier for tier in TIERS if block.get(tier)]
        rows = {tier: row for row, tier in enumerate(present)}
        bottom_y = TOP + ROW_H * len(present)
        for tier, row in rows.items():
            y = TOP + row * ROW_H
            self._box(x, y, f"{fmt(block[tier])} {tier}", self._switch_part(key, tier))
        endpoints = "systems" if key != "oob" else "management ports"
        self._box(x, bottom_y, f"{fmt(self.cluster.get('systems', 0))} systems" if key != "oob" else endpoints,
                  f"{fmt(block.get('node_links', 0))} links", css="tier tier-system")
        # Link bundles between adjacent tiers, labelled with count, speed and medium.
        pairs = [("leaf", None, "node-leaf", block.get("node_links")), ("spine", "leaf", "leaf-spine",
                 block.get("leaf_spine_links")), ("core", "spine", "spine-core", block.get("spine_core_links"))]
        for upper, lower, name, count in pairs:
            if upper not in rows or not count:
                continue
            y_top = TOP + rows[upper] * ROW_H + BOX_H
            y_bottom = bottom_y if lower is None else TOP + rows[lower] * ROW_H
            centre = x + BOX_W / 2
            d.add(d.line(start=(centre, y_top), end=(centre, y_bottom), class_="link"))
            text = self._link_label(key, name) or f"{fmt(count)} links"
            d.add(d.text(text, insert=(centre + 6, (y_top + y_bottom) / 2 + 4), class_="linklabel"))


def topology_svg(result: dict[str, Any]) -> str:
    return TopologySVG(result).render()
