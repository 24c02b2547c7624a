"""Evaluating the steady-state rows (`calibration.rows`) with the engine, and the fit of the step-time model's
per-generation constants.

Why here and not in a notebook: the fit must be reproducible (`make accuracy` re-runs it and writes
docs/accuracy.md) and the rows must be evaluated by exactly the engine code that plans clusters.

Principle: one constant per GPU generation (`gemm_efficiency_<generation>`) is fitted; every other constant is a
documented judgement default. Each row is evaluated with its published configuration pinned (TP, PP, DP, batch,
micro-batch and interleaving where published, recompute mode, the software's attention and sequence-parallel
settings); knobs a source does not publish (Narayanan 2021's micro-batch and interleaving) are left to the search,
as the authors tuned them. Rows are never special-cased.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from calibration.rows import ROWS, CalibrationRow
from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Catalog
from engine.request.spec import TrainingMemory, TrainingSpec
from engine.search.layouts import Plan, TrainingSearch
from engine.workload.model import analyse_model

__all__ = ["ROWS", "CalibrationRow", "RowResult", "evaluate_rows", "fit_generation", "summary"]


@dataclass
class RowResult:
    """A row's prediction: step time scaled to the published batch, and the plan the engine chose."""

    row: CalibrationRow
    predicted_step_s: float | None
    plan: Plan | None
    problems: list[str] = field(default_factory=list)

    @property
    def error(self) -> float | None:
        """Signed relative error of the predicted step time (positive = model slower than measured)."""
        if self.predicted_step_s is None:
            return None
        return self.predicted_step_s / self.row.published_step_s - 1.0


def _generation(catalog: Catalog, row: CalibrationRow) -> str:
    return catalog.gpu_of(catalog.systems[row.system]).generation


def evaluate_row(row: CalibrationRow, catalog: Catalog, overrides: dict[str, float] | None = None) -> RowResult:
    """Run the engine's search on the row's pinned configuration (GPU-count mode) and return the fastest plan."""
    system = catalog.systems[row.system]
    gpu = catalog.gpu_of(system)
    spec = TrainingSpec(
        tokens=1e9,
        gpus=row.gpus,
        global_batch_tokens=row.batch_sequences * row.model.seq_len,
        parallelism=row.parallelism,
        precision=row.precision,
        memory=row.memory or TrainingMemory(),
    )
    a = Assumptions(overrides={**row.software, **(overrides or {})})
    search = TrainingSearch(analyse_model(row.model), spec, system, gpu, a)
    plan, stats, miss = search.fastest(row.gpus)
    if plan is None:
        reasons = {k: v for k, v in stats.rejected_by_reason.items() if v}
        return RowResult(row, None, None, [f"no feasible plan: {reasons}; min memory {miss.min_memory_gib}"])
    per_sequence = plan.step_time_s / (plan.tokens_per_step / row.model.seq_len)
    return RowResult(row, per_sequence * row.batch_sequences, plan)


def evaluate_rows(
    catalog: Catalog, overrides: dict[str, float] | None = None, rows: list[CalibrationRow] | None = None
) -> list[RowResult]:
    return [evaluate_row(r, catalog, overrides) for r in (rows if rows is not None else ROWS)]


def _loss(results: list[RowResult]) -> float:
    """Mean |log(predicted / published)|: symmetric in over- and under-prediction; infeasible rows cost a lot."""
    return statistics.fmean(
        abs(math.log(r.predicted_step_s / r.row.published_step_s)) if r.predicted_step_s else 10.0 for r in results
    )


def fit_generation(catalog: Catalog, generation: str, lo: float = 0.40, hi: float = 0.98) -> tuple[float, float]:
    """Fit gemm_efficiency_<generation> on that generation's `fit` rows by golden-section search.

    Returns (value, loss). The stored default in assumptions.py is this value rounded to 3 decimals.
    """
    rows = [r for r in ROWS if r.role == "fit" and _generation(catalog, r) == generation]
    name = f"gemm_efficiency_{generation}"

    def loss(x: float) -> float:
        return _loss(evaluate_rows(catalog, {name: x}, rows))

    ratio = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = loss(c), loss(d)
    for _ in range(40):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = loss(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = loss(d)
    x = (a + b) / 2
    return x, loss(x)


def summary(results: list[RowResult]) -> dict[str, dict[str, float]]:
    """Median and worst |error| over all rows, the fit rows and the held-out rows."""
    out: dict[str, dict[str, float]] = {}
    for label, pick in (
        ("all", lambda r: True),
        ("fit", lambda r: r.row.role == "fit"),
        ("held out", lambda r: r.row.role == "held out"),
    ):
        errs = [abs(r.error) for r in results if pick(r) and r.error is not None]
        if errs:
            out[label] = {
                "rows": len(errs),
                "median": statistics.median(errs),
                "worst": max(errs),
                "mean": statistics.fmean(errs),
            }
    return out
