"""Explain entries of a serving plan's headline figures: replicas, batch, latency (TTFT, TPOT), throughput and the
KV cache.

Split from `engine/explain/sizing.py` (which still exports `inference_explain`) so each explainer stays one table
a reviewer reads top to bottom; the table is built in three parts (latency, memory and batch, scale), kept in the
order the page shows them.
"""

from __future__ import annotations

from engine.catalog.hardware import Gpu
from engine.explain.entry import Entry
from engine.explain.entry import entry as _entry
from engine.request.spec import InferenceSpec
from engine.search.serving import InferenceResult, effective_mbu
from engine.workload.model import Workload

__all__ = ["inference_explain"]

_ROOFLINE = (
    "Serving roofline: decode bounded by HBM bandwidth (model bandwidth utilisation as defined in Databricks, "
    "'LLM Inference Performance Engineering: Best Practices', 2023-10-12), prefill by compute, concurrency by "
    "Little's law"
)
_FITTED_ON = (
    "constants fitted on NVIDIA TensorRT-LLM performance-overview tables (v0.9-v1.0), MLPerf Inference v4.1 "
    "and v5.0 results and vLLM v0.6 benchmarks"
)


def inference_explain(ir: InferenceResult, work: Workload, spec: InferenceSpec, gpu: Gpu) -> dict[str, Entry]:
    """Every serving headline figure, in the order the page shows them (one table read top to bottom): the
    latencies, then the KV cache and batch, then the replicas and throughput."""
    assert ir.shape is not None and ir.point is not None and ir.shape.capacity is not None
    return {**_latency_entries(ir, work, spec), **_memory_entries(ir, work, spec), **_scale_entries(ir, spec)}


def _latency_entries(ir: InferenceResult, work: Workload, spec: InferenceSpec) -> dict[str, Entry]:
    """TTFT and TPOT at the operating batch, each with the roofline terms and fitted constants it is made of."""
    assert ir.shape is not None and ir.point is not None
    sh, pt, m = ir.shape, ir.point, ir.shape.model
    c = m.c
    return {
        "inference.ttft_ms": _entry(
            "prefill(prompt) + half a scheduling round + prefill queueing (M/D/1: busy x prefill / (2 (1 - busy))); "
            "prefill = max((2 x compute_params_active x prompt + 2 x layers x prompt x positions attended x "
            "(query-key + value widths)) / (tp x peak x prefill_mfu x n / (n + prefill_half_mfu_tokens)), weights / "
            "tp / (HBM x decode_mbu)) + 2 x layers TP all-reduces, n = min(prompt, prefill_chunk_tokens); positions "
            "attended = prompt, or with sliding windows (full layers x prompt + windowed layers x (2 x window - "
            "window^2 / prompt)) / layers",
            {
                "prefill_alone_ms": m.prefill_s(spec.prompt_tokens) * 1000.0,
                "prefill_busy_fraction": pt.prefill_busy_fraction,
                "compute_params_active": work.compute_params_active,
                "prompt_tokens": spec.prompt_tokens,
                "positions attended": work.attention_span(spec.prompt_tokens),
                "tp": sh.tp,
                "peak_tflops_per_gpu": ir.peak_tflops,
                "compute_precision": ir.compute_precision,
                "prefill_mfu": c.prefill_mfu,
                "prefill_half_mfu_tokens": c.half_mfu_tokens,
            },
            f"{_ROOFLINE} items 5-6; {_FITTED_ON}",
        ),
        "inference.tpot_ms": _entry(
            "decode step x (1 + batch x batched prefill time / (output_tokens x decode step)) at the operating "
            "batch; decode step = max((weights_read / tp (+ the routers and latent down-projections every GPU keeps "
            "whole) + batch x cached tokens at (prompt + output/2) summed over "
            "the layers of the fullest pipeline stage x kv_bytes_per_token / (layers x min(tp, kv_heads), or layers "
            "alone with latent attention)) / (HBM x decode_mbu), batch x decode FLOPs / (tp x pp x "
            "peak x GEMM efficiency)) + 2 x layers x (inference_allreduce_latency_us + all-reduce bytes / NVLink) "
            "+ decode_step_overhead_ms",
            {
                "batch": pt.batch,
                "decode_step_ms": pt.tpot_decode_s * 1000.0,
                "tp": sh.tp,
                "pp": sh.pp,
                "hbm_tbps": ir.hbm_tbps,
                "decode_mbu": c.decode_mbu,
                "effective_mbu": _effective(ir),
                "weight_bytes_per_param": ir.weight_bytes_per_param,
                "kv_bytes_per_token": ir.kv_bytes_per_token,
                "floor_ms_weights_over_tp_x_hbm": m.bandwidth_floor_tpot_s() * 1000.0,
            },
            f"{_ROOFLINE} items 3-4; {_FITTED_ON}",
        ),
    }


def _kv_entry(ir: InferenceResult, work: Workload, spec: InferenceSpec) -> Entry:
    """KV bytes per token of context, what one sequence keeps on a GPU of the fullest pipeline stage, and (with
    sliding windows) how many tokens its layers actually keep."""
    s = work.shape
    context = spec.prompt_tokens + spec.output_tokens
    inputs: dict[str, object] = {"layers": s.layers, "kv_cache_bytes_per_element": ir.kv_bytes_per_element}
    if s.mla is not None:
        inputs.update({"latent rank": s.mla.kv_lora_rank, "rotary key width": s.mla.qk_rope_head_dim})
        formula = "layers x (latent rank + rotary key width) x kv_cache_bytes_per_element (latent attention)"
    else:
        inputs.update({"kv_heads": s.kv_heads, "head_dim": work.head_dim})
        formula = "2 x layers x kv_heads x head_dim x kv_cache_bytes_per_element"
    window = s.sliding_window
    if window is not None and work.windowed_layers:
        inputs.update(
            {
                "windowed_layers": work.windowed_layers,
                "window_tokens": window.tokens,
                "cached_tokens_per_sequence_average_layer": work.cached_tokens(context),
            }
        )
        formula += (
            "; a windowed layer holds at most its window of a sequence: cached tokens of a layer = context for a "
            "full-attention layer, min(context, window) for a windowed one"
        )
    if ir.shape is not None:
        m = ir.shape.model
        stage = m.binding_stage
        inputs.update(
            {
                "tokens_per_sequence": context,
                "pp": m.pp,
                "pipeline stage that fits the fewest sequences (from 1)": stage.index + 1,
                "its layers": stage.layers,
                **({"its full-attention layers": stage.full} if work.windowed_layers else {}),
                "ways tensor parallelism splits the cache": m.kv_tp_split,
                "KV per sequence per GPU there (MiB)": m.kv_bytes_per_sequence_per_gpu() / 2**20,
            }
        )
        formula += (
            "; per GPU of a pipeline stage, one sequence keeps this / layers x the cached tokens summed over the "
            "stage's layers (floor(layers / pp) each, the remainder one more to each of the stages just before the "
            "last, as vLLM "
            "splits them), / min(tp, kv_heads) (1 with latent attention: every tensor-parallel GPU keeps the whole "
            "latent); the stage whose budget fits the fewest sequences is shown"
        )
    return _entry(formula, inputs, _ROOFLINE + " item 1")


def _memory_entries(ir: InferenceResult, work: Workload, spec: InferenceSpec) -> dict[str, Entry]:
    """The KV cache per token and per replica, and the batch it allows within both latency targets."""
    assert ir.shape is not None and ir.point is not None
    sh, pt = ir.shape, ir.point
    mem = ir.memory_breakdown_gib()
    return {
        "inference.kv_bytes_per_token": _kv_entry(ir, work, spec),
        "inference.kv_cache_gib_per_replica": _entry(
            "(HBM x inference_memory_utilization - weights per GPU of the pipeline stage that fits the fewest "
            "sequences (its layers, and the embedding or LM head at the ends, / tp) - activation workspace) x tp x "
            "pp; the weights shown beside are the heaviest stage's",
            {
                **{f"{k}_gib_per_gpu": v for k, v in mem.items()},
                "weights of the stage that fits the fewest sequences (GiB per GPU)": (
                    sh.model.stage_weight_bytes[sh.model.binding_stage.index] / 2**30
                ),
                "gpus_per_replica": sh.gpus,
            },
            _ROOFLINE + " items 1-2",
        ),
        "inference.memory_allocated_gib_per_gpu": _entry(
            "weights + activation workspace + KV cache (as allocated: the whole budget, filled or not) + reserve, "
            "per GPU of the pipeline stage that fits the fewest sequences; the reserve is HBM x (1 - "
            "inference_memory_utilization), held back from the serving engine",
            {**{f"{k}_gib_per_gpu": v for k, v in mem.items()}, "hbm_gib": sh.model.gpu.hbm_gib},
            _ROOFLINE + " items 1-2",
        ),
        "inference.kv_cache_in_use_gib_per_gpu": _entry(
            "concurrency per replica x the KV cache one sequence keeps at its whole prompt + output on a GPU of the "
            "pipeline stage that fits the fewest sequences: the part of that GPU's allocated KV cache the planned "
            "load fills",
            {
                "concurrency_per_replica": pt.batch,
                "KV per sequence per GPU there (MiB)": sh.model.kv_bytes_per_sequence_per_gpu() / 2**20,
                "kv_cache_gib_per_gpu": mem["kv_cache"],
            },
            _ROOFLINE + " items 1 and 6 (Little's law)",
        ),
        "inference.batch": _entry(
            "concurrency by Little's law at the load each replica carries: batch = (requests_per_s / replicas) x "
            "output_tokens x TPOT(batch), solved by bisection; capacity batch = the largest batch <= min("
            "max_batch_per_replica, the fewest whole sequences (prompt + output) any pipeline stage's KV budget per "
            "GPU holds (see the KV bytes per token)) meeting both targets",
            {
                "capacity_batch": sh.capacity_batch,
                "max_sequences_by_memory": sh.max_sequences_by_memory,
                "limit": sh.limit,
                "ttft_target_ms": spec.ttft_ms,
                "tpot_target_ms": spec.tpot_ms,
            },
            _ROOFLINE + " items 1 and 6",
        ),
    }


def _scale_entries(ir: InferenceResult, spec: InferenceSpec) -> dict[str, Entry]:
    """How many replicas and GPUs the request rate needs, and the throughput they deliver."""
    assert ir.shape is not None and ir.shape.capacity is not None and ir.point is not None
    sh, cap, pt = ir.shape, ir.shape.capacity, ir.point
    return {
        "inference.replicas": _entry(
            "ceil(requests_per_s / (serving_utilization_target x capacity requests/s per replica)); capacity = "
            "tokens/s at the capacity batch / output_tokens",
            {
                "requests_per_s": spec.requests_per_s,
                "serving_utilization_target": ir.utilization_target,
                "capacity_requests_per_s_per_replica": cap.requests_per_s,
            },
            _ROOFLINE + " item 6 (Little's law)",
        ),
        "inference.batch_fleet": _entry(
            "replicas x the batch in flight per replica (each replica carries an equal share of the load); the "
            "fleet's concurrency = replicas x concurrency per replica = requests_per_s x output_tokens x TPOT "
            "(Little's law over the fleet, for the time a sequence spends in the decode batch)",
            {
                "replicas": ir.replicas,
                "batch_per_replica": ir.batch,
                "concurrency_per_replica": pt.batch,
                "requests_per_s": spec.requests_per_s,
                "output_tokens": spec.output_tokens,
                "tpot_ms": pt.tpot_s * 1000.0,
            },
            _ROOFLINE + " item 6 (Little's law)",
        ),
        "inference.gpus": _entry(
            "replicas x tp x pp; the replica shape needing the fewest GPUs in total wins (ties: no pipeline, then the "
            "smaller replica); pipeline stages only when no tensor-parallel replica inside the NVLink domain fits",
            {"replicas": ir.replicas, "tp": sh.tp, "pp": sh.pp, "spans_systems": ir.spans_systems},
            "engine rule (issue 4)",
        ),
        "inference.tokens_per_s": _entry(
            "replicas x replica capacity; replica capacity = 1 / (decode step / batch + batched prefill / "
            "output_tokens) output tokens/s at the capacity batch",
            {
                "replicas": ir.replicas,
                "capacity_tokens_per_s_per_replica": cap.tokens_per_s,
                "capacity_batch": sh.capacity_batch,
            },
            "continuous batching as in Yu et al., 'Orca' (OSDI 2022) and Kwon et al., 'Efficient Memory Management "
            "for Large Language Model Serving with PagedAttention' (SOSP 2023)",
        ),
        "inference.tokens_per_s_per_gpu": _entry(
            "replica capacity / gpus_per_replica (within both latency targets, independent of the requested rate)",
            {"capacity_tokens_per_s_per_replica": cap.tokens_per_s, "gpus_per_replica": sh.gpus},
            "definition (issue 4)",
        ),
    }


def _effective(ir: InferenceResult) -> float:
    assert ir.shape is not None and ir.point is not None
    return effective_mbu(ir.shape.model, ir.point)
