"""The typed plan: `PlanResult`, built once by the chain in stage order, serialised once by `to_json`.

`schema_version` counts changes of this JSON shape: "1" is the untyped plan before issue 12 (no
`schema_version` key); "2" is this typed result. Costing returns the typed `costs` section (engine/result/costs.py)
and the priced BOM lines; `with_costs` puts them into a new result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.result.codec import decode, encode, meta
from engine.result.costs import Costs
from engine.result.envelope import EnvelopeSummary
from engine.result.physical import (
    BomLine,
    ClusterSummary,
    CoolingSummary,
    FabricSummary,
    PowerSummary,
    RacksSummary,
    StorageSummary,
    Topology,
)
from engine.result.plant import PlantSummary
from engine.result.sizing import Candidate, InferenceSummary, ModelSummary, Selection, TrainingSummary

__all__ = [
    "POWER_SYSTEMS_ONLY_NOTE",
    "SCHEMA_VERSION",
    "AssumptionEntry",
    "ExplainEntry",
    "PlanResult",
    "from_json",
    "not_modelled",
    "to_json",
    "with_costs",
]

SCHEMA_VERSION = "2"
OMIT = meta(omit_none=True)

# Shown when the plan has no physical layout (infeasible, or no parts data for the system).
RENTED_NOTE = (
    "{instances} x {instance_type} rented from AWS: nothing is built on site. Racks and power are those of an "
    "equivalent 8-GPU server, shown only for the energy and carbon estimate; AWS publishes no instance power."
)
POWER_SYSTEMS_ONLY_NOTE = (
    "IT power counts GPU systems at maximum rated draw only; network, storage and management "
    "equipment are not included yet."
)


@dataclass(frozen=True)
class ExplainEntry:
    """How one headline figure was derived: the formula, the inputs it was computed from, the public source."""

    formula: str
    inputs: Mapping[str, Any]
    source: str


@dataclass(frozen=True)
class AssumptionEntry:
    """One assumption the plan read: its value, default, whether the request overrode it, unit and source."""

    value: float
    default: float
    overridden: bool
    unit: str
    source: str
    description: str


@dataclass(frozen=True)
class PlanResult:
    """The whole plan. Sections of a stage that did not run are None (absent from the JSON)."""

    name: str | None
    workload: str
    feasible: bool
    problems: tuple[str, ...]
    engine_version: str
    catalog_version: str
    request: Mapping[str, Any]
    model: ModelSummary | None  # None (absent) for a capacity plan: no model
    selection: Selection
    candidates: tuple[Candidate, ...]
    not_modelled: tuple[str, ...]
    notes: tuple[str, ...]
    training: TrainingSummary | None = field(default=None, metadata=OMIT)
    inference: InferenceSummary | None = field(default=None, metadata=OMIT)
    envelope: EnvelopeSummary | None = field(default=None, metadata=OMIT)
    cluster: ClusterSummary | None = field(default=None, metadata=OMIT)
    power: PowerSummary | None = field(default=None, metadata=OMIT)
    cooling: CoolingSummary | None = field(default=None, metadata=OMIT)
    fabric: FabricSummary | None = field(default=None, metadata=OMIT)
    storage: StorageSummary | None = field(default=None, metadata=OMIT)
    racks: RacksSummary | None = field(default=None, metadata=OMIT)
    bom: tuple[BomLine, ...] | None = field(default=None, metadata=OMIT)
    topology: Topology | None = field(default=None, metadata=OMIT)
    plant: PlantSummary | None = field(default=None, metadata=OMIT)  # the site's electrical chain, heat rejection
    explain: Mapping[str, ExplainEntry] = field(default_factory=dict)
    assumptions: Mapping[str, AssumptionEntry] = field(default_factory=dict)
    costs: Costs | None = field(default=None, metadata=OMIT)
    # The same job sized on each rented system (cloud instances planned as systems, e.g. aws-p5): what each cloud
    # option must provision for the same work. None for plans made before them.
    cloud_sizings: tuple[Candidate, ...] | None = field(default=None, metadata=OMIT)
    price_snapshot: Mapping[str, Any] | None = field(default=None, metadata=meta(present_if="stamped"))
    schema_version: str = SCHEMA_VERSION
    stamped: bool = field(default=False, metadata=meta(json=False))  # priced: price_snapshot is present (maybe null)


def not_modelled(*, physical: bool, priced: bool) -> tuple[str, ...]:
    """The stages whose sections this plan lacks: fabric, storage and bom come with the physical layout, costs
    with pricing."""
    missing = [] if physical else ["fabric", "storage", "bom"]
    if not priced:
        missing.append("costs")
    return tuple(missing)


def to_json(result: PlanResult) -> dict[str, Any]:
    """The plan as stored and served: plain JSON types; money as decimal strings."""
    out = encode(result)
    assert isinstance(out, dict)
    return out


def from_json(data: Mapping[str, Any]) -> PlanResult:
    """The typed plan from its JSON (`to_json`'s output, or a stored schema "1" plan, which lacks only
    `schema_version`); unknown keys are ignored. ValueError names the first bad path."""
    if "schema_version" not in data:
        data = {**data, "schema_version": "1"}
    result = decode(PlanResult, data)
    assert isinstance(result, PlanResult)
    return result


def with_costs(
    result: PlanResult,
    *,
    costs: Costs,
    bom: Sequence[BomLine] | None,
    explain: Mapping[str, ExplainEntry],
    price_snapshot: Mapping[str, Any] | None,
    envelope: EnvelopeSummary | None = None,
) -> PlanResult:
    """The priced plan: costing's sections added, priced BOM lines in place of the unpriced ones, the envelope with
    its priced capex (when costing gives one), and `not_modelled` recomputed. The only step after the engine's
    chain, and it builds a new result."""
    return replace(
        result,
        costs=costs,
        bom=result.bom if bom is None else tuple(bom),
        explain={**result.explain, **explain},
        not_modelled=not_modelled(physical=result.fabric is not None, priced=True),
        price_snapshot=price_snapshot,
        stamped=True,
        envelope=result.envelope if envelope is None else envelope,
    )
