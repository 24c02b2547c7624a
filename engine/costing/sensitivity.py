"""Sensitivity: move each input -20 % and +20 % alone and see how far "cloud minus on-prem" swings."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from engine.result.costs import Sensitivity, SensitivityFigures, SensitivityRow

from .evaluation import Evaluation, evaluate
from .inputs import CostInputs, Scales

__all__ = ["SENSITIVITY_INPUTS", "SENSITIVITY_STEP", "sensitivity"]

SENSITIVITY_STEP = 0.20
SENSITIVITY_INPUTS = (
    ("utilization", "On-prem utilisation"),
    ("system_price", "GPU system / hardware price"),
    ("power_price", "Electricity price"),
    ("spot_price", "Spot price"),
    ("mfu", "MFU (job time scales with 1 / MFU)"),
)
METRIC = (
    "cloud_minus_onprem_usd = cheapest obtainable cloud job cost (each option sized for the same work) - on-prem "
    "shared job cost (positive: building is cheaper)"
)


def _metrics(ev: Evaluation) -> SensitivityFigures:
    """The compared figures, from cent-rounded job costs (so the difference is exact in cents)."""
    cloud = [o.job_usd for o in ev.obtainable if o.cloud]
    best_cloud = min(cloud) if cloud else None
    onprem = ev.onprem.job_usd_shared
    return SensitivityFigures(
        onprem_job_usd_shared=onprem,
        cheapest_cloud_job_usd=best_cloud,
        cloud_minus_onprem_usd=None if onprem is None or best_cloud is None else best_cloud - onprem,
    )


def _row(base: Evaluation, inputs: CostInputs, name: str, label: str) -> tuple[Decimal, SensitivityRow]:
    lo = _metrics(evaluate(base.job, inputs, replace(Scales(), **{name: 1 - SENSITIVITY_STEP})))
    hi = _metrics(evaluate(base.job, inputs, replace(Scales(), **{name: 1 + SENSITIVITY_STEP})))
    swing = None
    if lo.cloud_minus_onprem_usd is not None and hi.cloud_minus_onprem_usd is not None:
        swing = abs(hi.cloud_minus_onprem_usd - lo.cloud_minus_onprem_usd)
    row = SensitivityRow(
        input=name,
        label=label,
        low_factor=1 - SENSITIVITY_STEP,
        high_factor=1 + SENSITIVITY_STEP,
        low=lo,
        high=hi,
        swing_usd=swing,
    )
    return (swing if swing is not None else Decimal(-1)), row


def sensitivity(base: Evaluation, inputs: CostInputs) -> Sensitivity:
    """Rows sorted by swing, largest first (ties by input name); rows without a swing last."""
    ranked = sorted(
        (_row(base, inputs, name, label) for name, label in SENSITIVITY_INPUTS),
        key=lambda item: (-item[0], item[1].input),
    )
    rows = tuple(row for _swing, row in ranked)
    return Sensitivity(
        metric=METRIC,
        step=SENSITIVITY_STEP,
        base=_metrics(base),
        rows=rows,
        most_sensitive_to=rows[0].input if rows and rows[0].swing_usd is not None else None,
    )
