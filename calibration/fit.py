"""Fit the step-time model's efficiency constants and estimate its error honestly: leave one source out.

Why this shape of fit: every fitted constant is a ceiling on GEMM speed, so a row's predicted step time falls
roughly as a power of it. For one constant and its rows we measure that power per row (two evaluations), solve
each row for the value that would make it exact, and take the median of those values: the minimiser of the mean
absolute log error when the power law holds, refined once around the answer. A fit costs a few engine evaluations
per row instead of a search, so leave-one-source-out (refit without a paper or table, predict it) runs in the
test suite.

Which rows pin which constant (the principle, not a row): `gemm_efficiency_<generation>` on that generation's
BF16 rows; `fp8_gemm_efficiency_ratio` on Hopper FP8 rows given the Hopper BF16 ceiling; Blackwell, which has FP8
rows from a single source only, on those rows given the ratio. A constant with no rows left keeps its prior: the
ratio its prior (PRIORS, a judgement made before any fit), Blackwell the Hopper value.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from calibration.training import ROWS, CalibrationRow, evaluate_row
from engine.assumptions.registry import ASSUMPTIONS
from engine.catalog.hardware import Catalog

__all__ = ["FITTED", "Fit", "LosoResult", "fit_constants", "leave_one_source_out", "predict"]

FITTED = ("gemm_efficiency_ampere", "gemm_efficiency_hopper", "fp8_gemm_efficiency_ratio", "gemm_efficiency_blackwell")
# Values a constant takes when no row is left to fit it, so that a held-out source never leaks into its own
# prediction through a stored default that was fitted with it: the FP8 ratio's judgement value before any fit.
PRIORS = {"fp8_gemm_efficiency_ratio": 0.8}
_STEP = 1.15  # the second evaluation point of the power-law slope
_LO, _HI = 0.05, 1.0


@dataclass(frozen=True)
class Fit:
    values: dict[str, float]
    loss: float  # mean |log(predicted / published)| over the rows fitted
    rows: int


@dataclass(frozen=True)
class LosoResult:
    """One held-out source: its rows' errors with every constant refitted without them."""

    source: str
    fit: Fit
    errors: dict[str, float]  # row id -> signed relative error


class _Evaluator:
    """Cached engine evaluations: (row, constants) -> predicted seconds per step."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.cache: dict[tuple[str, tuple[float, ...]], float] = {}

    def __call__(self, row: CalibrationRow, values: dict[str, float]) -> float:
        key = (row.id, tuple(round(values[n], 6) for n in FITTED))
        if key not in self.cache:
            result = evaluate_row(row, self.catalog, dict(values))
            self.cache[key] = result.predicted_step_s if result.predicted_step_s else math.inf
        return self.cache[key]


def _generation(catalog: Catalog, row: CalibrationRow) -> str:
    return catalog.gpu_of(catalog.systems[row.system]).generation


def _solve(name: str, rows: list[CalibrationRow], values: dict[str, float], evaluate: Callable) -> float:
    """The value of `name` whose rows' median log error is zero, by per-row power-law solutions (two rounds)."""
    value = values[name]
    for _ in range(2):
        solutions = []
        for row in rows:
            lo = evaluate(row, {**values, name: value})
            hi = evaluate(row, {**values, name: min(_HI, value * _STEP)})
            ratio = min(_HI, value * _STEP) / value
            if not (math.isfinite(lo) and math.isfinite(hi)) or hi >= lo or ratio <= 1.0:
                continue
            power = math.log(lo / hi) / math.log(ratio)
            solutions.append(value * (lo / row.published_step_s) ** (1.0 / power))
        if not solutions:
            return value
        value = min(_HI, max(_LO, statistics.median(solutions)))
    return value


def fit_constants(catalog: Catalog, rows: Iterable[CalibrationRow], evaluate: _Evaluator | None = None) -> Fit:
    """Fit FITTED on `rows` (module note: which rows pin which constant); priors where no rows are left."""
    evaluate = evaluate or _Evaluator(catalog)
    rows = list(rows)
    values = {n: PRIORS.get(n, float(ASSUMPTIONS[n].default)) for n in FITTED}

    def pick(generation: str, precision: str) -> list[CalibrationRow]:
        return [r for r in rows if _generation(catalog, r) == generation and r.precision == precision]

    if ampere := pick("ampere", "bf16"):
        values["gemm_efficiency_ampere"] = _solve("gemm_efficiency_ampere", ampere, values, evaluate)
    hopper_bf16, hopper_fp8 = pick("hopper", "bf16"), pick("hopper", "fp8")
    for _ in range(2):  # the Hopper ceiling and the FP8 ratio share the FP8 rows
        if hopper_bf16:
            values["gemm_efficiency_hopper"] = _solve("gemm_efficiency_hopper", hopper_bf16, values, evaluate)
        elif hopper_fp8:
            values["gemm_efficiency_hopper"] = _solve("gemm_efficiency_hopper", hopper_fp8, values, evaluate)
        if hopper_fp8 and hopper_bf16:
            values["fp8_gemm_efficiency_ratio"] = _solve("fp8_gemm_efficiency_ratio", hopper_fp8, values, evaluate)
    blackwell = pick("blackwell", "fp8") + pick("blackwell", "bf16")
    values["gemm_efficiency_blackwell"] = values["gemm_efficiency_hopper"]
    if blackwell:
        values["gemm_efficiency_blackwell"] = _solve("gemm_efficiency_blackwell", blackwell, values, evaluate)
    errors = [abs(math.log(evaluate(r, values) / r.published_step_s)) for r in rows]
    return Fit(values, statistics.fmean(errors) if errors else 0.0, len(rows))


def predict(
    catalog: Catalog, rows: Iterable[CalibrationRow], values: dict[str, float], evaluate: _Evaluator | None = None
) -> dict[str, float]:
    """Signed relative error (predicted / published - 1) of each row with the given constants."""
    evaluate = evaluate or _Evaluator(catalog)
    return {r.id: evaluate(r, values) / r.published_step_s - 1.0 for r in rows}


def leave_one_source_out(
    catalog: Catalog, rows: list[CalibrationRow] | None = None
) -> tuple[Fit, dict[str, float], list[LosoResult]]:
    """The full fit, its in-sample errors, and for each source the errors of its rows refitted without it."""
    rows = list(ROWS if rows is None else rows)
    evaluate = _Evaluator(catalog)
    full = fit_constants(catalog, rows, evaluate)
    in_sample = predict(catalog, rows, full.values, evaluate)
    held: list[LosoResult] = []
    for source in dict.fromkeys(r.source_id for r in rows):
        fit = fit_constants(catalog, [r for r in rows if r.source_id != source], evaluate)
        mine = [r for r in rows if r.source_id == source]
        held.append(LosoResult(source, fit, predict(catalog, mine, fit.values, evaluate)))
    return full, in_sample, held
