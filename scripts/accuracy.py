"""Predicted vs published training and serving figures for every calibration row -> docs/accuracy.md (`make accuracy`).

The training half (calibration/report.py) refits the fitted constants and reports in-sample and
leave-one-source-out errors for steady-state throughput and whole runs; the inference half refits the serving
constants on its fit rows. Prints the document too.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calibration.report import training_lines  # noqa: E402
from calibration.serving import (  # noqa: E402
    FIT_NAMES,
    NEUTRAL_START,
    evaluate_inference_rows,
    fit_inference,
    fit_loss,
    inference_summary,
    replica_for_row,
)
from calibration.serving_data import INFERENCE_ROWS  # noqa: E402
from engine import load_catalog  # noqa: E402
from engine.assumptions.registry import ASSUMPTIONS, Assumptions  # noqa: E402

INFERENCE_HEADER = """# Inference serving accuracy

Every published serving figure of reference/inference-calibration.md (sections 3, 5b, 5c and the section 7
TensorRT-LLM v0.17 grid) is run through the engine's own serving model (`engine/performance/serving.py`) at its
published configuration: model, precision (FP8 also means an FP8 KV cache), GPU, TP, prompt/output tokens, load
(all requests at once, a request rate, or a fixed batch), and the engine's batch cap (TensorRT-LLM 2048 [U],
vLLM 256) and multi-step setting. Error = `predicted / published - 1` on the published quantity (output tok/s for
throughput rows, ms for TTFT/TPOT rows).

**Calibration principle.** Six global constants with a physical meaning are fitted together (coordinate descent on
the mean |log error| of the fit rows, from the judgement values): `decode_mbu`, `decode_step_overhead_ms`,
`inference_allreduce_latency_us`, `prefill_mfu`, `prefill_half_mfu_tokens`, `inference_memory_utilization`.
Bandwidth utilisation by TP and GPU and prefill MFU by prompt length are curves derived from them (tables below),
not per-row values. No row is special-cased.

**Split.** Fit: offline throughput C1-C9, lightly loaded decode 5b (7 points), batch-1 first token 5c (7 points).
Held out: the online rows C10-C12 (throughput, TTFT and TPOT under load) and the section 7 grid (other ISL/OSL
mixes and TP degrees).
"""


def main() -> int:
    catalog = load_catalog()
    lines = training_lines(catalog)
    lines += inference_lines(catalog)
    text = "\n".join(lines)
    out = ROOT / "docs" / "accuracy.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(text)
    return 0


def inference_lines(catalog) -> list[str]:
    """The inference section of docs/accuracy.md: the fit, the error summary, the derived curves, every row."""
    fit = _fit_lines(catalog)
    results = evaluate_inference_rows(catalog)
    return [*fit, *_summary_lines(results), *_curve_lines(catalog), *_row_lines(results), *_reading_lines()]


def _fit_lines(catalog) -> list[str]:
    """The header and the fitted constants: stored defaults beside a refit from the judgement start, with losses."""
    stored = {n: ASSUMPTIONS[n].default for n in FIT_NAMES}
    refit, refit_loss = fit_inference(catalog, start=NEUTRAL_START)
    lines = [
        "",
        INFERENCE_HEADER,
        "## Fitted constants",
        "",
        "| Constant | Unit | Stored default | Refit now (from the judgement start) |",
        "|---|---|---|---|",
    ]
    for n in FIT_NAMES:
        lines.append(f"| `{n}` | {ASSUMPTIONS[n].unit} | {stored[n]:.4g} | {refit[n]:.4g} |")
    lines += [
        "",
        f"Fit loss (mean abs log error over fit rows): stored {fit_loss(catalog, stored):.4f}, "
        f"refit {refit_loss:.4f}, judgement start {fit_loss(catalog, NEUTRAL_START):.4f}.",
    ]
    return lines


def _summary_lines(results) -> list[str]:
    """|error| by role (all, fit, held out), then the median by kind of figure within each role."""
    stats = inference_summary(results)
    lines = ["", "## Summary (|error|)", "", "| Rows | Count | Median | Mean | Worst |", "|---|---|---|---|---|"]
    for label in ("all", "fit", "held out"):
        st = stats[label]
        lines.append(f"| {label} | {st['rows']:.0f} | {st['median']:.1%} | {st['mean']:.1%} | {st['worst']:.1%} |")
    for label, keep in (("fit", "fit"), ("held out", "held out")):
        by_kind: dict[str, list[float]] = {}
        for r in results:
            if r.row.role == keep and r.error is not None:
                by_kind.setdefault(r.row.kind, []).append(abs(r.error))
        parts = [f"{k} {len(v)} rows median {sorted(v)[len(v) // 2]:.1%}" for k, v in sorted(by_kind.items())]
        lines.append(f"\n{label} by kind: " + "; ".join(parts) + ".")
    return lines


def _curve_lines(catalog) -> list[str]:
    """The curves the fitted constants imply: effective decode bandwidth utilisation by GPU and TP (Llama 3.1
    at row C7's load), and prefill GEMM efficiency by prompt length."""
    a = Assumptions()
    lines = [
        "",
        "## Derived curves",
        "",
        "Effective decode bandwidth utilisation (bytes a step reads / (step time x HBM bandwidth)) for Llama "
        "3.1 70B BF16 (8B at TP1), 1000/1000 tokens, batch 8:",
        "",
        "| GPU | TP1 (8B) | TP2 | TP4 | TP8 |",
        "|---|---|---|---|---|",
    ]
    base = next(r for r in INFERENCE_ROWS if r.id == "C7")
    for gpu in ("a100-80gb-sxm", "h100-sxm", "h200-sxm", "b200-hgx"):
        cells = []
        for tp in (1, 2, 4, 8):
            row = base.__class__(
                **{
                    **base.__dict__,
                    "gpu": gpu,
                    "tp": tp,
                    "precision": "bf16",
                    "model": "llama-3.1-8b" if tp == 1 else "llama-3.1-70b",
                }
            )
            m = replica_for_row(row, catalog, a)
            read = m.weights_read_bytes_per_gpu(8) + m.kv_read_bytes_per_gpu(8)
            cells.append(f"{read / (m.decode_step_s(8) * m.gpu.hbm_tbps * 1e12):.0%}")
        lines.append(f"| {gpu} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Prefill GEMM efficiency by prompt tokens (fraction of dense peak, before all-reduce and weight "
        "reads): "
        + ", ".join(
            f"{n} tokens {a['prefill_mfu'] * n / (n + a['prefill_half_mfu_tokens']):.0%}"
            for n in (128, 512, 2048, 8192)
        )
        + ".",
    ]
    return lines


def _row_lines(results) -> list[str]:
    """Every row: its published configuration and figure, the prediction and the error."""
    lines = [
        "",
        "## Every row",
        "",
        "| Row | Section | Role | Kind | Config | Published | Predicted | Error | Note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        row = r.row
        config = f"{row.model} {row.precision} {row.gpu} TP{row.tp} {row.prompt_tokens}/{row.output_tokens}"
        if row.load:
            config += f" load {row.load:g}"
        pred = "-" if r.predicted is None else f"{r.predicted:,.1f}"
        err = "-" if r.error is None else f"{r.error:+.1%}"
        lines.append(
            f"| {row.id} | {row.section} | {row.role} | {row.kind} | {config} | {row.published:,.1f} "
            f"{row.unit} | {pred} | {err} | {r.note} |"
        )
    return lines


def _reading_lines() -> list[str]:
    """How to read the inference errors: the rows the model misses and why."""
    return [
        "",
        "## Reading the errors",
        "",
        "- C8 (Llama 3.3 70B NVFP4 on one B200, TensorRT-LLM v1.0) is over-predicted by about half: one global "
        "bandwidth utilisation carries Hopper's to Blackwell, whose FP4 kernels evidently reach less; it is the "
        "only Blackwell row, so no per-generation constant is fitted on it.",
        "- The effective-MBU table shows A100 lower at batch 8: the decode compute leg uses the same GEMM "
        "efficiency ramp as prefill (efficiency at n tokens = prefill_mfu x n / (n + half)), which binds before "
        "bandwidth on A100's smaller peak. A flat decode efficiency was tried and fitted worse (fit median "
        "7.5 %, held out 14.1 %), so the ramp stays; light-load A100 TPOT is the least certain figure.",
        "- The held-out TP4/TP8 Hopper grid rows with long outputs (128/2048, 2048/2048) are over-predicted by "
        "25-75 %: the model lets the batch grow to the 2048 cap when KV allows, where the real engine's chosen "
        "batch (not published) was evidently smaller.",
        "- Online rows under heavy load (C10 at 12 req/s) are under-predicted: TensorRT-LLM v0.14 ran prefills "
        "unchunked, stalling decode more than the model's averaged interleaving; vLLM's TPOT on A100 (C12) is "
        "over-predicted at light load.",
        f"- Rows: {len(INFERENCE_ROWS)}. `tests/sizing/test_inference_accuracy.py` fails if the fit median "
        "exceeds 8 %, the held-out median 20 %, or the stored defaults drift from the refit.",
        "",
    ]


if __name__ == "__main__":
    raise SystemExit(main())
