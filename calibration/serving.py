"""Published serving measurements and the fit of the inference model's constants.

Why in the engine package: `make accuracy` must re-run the fit and the comparison with exactly the formulas that
size clusters (inference_model.py), and tests hold the stored defaults to the refit.

Principle: a handful of global constants, each with a physical meaning, are fitted together on the fit rows by
minimising the mean |log(predicted / published)|: decode_mbu (bandwidth the decode kernels reach),
decode_step_overhead_ms (fixed per iteration), inference_allreduce_latency_us (fixed per TP all-reduce),
prefill_mfu and prefill_half_mfu_tokens (the GEMM-efficiency curve by tokens in flight) and
inference_memory_utilization (usable HBM, i.e. the KV budget). Bandwidth utilisation by TP and GPU and prefill
MFU by prompt length are *derived curves* of these constants, never per-row values. A row states only its
published configuration: model, precision, GPU, TP/PP, ISL/OSL, load, and the engine's batch cap.

Split: fit = the 9 offline throughput rows C1-C9 (section 3), the 7 lightly loaded decode points (5b) and the 7
batch-1 first-token points (5c). Held out = the online rows C10-C12 (throughput, TTFT, TPOT under load) and the
section 7 TensorRT-LLM v0.17 grid at the other ISL/OSL mixes and TP degrees. Data: reference/
inference-calibration.md (sections 1, 3, 5b, 5c, 7); the rows themselves are in `calibration/serving_data.py`.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace

from calibration.serving_data import ENGINE_BATCH_CAP, INFERENCE_ROWS, L40S, MODELS, InferenceRow
from engine.assumptions.registry import KV_BYTES_BY_PRECISION, Assumptions
from engine.catalog.hardware import Catalog, Gpu
from engine.performance.serving import ReplicaModel, compute_precision_for, constants_from
from engine.workload.model import analyse_model, bytes_per_param

__all__ = [
    "FIT_NAMES",
    "NEUTRAL_START",
    "InferenceRowResult",
    "constants_from",
    "evaluate_inference_rows",
    "fit_inference",
    "fit_loss",
    "inference_summary",
]

FIT_NAMES = (
    "decode_mbu",
    "decode_step_overhead_ms",
    "inference_allreduce_latency_us",
    "prefill_mfu",
    "prefill_half_mfu_tokens",
    "inference_memory_utilization",
)
# Where the fit starts: the judgement values the constants had before calibration (docs/accuracy.md, the tests).
NEUTRAL_START = {
    "decode_mbu": 0.55,
    "decode_step_overhead_ms": 0.5,
    "inference_allreduce_latency_us": 8.0,
    "prefill_mfu": 0.35,
    "prefill_half_mfu_tokens": 512.0,
    "inference_memory_utilization": 0.9,
}


@dataclass(frozen=True)
class InferenceRowResult:
    row: InferenceRow
    predicted: float | None
    note: str = ""

    @property
    def error(self) -> float | None:
        """predicted / published - 1 (negative = the model is faster / predicts less time)."""
        return None if self.predicted is None else self.predicted / self.row.published - 1.0


def _gpu(catalog: Catalog, gpu_id: str) -> Gpu:
    return L40S if gpu_id == "l40s" else catalog.gpus[gpu_id]


def replica_for_row(row: InferenceRow, catalog: Catalog, a: Assumptions) -> ReplicaModel:
    """The replica model of a row's published configuration."""
    work = analyse_model(MODELS[row.model])
    gpu = _gpu(catalog, row.gpu)
    cp = compute_precision_for(gpu, row.precision)
    constants = replace(constants_from(a, ENGINE_BATCH_CAP[row.engine]), steps_per_schedule=row.steps_per_schedule)
    return ReplicaModel(
        work=work,
        gpu=gpu,
        tp=row.tp,
        pp=row.pp,
        prompt_tokens=row.prompt_tokens,
        output_tokens=row.output_tokens,
        weight_bytes_per_param=bytes_per_param(row.precision, a["int4_bytes_per_param"], a["fp4_bytes_per_param"]),
        kv_bytes_per_token=work.kv_bytes_per_token(KV_BYTES_BY_PRECISION[row.precision]),
        peak_flops=(gpu.dense_tflops(cp) or gpu.bf16_dense_tflops) * 1e12,
        c=constants,
    )


def evaluate_inference_row(row: InferenceRow, catalog: Catalog, a: Assumptions) -> InferenceRowResult:
    """Predict a row's published figure with the engine's formulas at its published configuration."""
    m = replica_for_row(row, catalog, a)
    if row.kind == "ttft_batch1":
        return InferenceRowResult(row, m.prefill_s(row.prompt_tokens) * 1000.0)
    if row.kind == "tpot_batch":
        # Static batch: total latency / output tokens = (prefill of the batch + out x step) / out.
        batch = row.load
        step = m.decode_step_s(batch)
        prefill = m.prefill_s(int(row.prompt_tokens * batch))
        return InferenceRowResult(row, (prefill + row.output_tokens * step) / row.output_tokens * 1000.0)
    top = m.max_batch()
    if top < 1:
        return InferenceRowResult(row, None, "does not fit in memory")
    if row.kind == "offline":
        return InferenceRowResult(row, m.point(top).tokens_per_s, f"batch {top}")
    batch = m.batch_for_rate(row.load, float(top))
    point = m.point(batch)
    note = f"batch {batch:.1f}" + (" (saturated)" if batch >= top else "")
    value = point.tpot_s if row.kind == "tpot_rate" else point.ttft_s
    return InferenceRowResult(row, value * 1000.0, note)


def evaluate_inference_rows(catalog: Catalog, overrides: dict[str, float] | None = None) -> list[InferenceRowResult]:
    a = Assumptions(overrides=dict(overrides or {}))
    return [evaluate_inference_row(row, catalog, a) for row in INFERENCE_ROWS]


def _loss(results: list[InferenceRowResult]) -> float:
    """Mean |log(predicted / published)| over the fit rows; a row the model cannot run costs log(10)."""
    logs = [
        abs(math.log(r.predicted / r.row.published)) if r.predicted else math.log(10.0)
        for r in results
        if r.row.role == "fit"
    ]
    return sum(logs) / len(logs)


def fit_loss(catalog: Catalog, values: dict[str, float]) -> float:
    """The fit's objective at given constant values (mean |log error| over the fit rows)."""
    a = Assumptions(overrides=dict(values))
    return _loss([evaluate_inference_row(r, catalog, a) for r in INFERENCE_ROWS if r.role == "fit"])


def fit_inference(
    catalog: Catalog, start: dict[str, float] | None = None, rounds: int = 6
) -> tuple[dict[str, float], float]:
    """Coordinate descent on FIT_NAMES in log space within each assumption's bounds; returns (values, loss).

    Deterministic: a fixed start (the registry defaults unless given), fixed step ladder, fixed order.
    """
    from engine.assumptions.registry import ASSUMPTIONS

    fit_rows = [r for r in INFERENCE_ROWS if r.role == "fit"]
    values = {n: float(start[n]) if start else ASSUMPTIONS[n].default for n in FIT_NAMES}

    def loss(v: dict[str, float]) -> float:
        a = Assumptions(overrides=v)
        return _loss([evaluate_inference_row(r, catalog, a) for r in fit_rows])

    best = loss(values)
    for step in (1.5, 1.2, 1.08, 1.03, 1.01)[: max(1, rounds)]:
        improved = True
        while improved:
            improved = False
            for name in FIT_NAMES:
                spec = ASSUMPTIONS[name]
                for factor in (step, 1.0 / step):
                    trial = dict(values)
                    trial[name] = min(spec.maximum, max(spec.minimum, values[name] * factor))
                    if trial[name] == values[name]:
                        continue
                    value = loss(trial)
                    if value < best - 1e-9:
                        best, values, improved = value, trial, True
                        break
    return values, best


def inference_summary(results: list[InferenceRowResult]) -> dict[str, dict[str, float]]:
    """|error| median / mean / worst for all rows, the fit rows and the held-out rows."""
    out: dict[str, dict[str, float]] = {}
    for label, keep in (
        ("all", lambda r: True),
        ("fit", lambda r: r.row.role == "fit"),
        ("held out", lambda r: r.row.role == "held out"),
    ):
        errs = [abs(r.error) for r in results if keep(r) and r.error is not None]
        missing = sum(1 for r in results if keep(r) and r.error is None)
        out[label] = {
            "rows": float(len(errs) + missing),
            "missing": float(missing),
            "median": statistics.median(errs) if errs else 0.0,
            "mean": statistics.fmean(errs) if errs else 0.0,
            "worst": max(errs) if errs else 0.0,
        }
    return out
