"""Plain price records: what the pricing app hands over to the planner's engine adapter.

The pricing app owns where prices come from (the fixture files, the editable tables, the AWS snapshots) and
hands them over as these frozen records; it never builds the engine's costing types. `planner.adapter` is the
one place that turns them into `engine.costing.CostInputs`. Field names match the engine's so the conversion
there is one line per type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

__all__ = [
    "CloudPriceRecord",
    "ParameterRecord",
    "PartPriceRecord",
    "PriceBook",
    "PriceReferences",
    "SpotBandRecord",
]


@dataclass(frozen=True)
class PartPriceRecord:
    """The unit price of a part (matched to BOM lines by `part_number`) or a system (by `catalog_id`)."""

    part_number: str
    catalog_id: str
    unit_price_usd: Decimal
    source: str
    as_of: str
    confidence: str  # list_price | public_estimate | assumption
    description: str = ""
    category: str = ""


@dataclass(frozen=True)
class ParameterRecord:
    """A named costing parameter (or, named `grid_gco2e_per_kwh.<scope>`, one carbon intensity)."""

    name: str
    value: Decimal
    unit: str
    source: str
    as_of: str
    confidence: str


@dataclass(frozen=True)
class SpotBandRecord:
    """One Spot Instance Advisor interruption band for (region, instance type)."""

    region: str
    instance_type: str
    band: str
    savings_percent: int | None
    as_of: str
    source: str


@dataclass(frozen=True)
class CloudPriceRecord:
    """One snapshot offer, with the GPU count and catalog model of the snapshot's spec of its type."""

    instance_type: str
    region: str
    purchase: str
    usd_per_hour: Decimal
    gpus: int
    gpu_model: str
    availability_zone_id: str = ""
    capacity_constrained: bool = False
    observed_at: str = ""  # ISO timestamp: the source's own date
    provider: str = "aws"
    source: str = ""  # primary source title and date
    confidence: str = "list_price"  # list_price | quote | public_estimate | assumption


@dataclass(frozen=True)
class PriceReferences:
    """The on-prem references: parts, parameters, carbon intensities by scope, spot bands."""

    parts: tuple[PartPriceRecord, ...]
    parameters: dict[str, ParameterRecord]
    carbon: dict[str, ParameterRecord]
    spot_bands: tuple[SpotBandRecord, ...]
    files: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PriceBook:
    """Every price a plan is costed with: one snapshot's cloud offers, the on-prem references, and a note on the
    snapshot's state (missing or stale) that the plan shows."""

    cloud_prices: tuple[CloudPriceRecord, ...]
    references: PriceReferences
    snapshot_note: str = ""
