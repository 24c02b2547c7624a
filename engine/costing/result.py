"""The costing stage's result: the typed `costs` section, the priced BOM lines and the `costs.*` explain entries
(what the plan stores, through `engine.result.with_costs`), plus the working figures behind them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from engine.result.codec import encode
from engine.result.costs import Costs
from engine.result.envelope import EnvelopeSummary
from engine.result.physical import BomLine
from engine.result.plan import ExplainEntry

from .inputs import CostJob
from .onprem import OnpremCosts

__all__ = ["CostResult"]


@dataclass(frozen=True)
class CostResult:
    """`costs`, `bom` (None when the plan has no BOM) and `explain` go into the plan; `onprem` and `job` are the
    typed working figures (Decimal money to the cent), for callers that compute with them."""

    costs: Costs
    bom: tuple[BomLine, ...] | None
    explain: Mapping[str, ExplainEntry]
    onprem: OnpremCosts | None = None
    job: CostJob | None = None
    envelope: EnvelopeSummary | None = None  # the plan's envelope with its priced capex (a capex limit only)

    @property
    def bom_total_usd(self) -> Decimal | None:
        """Sum of the priced BOM lines' extended prices (the hardware figure of a BOM-based capex)."""
        return None if self.onprem is None else self.onprem.bom_total_usd

    def to_json(self) -> dict[str, Any]:
        """The three parts as the plan stores them (money as decimal strings)."""
        return {"costs": encode(self.costs), "bom": encode(self.bom), "explain": encode(self.explain)}
