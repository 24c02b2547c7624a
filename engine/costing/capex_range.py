"""The capex range (`costs.onprem.capex_range`): how far the capex may plausibly move with the firmness of its prices.

Why not capex x one factor: a BOM mixes vendor quotes, list prices, public estimates and our own assumptions, and
each is known to a different accuracy (AACE International Recommended Practice 18R-97 estimate classes, the named
assumptions `price_range_<basis>_low_percent` / `_high_percent`). So every priced part moves by the range of its
own basis, and the capex is priced again at the low and at the high ends, extras included (spares, installation,
freight and tax are shares of the hardware, so they move with it). Only the on-prem pricing runs again, not the
cloud rows: two cheap passes over the BOM.
"""

from __future__ import annotations

from engine.assumptions.registry import Assumptions
from engine.explain.wording import explain_entry
from engine.result.codec import encode
from engine.result.costs import CapexRange
from engine.result.plan import ExplainEntry

from .evaluation import Evaluation
from .inputs import CostInputs
from .onprem import onprem_costs
from .sensitivity import BASES, basis_range, parts_scales

__all__ = ["CAPEX_RANGE_FIGURE", "CAPEX_RANGE_SOURCE", "capex_range"]

CAPEX_RANGE_FIGURE = "costs.onprem.capex_range"
CAPEX_RANGE_SOURCE = (
    "AACE International, Recommended Practice 18R-97 'Cost Estimate Classification System - As Applied in "
    "Engineering, Procurement, and Construction for the Process Industries' (rev. 2020-08-07): the expected accuracy "
    "of an estimate by its class; each price basis takes the midpoints of its class's range (a vendor quote Class 1, "
    "a list price Class 2, a public estimate Class 3, an assumption Class 4)"
)


def capex_range(ev: Evaluation, inputs: CostInputs) -> tuple[CapexRange | None, dict[str, ExplainEntry]]:
    """The capex with every priced part at the low and at the high end of its basis's range, and its explain
    entry; (None, {}) when the plan has no priced capex."""
    capex = ev.onprem.capex_usd
    if capex is None:
        return None, {}
    a = Assumptions(overrides=dict(ev.job.assumption_overrides))
    low_scales, high_scales, why = parts_scales(a)
    low = onprem_costs(ev.job, inputs, ev.params, low_scales).capex_usd
    high = onprem_costs(ev.job, inputs, ev.params, high_scales).capex_usd
    if low is None or high is None:
        return None, {}
    figure = CapexRange(low_usd=low, high_usd=high)
    inputs_used: dict[str, object] = {
        "capex_usd": capex,
        "low_usd": low,
        "high_usd": high,
        **{f"{basis}_range_percent": _percent_range(a, basis) for basis in BASES},
    }
    formula = (
        "low (high) = the capex priced again with each BOM line's unit price x (1 - its basis's low %) "
        "(x (1 + its basis's high %)); spares, installation, freight and tax follow the hardware; " + why
    )
    entry = explain_entry(formula, encode(inputs_used), CAPEX_RANGE_SOURCE)
    return figure, {CAPEX_RANGE_FIGURE: entry}


def _percent_range(a: Assumptions, basis: str) -> str:
    low, high = basis_range(a, basis)
    return f"-{(1 - low) * 100:g} % / +{(high - 1) * 100:g} %"
