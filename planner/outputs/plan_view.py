"""The one reader of a stored plan for every output: page, compare table, charts, SVG diagrams, PDF report and CSV.

The stored plan JSON is the serialised `PlanResult` (engine/result). This module decodes it once, through
`planner.adapter`, and every view below reads the typed result's attributes; templates, charts, SVG and PDF read
those views. Nothing here looks at the live catalog or live prices or recomputes a figure the result holds (rack
units, extended prices, totals), so a plan re-opened after a catalog or price change shows what it showed before.

A plan stored by an older version that no longer decodes whole is read section by section (`stored_plan`): each
section that decodes is shown, the others are left out, and `legacy` lets the page and the report say so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from decimal import Decimal
from functools import cached_property
from typing import TYPE_CHECKING, Any

from planner.adapter import CAPEX_EXTRA_CATEGORIES, PlanResult, encode_section, in_words, to_json

from .candidates_table import CandidatesTable, plan_candidates_table
from .formatting import products_named
from .headlines import HEADLINES, shown
from .part_views import bom_view, fabric_view, rack_view
from .stored_plan import Decoded, decode_stored, lookup, read_section, typed_figure
from .view_models import (
    BomView,
    CostBreakdown,
    CostOverTime,
    CostSeries,
    Figure,
    FrontierPoint,
    FrontierView,
    PlanSummary,
    RacksView,
    ServingCurve,
    StorageStory,
    SummaryBand,
    TopologyView,
)

if TYPE_CHECKING:  # annotations only: at run time the engine is reached through planner.adapter
    from planner.adapter import (
        AssumptionEntry,
        Costs,
        ExplainEntry,
        OnpremSection,
    )
    from planner.adapter import BomLine as StoredBomLine

__all__ = ["HEADLINES", "PlanView", "bom_view", "lookup", "plan_view"]

# The stage sections listed under "All figures by stage", in chain order.
STAGE_BLOCKS = ("training", "inference", "cluster", "power", "cooling", "storage")
# Keys a section keeps for older readers beside the newer key with the same value: the page shows the figure once
# (the training block read "Days, steady state 67.2" twice).
# legacy key -> the newer key that says the same (the page shows the newer one only)
LEGACY_TWINS = {
    "days_ideal": "days_steady_state",
    "batch_per_replica": "batch",
    # not the same figure (memory in use at the planned load, kept for API readers), but the page shows what a GPU
    # allocates beside its breakdown and the cache in use apart, which together say it
    "memory_per_gpu_gib": "memory_allocated_gib_per_gpu",
}
FABRICS = ("compute", "storage", "inband", "oob")
COOLING_THRESHOLDS = (
    ("cooling_air_max_kw", "air"),
    ("cooling_containment_max_kw", "air + containment"),
    ("cooling_rdhx_max_kw", "rear-door HX"),
)
# The sections of a plan row in the plan list.
SUMMARY_SECTIONS = ("cluster", "training", "inference", "power")


def _without_twins(block: Mapping[str, Any]) -> Mapping[str, Any]:
    """A stage section without the legacy keys whose newer twin it also carries (`LEGACY_TWINS`)."""
    drop = {old for old, new in LEGACY_TWINS.items() if old in block and block.get(new) is not None}
    return {key: value for key, value in block.items() if key not in drop} if drop else block


class PlanView:
    """A stored plan as the outputs see it: the typed result, decoded on first use, and the views built from it.
    Each view is built on first use, so a page that needs only the headlines does not lay out the racks."""

    def __init__(self, stored: Mapping[str, Any] | PlanResult | None) -> None:
        self._stored = stored

    @cached_property
    def raw(self) -> Mapping[str, Any]:
        """The plan's JSON as stored (the page's "Plan JSON" block)."""
        if isinstance(self._stored, PlanResult):
            return to_json(self._stored)
        return self._stored or {}

    @cached_property
    def _decoded(self) -> Decoded:
        return decode_stored(self._stored)

    @property
    def result(self) -> PlanResult | None:
        """The typed plan; None for a plan without a result."""
        return self._decoded.result

    @property
    def legacy(self) -> bool:
        """Stored by an older version and read section by section: some of it may not be shown."""
        return self._decoded.legacy

    @property
    def unread_sections(self) -> tuple[str, ...]:
        """The sections of a legacy plan that could not be read."""
        return self._decoded.unread

    def __bool__(self) -> bool:
        return self.result is not None

    def value(self, path: str) -> Any:
        """A headline figure as shown (fractions as percentages), or None."""
        return shown(path, typed_figure(self.result, path))

    # ---------------------------------------------------------------------------------- page sections

    @property
    def feasible(self) -> bool:
        return bool(self.result and self.result.feasible)

    @property
    def problems(self) -> list[str]:
        """The plan's problems, then what a reader of the training figures must not miss: the batch the plan trains
        on when it is not the requested one, and a deadline met at the expected (p50) whole run but not at its p90:
        the recommended option's, as the engine's verdict says it (a rental's when the verdict is rent)."""
        if self.result is None:
            return []
        # the engine names a system by its catalog id, and some of its prose a request field by its path
        out = [in_words(products_named(p)) for p in self.result.problems]
        training = self.result.training
        if training is None:
            return out
        if training.batch_note:
            out.append(training.batch_note[0].upper() + training.batch_note[1:])
        run = training.whole_run
        if run is not None and training.days_range is not None:
            shares = {f.name: f.share_of_spread for f in run.factors}
            drivers = ", ".join(
                f"{name} ({shares[name]:.0%})" if shares.get(name) is not None else name for name in run.drivers[:2]
            )
            steady = training.days_steady_state or training.days_ideal
            out.append(
                f"Two answers: the expected whole run takes {training.days:,.1f} days (p50; p10 "
                f"{training.days_range.p10:,.1f} - p90 {training.days_range.p90:,.1f}); a tuned stack between "
                f"failures (steady state) would take {steady:,.1f} days at {training.tokens_per_s:,.0f} tokens/s. "
                f"Main drivers of the range: {drivers}."
            )
        if run is not None and run.note:
            out.append(in_words(run.note))
        verdict = self.costs.verdict if self.costs is not None else None
        if verdict is not None and verdict.decided_by is not None:
            # the engine's: the recommended option's p90 (a rental's when renting), not the build's (verdict.py)
            if verdict.deadline_risk:
                out.append(verdict.deadline_risk)
            return out
        if verdict is not None and verdict.choice == "rent":
            return out  # a plan stored before the engine said it: the build's p90 is not the recommended option's
        deadline = lookup(self.result.request, "training.deadline_days")
        p90 = training.days_range.p90 if training.days_range else None
        if deadline and p90 and p90 > deadline and training.days <= deadline:
            drivers = ", ".join(training.whole_run.drivers[:2] if training.whole_run else ())
            out.append(
                f"Deadline risk: the expected whole run ({training.days:.1f} days, p50) meets the {deadline:g}-day "
                f"deadline, but the p90 is {p90:.1f} days (main drivers: {drivers}). Plan with a shorter deadline "
                f"for more confidence."
            )
        return out

    @property
    def price_snapshot(self) -> Mapping[str, Any] | None:
        return self.result.price_snapshot if self.result else None

    @cached_property
    def summary_band(self) -> SummaryBand:
        """Answer first: the verdict sentence, headline figures with ranges and the top risks (`summary`)."""
        from .summary import summary_band

        return summary_band(self)

    @cached_property
    def storage_story(self) -> StorageStory | None:
        """The storage card as sentences (what sets each need) with the figures behind them (`storage_story`)."""
        from .storage_story import storage_story

        return storage_story(self)

    @property
    def notes(self) -> list[str]:
        """The problems the summary band's risks do not already say (a feasible plan's notes, once each)."""
        risks = set(self.summary_band.risks)
        return [p for p in self.problems if p not in risks]

    @property
    def snapshot_label(self) -> str | None:
        """The price snapshot in words (what, where from, read when), never a file path."""
        from .summary import snapshot_label

        return snapshot_label(self.price_snapshot)

    @cached_property
    def stage_sections(self) -> dict[str, Mapping[str, Any]]:
        """The stage blocks by name, so each page section shows its own (compute, facility)."""
        return dict(self.stage_blocks)

    @property
    def costs(self) -> Costs | None:
        """The typed costs section (its own template lays it out), or None."""
        return self.result.costs if self.result else None

    @property
    def assumptions(self) -> Mapping[str, AssumptionEntry]:
        """Assumption name -> its typed entry (value, default, unit, source, description)."""
        return self.result.assumptions if self.result else {}

    @property
    def explain(self) -> Mapping[str, ExplainEntry]:
        """Figure path -> its typed explain entry (formula, inputs, source)."""
        return self.result.explain if self.result else {}

    @cached_property
    def parallelism(self) -> Mapping[str, Any]:
        training = self.result.training if self.result else None
        return encode_section(training.parallelism) if training else {}

    @property
    def memory_breakdown_gib(self) -> Mapping[str, Any]:
        training = self.result.training if self.result else None
        return training.memory_breakdown_gib if training else {}

    @cached_property
    def stage_blocks(self) -> list[tuple[str, Mapping[str, Any]]]:
        """Each stage section that ran, as its stored JSON (the page tabulates every field it has)."""
        sections = [(key, getattr(self.result, key, None)) for key in STAGE_BLOCKS]
        return [(key, _without_twins(encode_section(section))) for key, section in sections if section is not None]

    @cached_property
    def candidates_table(self) -> CandidatesTable | None:
        """The systems considered as the page shows them: deciding columns first, the rest on demand."""
        return plan_candidates_table(self.result) if self.result else None

    @property
    def bom_lines(self) -> tuple[StoredBomLine, ...] | None:
        """The stored BOM lines (the CSV writes them), or None when the plan has no BOM."""
        return self.result.bom if self.result else None

    @cached_property
    def lead_times(self) -> dict[str, float]:
        """Lead time in days by BOM category, from the plan's time to capacity: the GPU systems' part class for
        compute lines, the fabric's for network, optics and cabling (the categories it covers); none otherwise."""
        capacity = self.costs.time_to_capacity if self.costs else None
        out: dict[str, float] = {}
        for part in capacity.parts if capacity else ():
            if part.assumption == "lead_time_network_days":
                out.update(dict.fromkeys(("network", "optics", "cabling"), part.days))
            else:
                out["compute"] = part.days
        return out

    @property
    def _onprem(self) -> OnpremSection | None:
        costs = self.costs
        return costs.onprem if costs else None

    @property
    def summary(self) -> PlanSummary:
        """One row of the plan list. Unless the plan is decoded already, only the four sections the row shows are
        read: fifty whole decodes would add about 7 ms a plan to the list page."""
        if isinstance(self._stored, PlanResult) or "_decoded" in self.__dict__ or not self._stored:
            result = self.result
            sections = {name: getattr(result, name) if result else None for name in SUMMARY_SECTIONS}
        else:
            sections = {name: read_section(self._stored, name)[0] for name in SUMMARY_SECTIONS}
        cluster, training, inference, power = (sections[name] for name in SUMMARY_SECTIONS)
        return PlanSummary(
            system=cluster.system if cluster else None,
            gpus=cluster.gpus if cluster else None,
            training_days=training.days if training else None,
            replicas=inference.replicas if inference else None,
            it_kw=power.it_kw if power else None,
        )

    @cached_property
    def headlines(self) -> list[Figure]:
        """The headline figures this plan has (a stage not modelled has none), with their explain entries."""
        figures = []
        for label, path, unit in HEADLINES:
            value = typed_figure(self.result, path)
            if isinstance(value, Mapping) and {"p10", "p90"} <= set(value):  # a range reads as "low - high"
                value = f"{value['p10']:,.1f} - {value['p90']:,.1f}"
            elif hasattr(value, "p10") and hasattr(value, "p90"):  # the typed range (FloatPercentiles)
                value = f"{value.p10:,.1f} - {value.p90:,.1f}"
            elif isinstance(value, tuple | list):  # names, e.g. the whole run's drivers, largest first
                value = ", ".join(str(v) for v in value[:3]) or None
            if value is not None:
                figures.append(Figure(label, path, shown(path, value), unit, self.explain.get(path)))
        return figures

    @cached_property
    def bom(self) -> BomView:
        """BOM lines grouped by category with the stored extended prices, their subtotals and the plan's total."""
        onprem = self._onprem
        lines = self.bom_lines
        # Since issue 14 the BOM carries the capex lines beyond the hardware, and its total is the capex.
        with_extras = any(line.category in CAPEX_EXTRA_CATEGORIES for line in lines or ())
        total = (onprem.capex_usd if with_extras else onprem.hardware_usd) if onprem else None
        return bom_view(lines, total)

    # ---------------------------------------------------------------------------------- diagrams

    @cached_property
    def racks(self) -> RacksView | None:
        """The rack layout with each device's stored height, kind and name, or None without a layout."""
        racks = self.result.racks if self.result else None
        if racks is None or not racks.layout:
            return None
        assumptions = self.assumptions
        thresholds = tuple(
            (label, float(assumptions[name].value)) for name, label in COOLING_THRESHOLDS if name in assumptions
        )
        return RacksView(
            height_u=racks.rack_height_u or 48,
            racks=tuple(rack_view(rack, self._part_numbers) for rack in racks.layout),
            cooling_thresholds_kw=thresholds,
            rack_budget_kw=lookup(self.result.request, "hardware.rack_kw") or None,
        )

    @cached_property
    def _part_numbers(self) -> dict[str, str]:
        """Catalog id -> the part number its BOM line orders (what a drawing prints instead of the id)."""
        return {
            line.catalog_id: line.part_number for line in self.bom_lines or () if line.catalog_id and line.part_number
        }

    @cached_property
    def topology(self) -> TopologyView | None:
        """The fabrics by tier with the topology's switch parts and link bundles, or None without a fabric."""
        fabric = self.result.fabric if self.result else None
        if fabric is None:
            return None
        topology, cluster = self.result.topology, self.result.cluster
        nodes, links = (topology.nodes, topology.links) if topology else ((), ())
        return TopologyView(
            system=cluster.system if cluster else "?",
            systems=cluster.systems if cluster else 0,
            fabrics={key: fabric_view(key, getattr(fabric, key), nodes, links) for key in FABRICS},
            scalable_units=fabric.scalable_units if fabric.compute_fabric_needed else 0,
            su_systems=fabric.su_systems,
            endpoints={node.id: node.count for node in nodes if node.kind != "switch"},
        )

    # ---------------------------------------------------------------------------------- charts

    @cached_property
    def frontier(self) -> FrontierView | None:
        training = self.result.training if self.result else None
        if training is None:
            return None
        by_system = training.frontier_by_system
        if not by_system and training.frontier:
            cluster = self.result.cluster
            by_system = {(cluster.system if cluster else None) or "chosen system": training.frontier}
        if not by_system:
            return None
        # Frontier points are plain mappings in the typed plan (the search's rows as it wrote them).
        points = {
            system: tuple(
                FrontierPoint(
                    p["gpus"],
                    p["days"],
                    p.get("days_ideal", p["days"]),
                    p.get("mfu", 0),
                    p.get("global_batch_sequences"),
                )
                for p in rows
            )
            for system, rows in by_system.items()
        }
        deadline_days = lookup(self.result.request, "training.deadline_days")
        requested = training.global_batch_sequences_requested or training.global_batch_sequences
        return FrontierView(points, deadline_days, training.gpus, training.days, requested)

    @cached_property
    def cost_over_time(self) -> CostOverTime | None:
        comparison = self.costs.comparison if self.costs else None
        cumulative = comparison.cumulative if comparison else None
        if cumulative is None or not cumulative.series:
            return None
        series = tuple(CostSeries(s.label, s.option, tuple(s.usd)) for s in cumulative.series)
        return CostOverTime(tuple(cumulative.months), cumulative.utilization, series)

    @cached_property
    def cost_breakdown(self) -> CostBreakdown:
        capex: dict[str, Decimal] = {}
        for group in self.bom.groups:
            priced = [line.extended_price_usd for line in group.lines if line.extended_price_usd]
            if priced:
                capex[group.category] = sum(priced, Decimal(0))
        onprem = self._onprem
        if onprem and onprem.install_usd and "services" not in capex:  # plans stored before issue 14
            capex["install"] = onprem.install_usd
        opex = onprem.opex_breakdown_usd_per_year if onprem else None
        fields = dataclasses.fields(opex) if opex else ()
        # `insurance` is absent from plans stored before issue 14
        by_kind = {f.name: getattr(opex, f.name) for f in fields if getattr(opex, f.name) is not None}
        return CostBreakdown(capex, by_kind)

    @cached_property
    def serving_curve(self) -> ServingCurve | None:
        inference = self.result.inference if self.result else None
        if inference is None or not inference.curve:
            return None
        curve = inference.curve  # plain mappings, one per batch size
        return ServingCurve(
            tuple(p["batch"] for p in curve),
            tuple(p["tpot_ms"] for p in curve),
            tuple(p["tokens_per_s_per_gpu"] for p in curve),
            lookup(self.result.request, "inference.tpot_ms"),
        )


def plan_view(stored: Mapping[str, Any] | PlanResult | PlanView | None) -> PlanView:
    """The view of a stored plan (a view passes through, so callers may hand either)."""
    return stored if isinstance(stored, PlanView) else PlanView(stored)
