"""One evaluation of a job under given scales: parameters, on-prem, time to capacity, cloud rows and the options
they give, each marked obtainable or not.

The sensitivity table re-runs it with one input scaled; `plan_costs` runs it once at scale 1.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.result.costs import TimeToCapacity
from engine.result.rollout import RolloutSummary

from .capacity import time_to_capacity
from .cloud import PricedRow, cloud_rows
from .comparison import Option, options
from .inputs import CostInputs, CostJob, Scales
from .obtainable import apply_rules
from .onprem import OnpremCosts
from .ownership import owned_costs
from .parameters import Params
from .rollout import rollout_plan

__all__ = ["SPOT_PRICE_FACTOR", "Evaluation", "evaluate"]

# A named cost parameter (fixtures/prices/parameters.json): the snapshot's spot prices times this (what-if "spot
# discount"); 1 = as observed. Absent from a hand-built parameter table = 1.
SPOT_PRICE_FACTOR = "spot_price_factor"


@dataclass
class Evaluation:
    job: CostJob
    params: Params
    onprem: OnpremCosts
    rows: list[PricedRow]
    cloud_notes: list[str]
    options: list[Option]
    capacity: TimeToCapacity
    plan_date: str | None = None
    rollout: RolloutSummary | None = None  # a phased delivery: the owned option starts when the workload can

    @property
    def obtainable(self) -> list[Option]:
        return [o for o in self.options if o.obtainable]

    def row_obtainable(self, priced: PricedRow) -> bool:
        """Whether the cloud row's option passed every obtainability rule (unavailable rows never do)."""
        row = priced.row
        key = (row.purchase, row.region, row.instance_type)
        return any((o.option, o.region, o.instance_type) == key for o in self.obtainable)


def _spot_scaled(scales: Scales, params: Params) -> Scales:
    """`scales` with the spot prices also moved by the parameter `spot_price_factor` (a request's what-if)."""
    try:
        factor = float(params[SPOT_PRICE_FACTOR])
    except KeyError:
        return scales
    return scales if factor == 1 else replace(scales, spot_price=scales.spot_price * factor)


def evaluate(job: CostJob, inputs: CostInputs, scales: Scales) -> Evaluation:
    params = Params(inputs, job.terms)
    scales = _spot_scaled(scales, params)
    onprem = owned_costs(job, inputs, params, scales)
    rows, notes = cloud_rows(job, inputs, params, scales)
    plan_date = inputs.plan_date or None
    capacity = time_to_capacity(job, plan_date)
    rollout = rollout_plan(job, capacity, onprem.capex_usd)
    start_days = rollout.start_days if rollout is not None else capacity.onprem_start_days
    opts = apply_rules(options(onprem, rows, start_days, job.deadline_spread), job)
    return Evaluation(job, params, onprem, rows, notes, opts, capacity, plan_date, rollout)
