"""One evaluation of a job under given scales: parameters, on-prem, cloud rows and the options they give.

The sensitivity table re-runs it with one input scaled; `plan_costs` runs it once at scale 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cloud import PricedRow, cloud_rows
from .comparison import Option, options
from .inputs import CostInputs, CostJob, Scales
from .onprem import OnpremCosts, onprem_costs
from .parameters import Params

__all__ = ["Evaluation", "evaluate"]


@dataclass
class Evaluation:
    job: CostJob
    params: Params
    onprem: OnpremCosts
    rows: list[PricedRow]
    cloud_notes: list[str]
    options: list[Option]


def evaluate(job: CostJob, inputs: CostInputs, scales: Scales) -> Evaluation:
    params = Params(inputs, job.terms)
    onprem = onprem_costs(job, inputs, params, scales)
    rows, notes = cloud_rows(job, inputs, params, scales)
    return Evaluation(job, params, onprem, rows, notes, options(onprem, rows))
