"""The costing stage's result: JSON-ready `costs`, priced `bom` and `explain`, plus the typed figures behind them."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .inputs import CostJob
from .onprem import OnpremCosts

__all__ = ["CostResult"]


@dataclass
class CostResult:
    """`costs`, `bom` and `explain` are what the plan stores (JSON types only: money as 2-decimal strings);
    `onprem` and `job` are the same figures typed (Decimal money to the cent), for callers that compute with them.
    """

    costs: dict[str, Any]
    bom: list[dict[str, Any]] | None
    explain: dict[str, dict[str, Any]]
    onprem: OnpremCosts | None = None
    job: CostJob | None = None

    @property
    def bom_total_usd(self) -> Decimal | None:
        """Sum of the priced BOM lines' extended prices (the hardware figure of a BOM-based capex)."""
        return None if self.onprem is None else self.onprem.bom_total_usd

    def to_json(self) -> dict[str, Any]:
        return {"costs": self.costs, "bom": self.bom, "explain": self.explain}
