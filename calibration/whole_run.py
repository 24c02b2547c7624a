"""Whole-run calibration: published GPU-hours and wall-clock days against the plan's expected whole run.

Why apart from the throughput rows: benchmarks (calibration/training.py) check the step-time model; whole runs
also pay for failures, restarts, evaluations, stragglers and the software of their time, which is what a deadline
depends on (training-calibration.md section 3g: keep the two apart). Each row is a plan request run through the
planner's own chain (`run_plan`), so the figure compared is exactly what a user would read. A row whose request
the engine cannot express yet (a system not in the catalog) is reported as pending with the reason, not dropped.

The rows themselves (published runs as plan requests) are in calibration/whole_run_rows.py. Constants marked
`fit = "whole_run"` in the assumption files are fitted here on these rows (throughput constants
fixed at their stored values), with leave-one-source-out errors, the same way as the throughput fit.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from calibration.whole_run_rows import (
    WHOLE_RUN_ROWS,
    UncountedRun,
    WholeRunRow,
    preset_request,
)
from engine import run_plan, to_json, validate_request
from engine.assumptions.registry import ASSUMPTIONS
from engine.catalog.hardware import Catalog
from engine.request.validation import RequestInvalid

__all__ = [
    "evaluate_whole_run",
    "implied_production_efficiency",
    "steady_tokens_per_s_per_gpu",
    "uncounted_predictions",
    "whole_run_loso",
    "whole_run_range",
]


def fitted_whole_run_constants() -> tuple[str, ...]:
    return tuple(n for n, a in ASSUMPTIONS.items() if a.fit == "whole_run")


def evaluate_whole_run(
    row: WholeRunRow, catalog: Catalog, overrides: dict[str, float] | None = None
) -> tuple[float | None, str]:
    """(predicted figure in the row's unit, "" ) or (None, why the row is pending or infeasible)."""
    body = {**row.request, "assumptions": {**row.request.get("assumptions", {}), **(overrides or {})}}
    if row.request["hardware"]["system"] not in catalog.systems:
        return None, f"pending: system {row.request['hardware']['system']} is not in the catalog yet"
    try:
        plan = to_json(run_plan(validate_request(body, catalog), catalog))
    except RequestInvalid as exc:
        return None, f"pending: the request does not validate ({exc})"
    training = plan.get("training")
    if not training:
        return None, "infeasible: " + "; ".join(plan.get("problems", []))[:200]
    return _in_unit(row, training, float(training["days"])), ""


def _in_unit(row: WholeRunRow, training: dict[str, Any], days: float) -> float:
    """Days in the row's unit (days or GPU-hours), without failures when the published figure leaves them out."""
    if row.excludes_failures:
        days *= float((training.get("goodput") or {}).get("fraction", 1.0))
    return days if row.unit == "days" else days * 24.0 * float(training["gpus"])


def _stored_defaults_training(row: WholeRunRow, catalog: Catalog) -> dict[str, Any] | None:
    """The training section of the row's plan at the stored defaults; None for a system the catalog lacks or an
    infeasible plan."""
    if row.request["hardware"]["system"] not in catalog.systems:
        return None
    return to_json(run_plan(validate_request(row.request, catalog), catalog)).get("training")


def steady_tokens_per_s_per_gpu(row_id: str, catalog: Catalog) -> float | None:
    """The planner's steady-state tokens/s per GPU for a whole-run row (its plan between failures), to set beside
    a pace the run published itself; None where the row cannot be planned."""
    training = _stored_defaults_training(next(r for r in WHOLE_RUN_ROWS if r.id == row_id), catalog)
    return float(training["tokens_per_s"]) / float(training["gpus"]) if training else None


def whole_run_range(row: WholeRunRow, catalog: Catalog) -> tuple[float, float] | None:
    """The plan's p10-p90 of the row's figure at the stored defaults (does the range cover the published run?)."""
    training = _stored_defaults_training(row, catalog)
    if not training or not training.get("days_range"):
        return None
    return _in_unit(row, training, training["days_range"]["p10"]), _in_unit(
        row, training, training["days_range"]["p90"]
    )


def _errors(rows: list[WholeRunRow], catalog: Catalog, overrides: dict[str, float]) -> dict[str, float]:
    out = {}
    for row in rows:
        value, _why = evaluate_whole_run(row, catalog, overrides)
        if value is not None:
            out[row.id] = value / row.published - 1.0
    return out


def _row_solutions(rows: list[WholeRunRow], catalog: Catalog, values: dict[str, float], name: str) -> dict[str, float]:
    """The value of constant `name` that would make each row exact (the others at `values`): the row's error is
    a power law in the constant, its exponent read from a second run with the constant 15 % higher."""
    a = ASSUMPTIONS[name]
    base = _errors(rows, catalog, values)
    step = min(a.maximum, values[name] * 1.15)
    if step == values[name]:
        return {}
    moved = _errors(rows, catalog, {**values, name: step})
    out = {}
    for rid, err in base.items():
        lo, hi = 1.0 + err, 1.0 + moved.get(rid, err)
        if hi > 0 and lo > 0 and hi != lo:
            power = math.log(hi / lo) / math.log(step / values[name])
            out[rid] = values[name] * (1.0 / lo) ** (1.0 / power)
    return out


def _fit(rows: list[WholeRunRow], catalog: Catalog) -> dict[str, float]:
    """Each whole-run constant by the median per-row solution of a power law (as calibration.fit does)."""
    values = {n: float(ASSUMPTIONS[n].default) for n in fitted_whole_run_constants()}
    for name in values:
        a = ASSUMPTIONS[name]
        for _ in range(2):
            solutions = _row_solutions(rows, catalog, values, name)
            if solutions:
                values[name] = min(a.maximum, max(a.minimum, statistics.median(solutions.values())))
    return values


def implied_production_efficiency(catalog: Catalog) -> dict[str, float]:
    """Per runnable row, the production efficiency that would reproduce its published figure exactly (the
    uncapped per-row solution the fit takes the median of): the spread the plan's range has to cover, and the
    reason one value cannot hold every source (the accuracy report prints it)."""
    runnable = [r for r in WHOLE_RUN_ROWS if evaluate_whole_run(r, catalog)[0] is not None]
    values = {n: float(ASSUMPTIONS[n].default) for n in fitted_whole_run_constants()}
    return _row_solutions(runnable, catalog, values, "production_efficiency")


def whole_run_loso(catalog: Catalog) -> tuple[dict[str, float], dict[str, float], dict[str, float], dict[str, str]]:
    """(full-fit constants, in-sample errors, leave-one-source-out errors, pending/infeasible reasons by row)."""
    pending = {}
    runnable = []
    for row in WHOLE_RUN_ROWS:
        value, why = evaluate_whole_run(row, catalog)
        if value is None:
            pending[row.id] = why
        else:
            runnable.append(row)
    full = _fit(runnable, catalog)
    in_sample = _errors(runnable, catalog, full)
    loso: dict[str, float] = {}
    for source in dict.fromkeys(r.source for r in runnable):
        rest = [r for r in runnable if r.source != source]
        values = _fit(rest, catalog) if rest else full
        loso.update(_errors([r for r in runnable if r.source == source], catalog, values))
    return full, in_sample, loso, pending


def uncounted_predictions(run: UncountedRun, catalog: Catalog) -> dict[int, float]:
    """The planner's figure (the run's unit) at each plausible GPU count; counts the planner finds infeasible are
    left out."""
    out = {}
    for gpus in run.gpu_counts:
        row = WholeRunRow(
            run.id,
            run.source,
            preset_request(run.preset, run.system, gpus, run.tokens, "bf16", dict(run.parallelism)),
            run.published,
            run.unit,
            False,
            run.notes,
        )
        value, _why = evaluate_whole_run(row, catalog)
        if value is not None:
            out[gpus] = value
    return out
