"""The typed view objects every output draws from: what a plan's page, charts, SVG diagrams and PDF show.

Plain frozen dataclasses with no behaviour; `planner.outputs.plan_view` fills them from the typed plan result
(decoded there once from the stored JSON), so templates, charts and diagrams never index into the plan JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

__all__ = [
    "BomGroup",
    "BomLine",
    "BomView",
    "CostBreakdown",
    "CostOverTime",
    "CostSeries",
    "FabricView",
    "Figure",
    "FrontierPoint",
    "FrontierView",
    "KeyFigure",
    "LinkBundle",
    "PlanSummary",
    "RackDeviceView",
    "RackView",
    "RacksView",
    "ServingCurve",
    "StorageStory",
    "SummaryBand",
    "TopologyView",
]


@dataclass(frozen=True)
class Figure:
    label: str
    path: str
    value: Any
    unit: str
    explain: Any  # the plan's typed explain entry for this figure (formula, inputs, source), or None


@dataclass(frozen=True)
class PlanSummary:
    """One row of the plan list."""

    system: str | None
    gpus: int | None
    training_days: float | None  # None for a serving plan
    replicas: int | None  # None for a training plan
    it_kw: float | None


@dataclass(frozen=True)
class BomLine:
    """One stored BOM line as shown: prices exactly as the plan priced them (None = unpriced)."""

    part_number: str
    manufacturer: str
    description: str
    category: str
    quantity: Any
    unit_price_usd: Decimal | None
    extended_price_usd: Decimal | None
    price_confidence: str | None
    price_source: str | None


@dataclass(frozen=True)
class BomGroup:
    category: str
    lines: tuple[BomLine, ...]
    subtotal_usd: Decimal | None  # None when any line of the group is unpriced


@dataclass(frozen=True)
class BomView:
    groups: tuple[BomGroup, ...]
    total_usd: Decimal | None  # None when any line is unpriced: a partial sum would understate the build
    line_count: int


@dataclass(frozen=True)
class RackDeviceView:
    id: str
    quantity: int
    rack_units: int  # 0 = mounts outside the U space (or a plan stored before devices carried their height)
    kind: str
    label: str
    short: str = ""  # the model a reader knows ("QM9700"), printed where the full name does not fit


@dataclass(frozen=True)
class RackView:
    id: str
    role: str
    kw: float
    feeds: int
    cooling: str
    used_u: int
    devices: tuple[RackDeviceView, ...]
    row: int = 0  # the layout's row (one per scalable unit, then the central row)


@dataclass(frozen=True)
class RacksView:
    height_u: int
    racks: tuple[RackView, ...]
    cooling_thresholds_kw: tuple[tuple[str, float], ...]  # (label, kW) of the assumptions the plan used
    rack_budget_kw: float | None


@dataclass(frozen=True)
class LinkBundle:
    links: int
    link_gbps: float
    medium: str


@dataclass(frozen=True)
class FabricView:
    """One fabric by tier: switch counts and parts, and the link bundles between tiers."""

    key: str
    present: bool
    technology: str
    tiers: int | None
    tier_counts: dict[str, int]  # core / spine / leaf -> switches (zero tiers left out)
    tier_parts: dict[str, str]  # tier -> catalog id of its switch
    node_links: int
    bundle_counts: dict[str, int | None]  # node-leaf / leaf-spine / spine-core -> links
    bundles: dict[str, LinkBundle]  # the same names -> count, speed and medium from the topology
    planes: int = 1  # parallel identical Clos fabrics; the tier counts above are totals over the planes
    link_gbps: float = 0.0
    notes: tuple[str, ...] = ()  # the fabric stage's own sentences (why there is no fabric, how it is built)


@dataclass(frozen=True)
class TopologyView:
    system: str
    systems: int
    fabrics: dict[str, FabricView]
    scalable_units: int = 0  # the compute fabric's SUs (0 when the plan has none)
    su_systems: int = 0  # systems an SU holds at most
    endpoints: dict[str, int] = field(default_factory=dict)  # topology node id (storage, ufm, mgmt) -> count


@dataclass(frozen=True)
class FrontierPoint:
    gpus: int
    days: float
    days_ideal: float
    mfu: float
    batch_sequences: int | None = None  # the batch the point trains on (None in plans stored before it was kept)


@dataclass(frozen=True)
class FrontierView:
    by_system: dict[str, tuple[FrontierPoint, ...]]
    deadline_days: float | None
    chosen_gpus: int | None
    chosen_days: float | None
    requested_batch_sequences: int | None = None


@dataclass(frozen=True)
class CostSeries:
    label: str
    option: str | None
    usd: tuple[Decimal, ...]


@dataclass(frozen=True)
class CostOverTime:
    months: tuple[int, ...]
    utilization: Decimal
    series: tuple[CostSeries, ...]


@dataclass(frozen=True)
class CostBreakdown:
    capex_by_category_usd: dict[str, Decimal]  # BOM group subtotals, then install
    opex_by_kind_usd_per_year: dict[str, Decimal]


@dataclass(frozen=True)
class ServingCurve:
    batches: tuple[int, ...]
    tpot_ms: tuple[float, ...]
    tokens_per_s_per_gpu: tuple[float, ...]
    tpot_target_ms: float | None


@dataclass(frozen=True)
class KeyFigure:
    """One figure of the summary band: its value as text (formatted once, the same on the page and in the PDF),
    its range when the plan has one, and one line of context."""

    label: str
    value: str
    unit: str = ""
    range: str | None = None  # e.g. "61.8 - 98.5 days (p10 - p90)"
    note: str | None = None
    anchor: str | None = None  # the section of the page that explains it


@dataclass(frozen=True)
class SummaryBand:
    """Answer first: the verdict sentence, the headline figures with their ranges, and the top risks."""

    choice: str | None  # build | rent | None when no option could be priced or obtained
    sentence: str | None
    figures: tuple[KeyFigure, ...]
    risks: tuple[str, ...]


@dataclass(frozen=True)
class StorageStory:
    """The storage a plan needs, told: what the file system is and does, one sentence per need (write, read,
    capacity) naming what sets it, and the figures behind them as (label, text) rows for a disclosure."""

    lead: str
    needs: tuple[str, ...]
    details: tuple[tuple[str, str], ...]
    sources: tuple[str, ...] = ()
