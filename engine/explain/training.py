"""Explain entries of a training plan's headline figures: steady-state speed (step time, tokens/s, MFU, FLOPs),
the expected whole run with its range and drivers, the GPU count, the batch and the memory per GPU.

Split from `engine/explain/sizing.py` (which still exports `training_explain`) so each explainer stays one table
a reviewer reads top to bottom.
"""

from __future__ import annotations

from engine.catalog.hardware import Gpu
from engine.explain.entry import Entry
from engine.explain.entry import entry as _entry
from engine.request.spec import TrainingSpec
from engine.search.training import SECONDS_PER_DAY, TrainingResult
from engine.workload.model import Workload

__all__ = ["training_explain"]

_MODEL_SOURCE = (
    "Per-operation roofline of a transformer step after Narayanan et al., 'Efficient Large-Scale Language Model "
    "Training on GPU Clusters Using Megatron-LM' (SC21, 2021) and Korthikanti et al., 'Reducing Activation "
    "Recomputation in Large Transformer Models' (arXiv 2205.05198, 2022); GEMM and communication efficiencies "
    "fitted on published training throughput tables (Narayanan et al. 2021 Table 1, Korthikanti et al. 2022 "
    "Table 5, MosaicML llm-foundry, NVIDIA NeMo 24.07 and Megatron-Bridge 25.11 performance summaries, the "
    "production layouts of Meta's 'The Llama 3 Herd of Models' (arXiv 2407.21783, 2024) Table 4, TinyLlama), each "
    "checked leave-one-source-out; fused attention by head size from Shah et al., 'FlashAttention-3' (arXiv "
    "2407.08608, 2024) Figure 5"
)
_FLOPS_SOURCE = (
    "Kaplan et al., 'Scaling Laws for Neural Language Models' (arXiv 2001.08361, 2020): 6 FLOPs per parameter per "
    "token; attention term from Narayanan et al. (SC21, 2021); checked against GPT-3's published 3.14e23 training "
    "FLOPs (Brown et al., arXiv 2005.14165, 2020)"
)
_STEADY = "steady state: a tuned stack between failures"


def training_explain(tr: TrainingResult, work: Workload, spec: TrainingSpec, gpu: Gpu) -> dict[str, Entry]:
    """Every training headline figure: how fast a step runs (steady state), then what that means for the whole
    run's time, GPU-hours and memory."""
    return {
        **_training_speed(tr, work, spec, gpu),
        **_whole_run_entries(tr, spec),
        **_training_time_and_memory(tr, spec, gpu),
        **_activation_offload_entry(tr),
        **_context_parallel_entry(tr, work),
    }


_CP_SOURCE = (
    "Megatron-Core context parallelism (cp_comm_type p2p, all_gather, a2a, a2a+p2p), NVIDIA Megatron-Bridge "
    "performance guide, 'Context-parallel (CP) communication' (2025); all-gather: Meta, 'The Llama 3 Herd of "
    "Models' (arXiv 2407.21783, 2024) section 3.3.2; all-to-all: Jacobs et al., 'DeepSpeed Ulysses' (arXiv "
    "2309.14509, 2023); ring: Liu et al., 'Ring Attention with Blockwise Transformers' (arXiv 2310.01889, 2023)"
)
_CP_FORMULAS = {
    "ring": "per layer, cp - 1 ring steps in each pass: exposed = max(0, K and V of one chunk / link - attention "
    "time / cp) per step, twice the bytes in the backward",
    "all_gather": "per layer, (cp - 1) x (K and V of one chunk) / link, all exposed, in the forward; twice that in "
    "the backward (K and V gathered again, their gradients reduce-scattered)",
    "all_to_all": "per layer, two all-to-alls in each pass (Q, K and V before attention, the output after), each "
    "(cp - 1) / cp of the tensors / link, all exposed",
    "hierarchical": "per layer, an all-to-all inside a group of GPUs in one NVLink domain (two each way, each "
    "(group - 1) / group of Q, K, V or the output / NVLink, exposed) plus a ring over the groups on chunks as many "
    "times longer (exposed = max(0, K and V of one chunk / link - attention time / ring size) per step)",
}


def _context_parallel_entry(tr: TrainingResult, work: Workload) -> dict[str, Entry]:
    """How the context-parallel exchange was costed, when the plan splits sequences."""
    lay, p = tr.layout, tr.plan
    if lay is None or p is None or lay.cp <= 1 or lay.cp_comm is None:
        return {}
    s = work.shape
    windowed = lay.cp_comm_windowed if work.windowed_layers else None
    formula = _CP_FORMULAS[lay.cp_comm]
    inputs: dict[str, object] = {"method": lay.cp_comm.replace("_", "-")}
    if windowed is not None:
        share = work.windowed_layers / s.layers
        if windowed == lay.cp_comm:
            formula += f"; every layer, windowed or not, uses the {windowed.replace('_', '-')}"
        elif share < 1.0:
            formula = "full-attention layers: " + formula
            formula += (
                f"; sliding-window layers ({share * 100:.0f} % of the layers) use the {windowed.replace('_', '-')} "
                "instead, "
                "the faster of the two exchanges Transformer Engine runs windowed attention with (or the one "
                "pinned): " + _CP_FORMULAS[windowed] + "; weighted by their share of the layers"
            )
            inputs = {"full-attention layers' method": lay.cp_comm.replace("_", "-"),
                      "sliding-window layers' method": windowed.replace("_", "-")}  # fmt: skip
        else:
            formula += (
                "; every layer attends through a sliding window, and Transformer Engine carries windowed attention "
                "only by the all-gather or the all-to-all"
            )
    return {
        "training.step_breakdown_s.context_parallel_comm": _entry(
            formula + "; times the layers of the fullest stage and the micro-batches per step (a full recompute "
            "replays the forward's); the search takes the fastest method the layout allows unless one is pinned",
            {
                **inputs,
                "cp (GPUs sharing each sequence)": lay.cp,
                "tp": lay.tp,
                "tokens per GPU per sequence": s.seq_len // lay.cp,
                "KV heads (model)": s.kv_heads,
                "exposed exchange per step (s)": p.cp_comm_time_s,
                "share of the step": p.cp_comm_time_s / p.step_time_s if p.step_time_s > 0 else 0.0,
            },
            _CP_SOURCE,
        )
    }


_OFFLOAD_SOURCE = (
    "Megatron-Core layer-level activation offload (TransformerConfig cpu_offloading, cpu_offloading_num_layers; "
    "Transformer Engine's double-buffered copies, 2024-2025); host links: NVIDIA GB200 NVL72 datasheet (2024), "
    "NVLink-C2C 900 GB/s per Grace CPU serving two GPUs, and PCI-SIG PCIe 5.0 (x16, about 50 GB/s achieved)"
)


def _activation_offload_entry(tr: TrainingResult) -> dict[str, Entry]:
    """How the host-link copies of offloaded activations were costed, when the plan offloads any."""
    p, options = tr.plan, tr.memory_options
    if p is None or options is None or not p.activation_offload_layers:
        return {}
    per_layer_gib = p.activation_offload_host_gib / p.activation_offload_layers
    return {
        "training.step_breakdown_s.activation_offload": _entry(
            "per micro-batch and direction (to the host in the forward pass, back in the backward): copy = "
            "offloaded layers x activation bytes per layer / host-link bandwidth; exposed = max((1 - overlap) x "
            "copy, copy - compute of the other layers); times micro-batches per step",
            {
                "layers whose activations are in host memory": p.activation_offload_layers,
                "activations per layer and micro-batch (GiB)": per_layer_gib,
                "host memory they fill per GPU (GiB)": p.activation_offload_host_gib,
                "host memory they may fill per GPU, with any offloaded optimizer state (GiB)": (
                    options.host_offload_bytes / 2**30
                ),
                "host link per GPU and direction (GB/s)": options.host_link_bytes_s / 1e9,
                "share of the copies the compute can hide at best": options.activation_offload_overlap,
                "micro-batches per step": p.micro_batches,
                "exposed copies per step (s)": p.activation_offload_time_s,
            },
            _OFFLOAD_SOURCE,
        )
    }


def _flops_entry(tr: TrainingResult, work: Workload, spec: TrainingSpec) -> Entry:
    """Total FLOPs: 6N plus attention, over the positions an average layer attends to."""
    s = work.shape
    inputs: dict[str, object] = {
        "tokens": spec.tokens,
        "compute parameters (active, without the embedding)": work.compute_params_active,
        "layers": s.layers,
        "seq_len (tokens)": s.seq_len,
        "query-key width": work.qk_width,
        "value width": work.v_width,
        "FLOPs per token": tr.flops_per_token,
    }
    formula = (
        "tokens x (6 x compute_params_active + 6 x layers x seq_len x (query-key width + value width)); both "
        "widths are the heads times the head size (hidden each, unless the model decouples the head size or "
        "uses latent attention)"
    )
    window = s.sliding_window
    if window is not None and work.windowed_layers:
        inputs["windowed layers"] = work.windowed_layers
        inputs["window (tokens)"] = window.tokens
        inputs["positions an average layer attends to"] = work.attention_span(s.seq_len)
        formula = formula.replace("seq_len x", "positions attended x") + (
            "; a windowed layer attends to at most its window, so positions attended = (full layers x seq_len + "
            "windowed layers x (2 x window - window^2 / seq_len)) / layers, counted like a full layer's square"
        )
    return _entry(formula, inputs, _FLOPS_SOURCE)


def _training_speed(tr: TrainingResult, work: Workload, spec: TrainingSpec, gpu: Gpu) -> dict[str, Entry]:
    assert tr.layout is not None and tr.plan is not None
    lay, p = tr.layout, tr.plan
    head_size = round(work.qk_width / work.shape.heads)
    return {
        "training.total_flops": _flops_entry(tr, work, spec),
        "training.step_time_s": _entry(
            f"({_STEADY}) micro_batches x (stage_time + p2p) + (pp - 1) / interleave x body_stage_time (1F1B "
            "bubble) + exposed data-parallel collectives (on NVLink when the job fits a system; across systems "
            "a ring crosses on the NIC of every rank a system holds, or at NVLink's pace where that is slower; "
            "each collective, a bucket at a time (at least 40M parameters, 1M more per data-parallel rank, one or "
            "more per virtual stage; a layer with ZeRO-3), also waits a start-up latency plus one hop latency per "
            "ring step, longer for a step across systems than on NVLink, as NCCL's tuning model has it; the "
            "gradient reduction hides under the backward passes still to come and the distributed optimizer's "
            "weight gather under the next step's first forward passes, the last bucket of each exposed) + "
            "optimizer step; stage_time = "
            "layers/pp x per-layer roofline (GEMMs at gemm_efficiency x peak + kernel overhead, fused attention "
            "at its measured share of a GEMM's speed, less with heads narrower than 128 (a 64-wide head at the GPU "
            "generation's measured share of a 128-wide one's speed, interpolated between 64 and 128), "
            "HBM-bound element-wise ops, TP collectives on NVLink, MoE expert all-to-alls (4 per layer, each "
            "tokens x active x hidden x 2 B x (ep - 1)/ep, on NVLink when ep x tp fits the NVLink domain, else "
            "the scale-out NICs, where a per-node dispatch sends a token once to each node its experts sit on and "
            "forwards it over NVLink when that is faster; the share hidden behind compute still costs the SMs its "
            "kernels hold; routed tokens permuted into the experts' buffers and back through HBM; with the "
            "all-to-alls overlapped, a micro-batch's forward runs layer by layer beside the previous one's backward, "
            "each all-to-all under the other's attention or expert computation, and the micro-batches the schedule "
            "cannot pair, at the pipeline's ends, run alone), "
            "recompute) + LM head on the last stage (its three GEMM passes, and three passes of the loss over the "
            "logits at the bytes it keeps per logit) + (activations in host memory, pp 1) the host-link copies the "
            "other layers' compute cannot hide: max((1 - overlap) x copy, copy - compute) each way, copy = "
            "offloaded layers x activation bytes per layer / host-link bandwidth",
            {
                "micro-batches per step": lay.micro_batches,
                **({"attention head size (narrower than 128: slower)": head_size} if head_size < 128 else {}),
                "stage time (s)": p.stage_time_s,
                "pipeline time (s)": p.pipeline_time_s,
                "pipeline bubble (s)": p.bubble_time_s,
                "tensor-parallel communication (s)": p.tp_comm_time_s,
                "expert all-to-all (s)": p.ep_comm_time_s,
                **(
                    {
                        "expert all-to-alls overlapped with another micro-batch": "yes" if lay.ep_overlap else "no",
                        **({"passes the overlap cannot pair (s)": p.ep_unpaired_time_s} if lay.ep_overlap else {}),
                    }
                    if lay.ep_overlap is not None and lay.ep > 1
                    else {}
                ),
                "pipeline point-to-point (s)": p.p2p_time_s,
                "exposed data-parallel communication (s)": p.dp_exposed_time_s,
                **({"data-parallel buckets (collectives a step)": p.dp_buckets} if p.dp > 1 and p.dp_buckets else {}),
                "optimizer step (s)": p.optimizer_time_s,
                "host-link copies of offloaded activations (s)": p.activation_offload_time_s,
                "interleave": lay.interleave,
                "ZeRO stage": lay.zero_stage,
            },
            _MODEL_SOURCE,
        ),
        "training.mfu": _entry(
            f"({_STEADY}) tokens_per_s x flops_per_token / (gpus x peak); HFU also counts recomputed forward FLOPs",
            {
                "tokens per second": tr.tokens_per_s,
                "FLOPs per token": tr.flops_per_token,
                "hardware FLOPs per token (with recompute)": tr.hardware_flops_per_token,
                "GPUs": tr.gpus,
                "peak (TFLOP/s per GPU)": tr.peak_tflops,
                "precision": spec.precision,
                "MFU": tr.mfu,
                "HFU": tr.hfu,
                "GPU": gpu.name,
            },
            "Chowdhery et al., 'PaLM' (arXiv 2204.02311, 2022) Appendix B: model FLOPs utilization (MFU) and "
            "hardware FLOPs utilization (HFU); an output of the step-time model, not an input",
        ),
        "training.model_tflops_per_gpu": _entry(
            "mfu x peak_tflops_per_gpu", {"peak (TFLOP/s per GPU)": tr.peak_tflops, "MFU": tr.mfu}, gpu.source
        ),
        "training.tokens_per_s": _entry(
            f"({_STEADY}) tokens_per_step / step_time_s",
            {"tokens per step": p.tokens_per_step, "step time (s)": tr.step_time_s},
            _MODEL_SOURCE,
        ),
    }


def _factor_inputs(tr: TrainingResult) -> dict[str, object]:
    """The whole run's factors as a user reads them: each efficiency, its plausible range and what it costs."""
    assert tr.whole_run is not None
    return {
        f"{f.name} (share of time kept)": f"{f.efficiency:.3f}, plausible {f.low:.3f} - {f.high:.3f}; stretches "
        f"the days x{f.days_multiplier:.3f}"
        for f in tr.whole_run.factors
    }


def _whole_run_entries(tr: TrainingResult, spec: TrainingSpec) -> dict[str, Entry]:
    run, g = tr.whole_run, tr.goodput
    assert run is not None and g is not None
    steady = {"steady-state days": tr.days_ideal}
    shares = "; ".join(f"{name} {run.share_of_spread(name):.0%}" for name in run.drivers) or "none"
    days_range = f"p10 {run.days_p10:.1f} days, p50 {run.days_p50:.1f} days, p90 {run.days_p90:.1f} days"
    factor_sources = " | ".join(f"{f.name}: {f.source}" for f in run.factors)
    hours = 24.0 * tr.gpus
    return {
        "training.days_ideal": _entry(
            f"({_STEADY}) tokens / tokens_per_s / 86,400 s per day: no failures, restarts or stalls",
            {"tokens": spec.tokens, "tokens per second": tr.tokens_per_s, "seconds per day": SECONDS_PER_DAY},
            _MODEL_SOURCE,
        ),
        "training.days_steady_state": _entry(
            f"({_STEADY}) tokens / tokens_per_s / 86,400 s per day (the same figure as days_ideal)",
            {"tokens": spec.tokens, "tokens per second": tr.tokens_per_s, "seconds per day": SECONDS_PER_DAY},
            _MODEL_SOURCE,
        ),
        "training.goodput": _entry(
            "share of time kept through failures and checkpoints = tau / (tau + delta) x (1 - ((tau + delta) / 2 + "
            "restart) / job_mtbf); job_mtbf = system MTBF / systems; delta = checkpoint stall = checkpoint bytes / "
            "(stall bandwidth per GPU x GPUs); tau = Daly's optimum checkpoint interval; restart = time lost per "
            "failure in the recovery mode used, base + growth per doubling of systems (elastic: most failures cost "
            "only a short stall while a replica rejoins; the share elastic_whole_job_failure_fraction restarts from "
            "memory)",
            {
                "checkpointing": g.checkpointing or spec.checkpointing,
                "why this recovery mode": g.checkpointing_reason,
                "systems": g.systems,
                "system MTBF (hours)": g.node_mtbf_hours,
                "job MTBF (minutes)": g.job_mtbf_s / 60.0,
                "checkpoint size (GB)": g.checkpoint_bytes / 1e9,
                "checkpoint stall (s)": g.checkpoint_write_s,
                "checkpoint interval (minutes)": g.checkpoint_interval_s / 60.0,
                "restart (minutes)": g.restart_s / 60.0,
                "share of time kept": g.fraction,
            },
            "Daly, 'A higher order estimate of the optimum checkpoint interval for restart dumps' (FGCS 22, 2006); "
            "failure rate: " + (g.mtbf_source or "the system's catalog MTBF") + "; restart growth: Jiang et al., "
            "'MegaScale' (NSDI 2024, arXiv 2402.15627); in-memory recovery: Wang et al., 'Gemini: Fast Failure "
            "Recovery in Distributed Training with In-Memory Checkpoints' (SOSP 2023) and Gemini Team, 'Gemini: A "
            "Family of Highly Capable Multimodal Models' (arXiv 2312.11805, Dec 2023); elastic recovery: PyTorch "
            "blog, 'Fault Tolerant Llama' (torchft, June 2025); failures a replica cannot absorb: Meta, 'The Llama 3 "
            "Herd of Models' (arXiv 2407.21783, July 2024) Table 5",
        ),
        "training.days": _entry(
            "expected whole run (p50) = steady-state days / (failures and checkpoints x production vs benchmark x "
            "evaluations and data stalls x stragglers x batch ramp-up), each the share of wall-clock time it keeps",
            {
                **steady,
                **_factor_inputs(tr),
                "whole-run efficiency": run.efficiency,
                "expected whole run (p50 days)": run.days_p50,
            },
            factor_sources,
        ),
        "training.days_range": _entry(
            "p10 / p90 = p50 x exp(-/+ 1.2816 x sigma), sigma = sqrt(sum over factors of ((ln high - ln low) / "
            "(2 x 1.2816))^2): each factor's log is treated as normal with its plausible range as p10-p90; the "
            "drivers are the factors with the largest share of sigma^2",
            {"range": days_range, "drivers (share of the spread)": shares, **_factor_inputs(tr)},
            "Each factor's plausible range is its named assumption's low/high (production vs benchmark: the value "
            "each published whole run implies alone; failures: the system MTBF halved and doubled). " + factor_sources,
        ),
        "training.gpu_hours": _entry(
            "GPUs x expected whole-run days (p50) x 24; the p10-p90 range scales with the days' range",
            {
                "GPUs": tr.gpus,
                "expected whole run (p50 days)": run.days_p50,
                "hours per day": 24,
                "GPU-hours p10 / p90": f"{run.days_p10 * hours:,.0f} / {run.days_p90 * hours:,.0f}",
            },
            "Follows from the expected whole run (time to train)",
        ),
    }


def _training_time_and_memory(tr: TrainingResult, spec: TrainingSpec, gpu: Gpu) -> dict[str, Entry]:
    assert tr.layout is not None and tr.memory is not None
    lay, mem = tr.layout, tr.memory
    search = tr.search
    out: dict[str, Entry] = {
        "training.parallelism": _entry(
            "exhaustive search over tp (inside the NVLink domain, dividing heads and kv_heads), cp (each layout with "
            "the fastest context-parallel exchange it can run: ring, all-gather, all-to-all or hierarchical), pp, "
            "micro_batch, "
            "interleave, recompute or activations kept in host memory (pp 1 only), ZeRO stage, ep (MoE only: "
            "divisors of the expert count, dividing dp, or with the experts folded over the tensor-parallel ranks "
            "the tp x cp x dp ranks of a stage) and dp; "
            "infeasible candidates rejected by reason; the fastest feasible plan wins (deadline mode: the fewest "
            "GPUs first)",
            {
                "tp": lay.tp,
                "cp": lay.cp,
                **({"context-parallel exchange": lay.cp_comm.replace("_", "-")} if lay.cp_comm else {}),
                **(
                    {"context-parallel exchange of windowed layers": lay.cp_comm_windowed.replace("_", "-")}
                    if lay.cp_comm_windowed and lay.cp_comm_windowed != lay.cp_comm
                    else {}
                ),
                "pp": lay.pp,
                "dp": lay.dp,
                "ep": lay.ep,
                **({"expert tensor parallel (1: experts folded over tp)": lay.etp} if lay.etp is not None else {}),
                **(
                    {"expert all-to-alls overlapped with another micro-batch": "yes" if lay.ep_overlap else "no"}
                    if lay.ep_overlap is not None and lay.ep > 1
                    else {}
                ),
                "micro-batch (sequences)": lay.micro_batch,
                "micro-batches per step": lay.micro_batches,
                "interleave": lay.interleave,
                "ZeRO stage": lay.zero_stage,
                "recompute": lay.recompute,
                "optimizer offload": lay.offload,
                "layers whose activations are in host memory": lay.activation_offload_layers,
                "layouts evaluated": search.candidates_evaluated if search else 0,
                "layouts that fit": search.feasible if search else 0,
            },
            "The layout space of Narayanan et al., 'Efficient Large-Scale Language Model Training on GPU Clusters "
            "Using Megatron-LM' (SC21, 2021)",
        ),
        "training.memory_per_gpu_gib": _entry(
            "params_per_gpu x (2 weights + 2 grads + 12 optimizer, each / dp when its ZeRO stage shards it; MoE "
            "expert params / (ep x expert tensor parallel) per GPU, sharded over the dp x cp x tp / (ep x expert "
            "tensor parallel) ranks holding the same experts) + "
            "activations_per_layer x layers / pp x min(pp, micro_batches) x (1 + (pp - 1) / (pp x interleave)) "
            "(Korthikanti's terms, with dropout masks only for a model trained with dropout) + working set (one "
            "layer rebuilt under full recompute, the K and V an all-gather exchange holds) + the last stage's "
            "logits (the loss's bytes per logit, 2 with a fused 16-bit cross entropy, x tokens x vocabulary / tp) "
            "+ the framework reserve (a fixed amount plus a fragmentation share of HBM); with activations in host "
            "memory (pp 1), the layers on the GPU "
            "are layers - offloaded + 1 (one offloaded layer is in transit at a time); offloaded optimizer state "
            "(12 B + a 2 B gradient per parameter updated) and activations beyond the share of the system's host "
            "memory per GPU they may fill stay in HBM (host overflow)",
            {
                **{f"{part} (GiB)": gib for part, gib in mem.as_dict().items()},
                "dp": lay.dp,
                "tp": lay.tp,
                "pp": lay.pp,
                "ep": lay.ep,
                **({"expert tensor parallel (1: experts folded over tp)": lay.etp} if lay.etp is not None else {}),
                "cp": lay.cp,
                "ZeRO stage": lay.zero_stage,
                "recompute": lay.recompute,
                "layers whose activations are in host memory": lay.activation_offload_layers,
                "HBM (GiB)": gpu.hbm_gib,
            },
            "Rajbhandari et al., 'ZeRO' (SC20, 2020): 16 bytes per parameter with Adam in mixed precision; "
            "Korthikanti et al. (arXiv 2205.05198, 2022): activation memory per layer",
        ),
    }
    out["training.global_batch_sequences"] = _entry(
        "global_batch_tokens / seq_len sequences per optimizer step, split as dp x micro_batch x micro-batches; "
        "trained exactly unless the plan's notes say otherwise",
        {
            "global batch (tokens)": spec.global_batch_tokens,
            "sequences per step": lay.dp * lay.micro_batch * lay.micro_batches,
            "dp": lay.dp,
            "micro-batch (sequences)": lay.micro_batch,
            "micro-batches per step": lay.micro_batches,
        },
        tr.batch_source,
    )
    if spec.deadline_days is not None:
        at_p90 = spec.deadline_percentile == "p90"
        met = "the p90 whole run (nine runs in ten finish sooner)" if at_p90 else "the expected whole run (p50 days)"
        out["training.gpus"] = _entry(
            f"smallest whole-system GPU count whose fastest plan fits memory and finishes {met} within the deadline, "
            "found by bisection per layout",
            {
                "deadline (days)": spec.deadline_days,
                "deadline met at": "p90" if at_p90 else "p50",
                "expected whole run (p50 days)": tr.days,
                **({"p90 whole run (days)": tr.whole_run.days_p90} if at_p90 and tr.whole_run is not None else {}),
                "tp": lay.tp,
                "pp": lay.pp,
                "dp": lay.dp,
            },
            "The layout space of Narayanan et al. (SC21, 2021); the whole run as in the time to train",
        )
    else:
        out["training.gpus"] = _entry("the GPU count given in the request", {"GPUs": tr.gpus}, "the request")
    return out
