"""The one reader of a stored plan for every output: page, compare table, charts, SVG diagrams and PDF report.

Outputs show what the plan stored when it was computed. This module is the only place that reads the stored
result JSON: it turns it into small typed views, and the templates, charts, SVG and PDF read those. It never
looks at the live catalog or live prices and never recomputes a figure the result already holds (rack units,
extended prices, totals), so a plan re-opened after a catalog or price change shows what it showed before.
When the engine's typed `PlanResult` lands, only this module changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any

from .view_models import (
    BomGroup,
    BomLine,
    BomView,
    CostBreakdown,
    CostOverTime,
    CostSeries,
    FabricView,
    Figure,
    FrontierPoint,
    FrontierView,
    LinkBundle,
    PlanSummary,
    RackDeviceView,
    RacksView,
    RackView,
    ServingCurve,
    TopologyView,
)

__all__ = [
    "HEADLINES",
    "BomGroup",
    "BomLine",
    "BomView",
    "CostOverTime",
    "Figure",
    "FrontierView",
    "PlanSummary",
    "PlanView",
    "RackView",
    "RacksView",
    "ServingCurve",
    "TopologyView",
    "lookup",
    "plan_view",
]

# (label, path in the plan, unit): the figures a plan leads with, in the page, the compare table and the PDF.
HEADLINES: list[tuple[str, str, str]] = [
    ("System", "cluster.system", ""),
    ("GPUs", "cluster.gpus", "GPUs"),
    ("Time to train", "training.days", "days"),
    ("Ideal time to train", "training.days_ideal", "days"),
    ("MFU", "training.mfu", "%"),
    ("Step time", "training.step_time_s", "s"),
    ("Memory per GPU", "training.memory_per_gpu_gib", "GiB"),
    ("Replicas", "inference.replicas", ""),
    ("Time to first token", "inference.ttft_ms", "ms"),
    ("Time per output token", "inference.tpot_ms", "ms"),
    ("Fleet throughput", "inference.tokens_per_s", "tok/s"),
    ("Racks", "cluster.racks", ""),
    ("IT power", "power.it_kw", "kW"),
    ("Facility power", "power.facility_kw", "kW"),
    ("Cooling", "cooling.method", ""),
    ("Capex", "costs.onprem.capex_usd", "USD"),
    ("TCO", "costs.onprem.tco_usd", "USD"),
    ("This job on a shared cluster", "costs.onprem.job_usd_shared", "USD"),
    ("Cheapest option for this job", "costs.comparison.cheapest.job_usd", "USD"),
]
# Stored as fractions (0.41), shown as percentages (41 %).
PERCENT_PATHS = {"training.mfu"}
# The stage blocks listed under "All figures by stage", in the plan's own order.
STAGE_BLOCKS = ("training", "inference", "cluster", "power", "cooling", "storage")
COOLING_THRESHOLDS = (
    ("cooling_air_max_kw", "air"),
    ("cooling_containment_max_kw", "air + containment"),
    ("cooling_rdhx_max_kw", "rear-door HX"),
)


def lookup(data: Any, path: str) -> Any:
    """`a.b.c` in nested dicts, or None when any step is missing."""
    for key in path.split("."):
        if not isinstance(data, Mapping) or key not in data:
            return None
        data = data[key]
    return data


def _money(value: Any) -> Decimal | None:
    """A stored money figure (a decimal string) as Decimal; None when absent or not a number."""
    if value in (None, ""):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _shown(path: str, value: Any) -> Any:
    return value * 100 if path in PERCENT_PATHS and isinstance(value, int | float) else value


class PlanView:
    """A stored plan result as the outputs see it. Each part is read on first use, so a view that needs only
    the headlines does not read the racks."""

    def __init__(self, result: Mapping[str, Any] | None) -> None:
        self.raw: Mapping[str, Any] = result or {}

    def __bool__(self) -> bool:
        return bool(self.raw)

    def value(self, path: str) -> Any:
        """A headline figure as shown (fractions as percentages), or None."""
        return _shown(path, lookup(self.raw, path))

    # ---------------------------------------------------------------------------------- page sections

    @property
    def feasible(self) -> bool:
        return bool(self.raw.get("feasible"))

    @property
    def problems(self) -> list[str]:
        return list(self.raw.get("problems") or [])

    @property
    def price_snapshot(self) -> Mapping[str, Any] | None:
        return self.raw.get("price_snapshot")

    @property
    def costs(self) -> Mapping[str, Any] | None:
        """The stored costs block as is (its own template lays it out)."""
        return self.raw.get("costs")

    @property
    def assumptions(self) -> Mapping[str, Mapping[str, Any]]:
        return self.raw.get("assumptions") or {}

    @property
    def explain(self) -> Mapping[str, Mapping[str, Any]]:
        return self.raw.get("explain") or {}

    @property
    def parallelism(self) -> Mapping[str, Any]:
        return lookup(self.raw, "training.parallelism") or {}

    @property
    def memory_breakdown_gib(self) -> Mapping[str, Any]:
        return lookup(self.raw, "training.memory_breakdown_gib") or {}

    @property
    def stage_blocks(self) -> list[tuple[str, Mapping[str, Any]]]:
        return [(key, block) for key, block in self.raw.items() if key in STAGE_BLOCKS and isinstance(block, Mapping)]

    @property
    def candidates(self) -> list[Mapping[str, Any]]:
        return list(self.raw.get("candidates") or [])

    @property
    def bom_records(self) -> list[Mapping[str, Any]] | None:
        """The stored BOM lines for the CSV writer, or None when the plan has no BOM."""
        return self.raw.get("bom")

    @property
    def summary(self) -> PlanSummary:
        training, inference = self.raw.get("training"), self.raw.get("inference")
        return PlanSummary(
            system=lookup(self.raw, "cluster.system"),
            gpus=lookup(self.raw, "cluster.gpus"),
            training_days=training.get("days") if isinstance(training, Mapping) and training else None,
            replicas=inference.get("replicas") if isinstance(inference, Mapping) and inference else None,
            it_kw=lookup(self.raw, "power.it_kw"),
        )

    @cached_property
    def headlines(self) -> list[Figure]:
        """The headline figures this plan has (a stage not modelled has none), with their explain entries."""
        figures = []
        for label, path, unit in HEADLINES:
            value = lookup(self.raw, path)
            if value is not None:
                figures.append(Figure(label, path, _shown(path, value), unit, self.explain.get(path)))
        return figures

    @cached_property
    def bom(self) -> BomView:
        """BOM lines grouped by category (first-seen order) with the stored extended prices and their subtotals.

        The total is the plan's own hardware total (`costs.onprem.hardware_usd`, priced from these lines);
        a plan stored without costs shows the exact sum of its stored extended prices.
        """
        grouped: dict[str, list[BomLine]] = {}
        for line in self.bom_records or []:
            grouped.setdefault(str(line.get("category") or "other"), []).append(_bom_line(line))
        groups = tuple(_bom_group(category, lines) for category, lines in grouped.items())
        total = None
        if groups and all(group.subtotal_usd is not None for group in groups):
            stored = _money(lookup(self.raw, "costs.onprem.hardware_usd"))
            total = stored if stored is not None else sum((g.subtotal_usd for g in groups), Decimal(0))
        return BomView(groups, total, sum(len(group.lines) for group in groups))

    # ---------------------------------------------------------------------------------- diagrams

    @cached_property
    def racks(self) -> RacksView | None:
        """The rack layout with each device's stored height, kind and name, or None without a layout."""
        block = self.raw.get("racks") or {}
        layout = block.get("layout") or []
        if not layout:
            return None
        assumptions = self.assumptions
        thresholds = tuple(
            (label, float(assumptions[name]["value"])) for name, label in COOLING_THRESHOLDS if name in assumptions
        )
        return RacksView(
            height_u=int(block.get("rack_height_u") or 48),
            racks=tuple(_rack(rack) for rack in layout),
            cooling_thresholds_kw=thresholds,
            rack_budget_kw=lookup(self.raw, "request.hardware.rack_kw") or None,
        )

    @cached_property
    def topology(self) -> TopologyView | None:
        """The fabrics by tier with the topology's switch parts and link bundles, or None without a fabric."""
        fabric = self.raw.get("fabric") or {}
        if not fabric:
            return None
        topology = self.raw.get("topology") or {}
        nodes, links = topology.get("nodes") or [], topology.get("links") or []
        rails = next(
            (node["rails"] for node in nodes if node.get("kind") == "system" and node.get("rails")),
            (fabric.get("compute") or {}).get("rails"),
        )
        cluster = self.raw.get("cluster") or {}
        return TopologyView(
            system=str(cluster.get("system", "?")),
            systems=cluster.get("systems", 0),
            rails=rails,
            fabrics={
                key: _fabric(key, fabric.get(key) or {}, nodes, links)
                for key in ("compute", "storage", "inband", "oob")
            },
        )

    # ---------------------------------------------------------------------------------- charts

    @cached_property
    def frontier(self) -> FrontierView | None:
        by_system = lookup(self.raw, "training.frontier_by_system") or {}
        if not by_system and lookup(self.raw, "training.frontier"):
            by_system = {lookup(self.raw, "cluster.system") or "chosen system": lookup(self.raw, "training.frontier")}
        if not by_system:
            return None
        points = {
            system: tuple(
                FrontierPoint(p["gpus"], p["days"], p.get("days_ideal", p["days"]), p.get("mfu", 0)) for p in rows
            )
            for system, rows in by_system.items()
        }
        return FrontierView(
            points,
            lookup(self.raw, "request.training.deadline_days"),
            lookup(self.raw, "training.gpus"),
            lookup(self.raw, "training.days"),
        )

    @cached_property
    def cost_over_time(self) -> CostOverTime | None:
        cumulative = lookup(self.raw, "costs.comparison.cumulative")
        if not cumulative or not cumulative.get("series"):
            return None
        series = tuple(
            CostSeries(s["label"], s.get("option"), tuple(Decimal(str(v)) for v in s["usd"]))
            for s in cumulative["series"]
        )
        return CostOverTime(tuple(cumulative["months"]), _money(cumulative.get("utilization")) or Decimal(0), series)

    @cached_property
    def cost_breakdown(self) -> CostBreakdown:
        capex: dict[str, Decimal] = {}
        for group in self.bom.groups:
            priced = [line.extended_price_usd for line in group.lines if line.extended_price_usd]
            if priced:
                capex[group.category] = sum(priced, Decimal(0))
        install = _money(lookup(self.raw, "costs.onprem.install_usd"))
        if install:
            capex["install"] = install
        opex = lookup(self.raw, "costs.onprem.opex_breakdown_usd_per_year") or {}
        return CostBreakdown(capex, {kind: _money(usd) or Decimal(0) for kind, usd in opex.items()})

    @cached_property
    def serving_curve(self) -> ServingCurve | None:
        curve = lookup(self.raw, "inference.curve")
        if not curve:
            return None
        return ServingCurve(
            tuple(p["batch"] for p in curve),
            tuple(p["tpot_ms"] for p in curve),
            tuple(p["tokens_per_s_per_gpu"] for p in curve),
            lookup(self.raw, "request.inference.tpot_ms"),
        )


def plan_view(result: Mapping[str, Any] | PlanView | None) -> PlanView:
    """The view of a stored result (a view passes through, so callers may hand either)."""
    return result if isinstance(result, PlanView) else PlanView(result)


def _bom_line(line: Mapping[str, Any]) -> BomLine:
    return BomLine(
        part_number=str(line.get("part_number") or ""),
        manufacturer=str(line.get("manufacturer") or ""),
        description=str(line.get("description") or ""),
        category=str(line.get("category") or "other"),
        quantity=line.get("quantity", 0),
        unit_price_usd=_money(line.get("unit_price_usd")),
        extended_price_usd=_money(line.get("extended_price_usd")),
        price_confidence=line.get("price_confidence"),
        price_source=line.get("price_source"),
    )


def _bom_group(category: str, lines: list[BomLine]) -> BomGroup:
    prices = [line.extended_price_usd for line in lines]
    subtotal = sum(prices, Decimal(0)) if all(price is not None for price in prices) else None  # type: ignore[arg-type]
    return BomGroup(category, tuple(lines), subtotal)


def _rack(rack: Mapping[str, Any]) -> RackView:
    devices = tuple(
        RackDeviceView(
            str(item["id"]),
            int(item["quantity"]),
            int(item.get("rack_units") or 0),
            str(item.get("kind") or "other"),
            str(item.get("label") or item["id"]),
        )
        for item in rack.get("items") or []
    )
    return RackView(
        str(rack["id"]),
        str(rack.get("role", "")),
        float(rack.get("kw", 0)),
        int(rack.get("feeds", 0)),
        str(rack.get("cooling", "")),
        int(rack.get("rack_units") or 0),
        devices,
    )


def _fabric(key: str, block: Mapping[str, Any], nodes: list, links: list) -> FabricView:
    tier_counts = {tier: block[tier] for tier in ("core", "spine", "leaf") if block.get(tier)}
    parts: dict[str, str] = {}
    for node in nodes:
        if node.get("fabric") == key and node.get("tier") in tier_counts:
            parts.setdefault(node["tier"], str(node.get("part", "")))
    bundles: dict[str, LinkBundle] = {}
    for link in links:
        if link.get("fabric") == key and link.get("tier") and link["tier"] not in bundles:
            bundles[link["tier"]] = LinkBundle(link["links"], link.get("link_gbps", 0), link.get("medium", ""))
    return FabricView(
        key=key,
        present=bool(block) and bool(block.get("leaf")),
        technology=str(block.get("technology", "")),
        tiers=block.get("tiers"),
        tier_counts=tier_counts,
        tier_parts=parts,
        node_links=block.get("node_links", 0),
        bundle_counts={
            "node-leaf": block.get("node_links"),
            "leaf-spine": block.get("leaf_spine_links"),
            "spine-core": block.get("spine_core_links"),
        },
        bundles=bundles,
    )
