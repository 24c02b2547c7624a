"""The build's parts as view models: the BOM grouped by category with subtotals, one rack's devices, one fabric's
tiers and link bundles. Read from the stored plan's typed parts only (no catalog, no live prices); split from
`planner/outputs/plan_view.py`, which builds its views with these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

from .formatting import device_short_name
from .view_models import BomGroup, BomLine, BomView, FabricView, LinkBundle, RackDeviceView, RackView

if TYPE_CHECKING:  # annotations only: at run time the engine is reached through planner.adapter
    from planner.adapter import BomLine as StoredBomLine
    from planner.adapter import FabricNetwork, RackEntry, TopologyLink, TopologyNode

__all__ = ["bom_group", "bom_view", "fabric_view", "rack_view"]


def bom_view(lines: Sequence[StoredBomLine] | None, hardware_usd: Decimal | None) -> BomView:
    """BOM lines grouped by category (first-seen order) with their subtotals.

    The total is the plan's own figure priced from these lines (`costs.onprem.capex_usd` when the BOM carries the
    capex lines beyond the hardware, else `hardware_usd`); a plan
    stored without costs shows the exact sum of its stored extended prices. A group or total with an unpriced line
    has none: a partial sum would understate the build.
    """
    grouped: dict[str, list[BomLine]] = {}
    for line in lines or ():
        category = line.category or "other"
        grouped.setdefault(category, []).append(
            BomLine(
                part_number=line.part_number or "",
                manufacturer=line.manufacturer or "",
                description=line.description or "",
                category=category,
                quantity=line.quantity,
                unit_price_usd=line.unit_price_usd,
                extended_price_usd=line.extended_price_usd,
                price_confidence=line.price_confidence,
                price_source=line.price_source,
            )
        )
    groups = tuple(bom_group(category, group) for category, group in grouped.items())
    total = None
    if groups and all(group.subtotal_usd is not None for group in groups):
        total = hardware_usd if hardware_usd is not None else sum((g.subtotal_usd for g in groups), Decimal(0))
    return BomView(groups, total, sum(len(group.lines) for group in groups))


def bom_group(category: str, lines: list[BomLine]) -> BomGroup:
    prices = [line.extended_price_usd for line in lines]
    subtotal = sum(prices, Decimal(0)) if all(price is not None for price in prices) else None  # type: ignore[arg-type]
    return BomGroup(category, tuple(lines), subtotal)


def rack_view(rack: RackEntry, part_numbers: Mapping[str, str]) -> RackView:
    devices = tuple(
        RackDeviceView(
            item.id,
            item.quantity,
            item.rack_units or 0,
            item.kind or "other",
            item.label or item.id,
            device_short_name(item.id, item.label or "", part_numbers.get(item.id)),
        )
        for item in rack.items
    )
    return RackView(rack.id, rack.role, float(rack.kw), rack.feeds, rack.cooling, rack.rack_units, devices, rack.row)


def fabric_view(
    key: str, network: FabricNetwork, nodes: Sequence[TopologyNode], links: Sequence[TopologyLink]
) -> FabricView:
    tier_counts = {tier: getattr(network, tier) for tier in ("core", "spine", "leaf") if getattr(network, tier)}
    parts: dict[str, str] = {}
    for node in nodes:
        if node.fabric == key and node.tier in tier_counts:
            parts.setdefault(node.tier, node.part or "")
    bundles: dict[str, LinkBundle] = {}
    for link in links:
        if link.fabric == key and link.tier and link.tier not in bundles:
            bundles[link.tier] = LinkBundle(link.links, link.link_gbps, link.medium)
    return FabricView(
        key=key,
        present=bool(network.leaf),
        technology=network.technology,
        tiers=network.tiers,
        tier_counts=tier_counts,
        tier_parts=parts,
        node_links=network.node_links,
        bundle_counts={
            "node-leaf": network.node_links,
            "leaf-spine": network.leaf_spine_links,
            "spine-core": network.spine_core_links,
        },
        bundles=bundles,
        planes=network.planes or 1,
        link_gbps=network.link_gbps,
        notes=tuple(network.notes),
    )
