"""Cost-aware choice among candidate systems: plain-data prices in, an estimated on-prem cost per candidate out.

The engine stays pure: the caller (`planner.adapter`, from the pricing app) passes `SelectionPrices`, plain numbers
keyed by catalog system id. Without it the engine ranks by energy as before.

The estimate is the cost of doing this job on-prem, as used to *rank* systems (the full costing, with install,
maintenance, colocation and cloud options, runs on the chosen plan only):

- training: systems x system price + it_kw x PUE x job hours x electricity, job hours = expected days x 24;
- inference: systems x system price + it_kw x PUE x 8760 x utilization x years x electricity (the serving
  cluster's energy over the costing horizon).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["HOURS_PER_YEAR", "SelectionPrices", "inference_selection_usd", "training_selection_usd"]

HOURS_PER_YEAR = 8760.0


@dataclass(frozen=True)
class SelectionPrices:
    """Prices for ranking candidate systems (USD, floats: a ranking, not an invoice).

    system_usd: price per system by catalog system id (this plan's overrides already applied);
    electricity_usd_per_kwh: site electricity price; utilization: fraction of hours a serving cluster works;
    years: costing horizon for inference energy; sources: where each input came from, for `explain`.
    """

    system_usd: dict[str, float]
    electricity_usd_per_kwh: float
    utilization: float = 1.0
    years: int = 3
    sources: dict[str, str] = field(default_factory=dict)


def training_selection_usd(
    systems: int, system_usd: float, facility_kw: float, days: float, usd_per_kwh: float
) -> float:
    """systems x price + facility_kw (it_kw x PUE) x days x 24 x $/kWh."""
    return systems * system_usd + facility_kw * days * 24.0 * usd_per_kwh


def inference_selection_usd(
    systems: int, system_usd: float, facility_kw: float, utilization: float, years: int, usd_per_kwh: float
) -> float:
    """systems x price + facility_kw (it_kw x PUE) x 8760 x utilization x years x $/kWh."""
    return systems * system_usd + facility_kw * HOURS_PER_YEAR * utilization * years * usd_per_kwh
