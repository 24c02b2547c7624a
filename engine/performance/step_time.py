"""Training step time and memory per GPU: a per-operation roofline over whole numpy arrays of parallel layouts.

Why a roofline and not one MFU constant: the speed of a layout depends on its shape. Small GEMMs (narrow models,
high TP) run further from peak, element-wise ops are bound by HBM, tensor-parallel collectives cost time in
proportion to 1/hidden, the pipeline bubble shrinks with micro-batches and interleaving, and recompute adds work.
A single MFU cannot rank layouts; this model can, with a handful of constants calibrated per GPU generation
(calibration/training.py, docs/accuracy.md).

The model is evaluated in two stages so the search stays fast:

- `layout_costs` computes everything that depends on (tp, pp, micro_batch, interleave, recompute): per
  micro-batch stage time, point-to-point time, parameters and activations per GPU. Done once per system.
- `step_costs` broadcasts those over data parallelism and ZeRO stage: micro-batches per step, bubble, gradient
  and parameter collectives, optimizer step, the memory that shards over DP, and the resulting step time.

All functions are pure and work on numpy arrays (scalars broadcast), so one call evaluates thousands of layouts.
The cost of one GEMM, collective or all-to-all, and the hardware and efficiency figures behind it, are in
`roofline.py`; this module adds them up per layer, stage and step.
Formulas follow Narayanan et al. 2021 (Megatron-LM) and Korthikanti et al. 2022; they are written from the
papers, not from another tool's code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from engine.performance.memory import activation_terms, expert_params_per_gpu, params_per_gpu, state_bytes_ep
from engine.performance.roofline import (
    ELEMENTWISE_BYTES_PER_HIDDEN,
    ELEMENTWISE_KERNELS_PER_LAYER,
    FLASH_BACKWARD_RATIO,
    OPTIMIZER_BYTES_PER_PARAM,
    RECOMPUTE_CODES,
    RECOMPUTE_NAMES,
    SOFTMAX_BYTES_PER_SCORE,
    Efficiency,
    Hardware,
    efficiency_for,
    expert_alltoall_bytes,
    gemm_time,
    hardware_for,
    ring_time,
)
from engine.workload.model import Workload

# The roofline names are re-exported: callers build Hardware and Efficiency from here with the step model.
__all__ = [
    "RECOMPUTE_CODES",
    "RECOMPUTE_NAMES",
    "Efficiency",
    "Hardware",
    "LayoutCosts",
    "StepCosts",
    "efficiency_for",
    "expert_alltoall_bytes",
    "hardware_for",
    "layout_costs",
    "step_costs",
]


@dataclass
class LayoutCosts:
    """Per-layout arrays (one entry per (tp, pp, micro_batch, interleave, recompute, ep) layout)."""

    tp: np.ndarray
    pp: np.ndarray
    micro_batch: np.ndarray
    interleave: np.ndarray
    recompute: np.ndarray
    stage_time_s: np.ndarray  # one micro-batch forward + backward (+ recompute) through the heaviest stage
    body_stage_time_s: np.ndarray  # the same through a stage without embedding / LM head (bubble unit)
    p2p_time_s: np.ndarray  # exposed pipeline send/receive time per micro-batch
    tp_comm_time_s: np.ndarray  # TP collectives inside stage_time_s (for the explain output)
    ep_comm_time_s: np.ndarray  # expert all-to-alls inside stage_time_s (0 for dense models and ep = 1)
    params_per_gpu: np.ndarray  # parameters held by one GPU of the heaviest stage before ZeRO sharding
    expert_params_per_gpu: np.ndarray  # the expert share of params_per_gpu (after ep), sharded over dp / ep
    layer_params_per_gpu: np.ndarray
    activation_bytes: np.ndarray  # one micro-batch's stored activations for one stage (all its layers)
    activation_extra_bytes: np.ndarray  # working set not multiplied by micro-batches in flight
    dp_bandwidth_bytes_s: float  # per GPU for DP collectives crossing systems
    ep: np.ndarray | None = None  # expert-parallel degree (carved out of dp); None = 1 everywhere


class _LayerForward(NamedTuple):
    """One layer's forward-pass times (seconds per micro-batch) by kind of work, and the attention backward."""

    gemm: np.ndarray
    attention: np.ndarray
    attention_backward: np.ndarray
    elementwise: np.ndarray
    tp_comm: np.ndarray
    ep_comm: np.ndarray


def _layer_forward(
    work: Workload,
    hw: Hardware,
    eff: Efficiency,
    mb: np.ndarray,
    tp: np.ndarray,
    sp: np.ndarray,
    ep: np.ndarray,
) -> _LayerForward:
    """Forward pass of one transformer layer for a micro-batch of `mb` sequences: GEMMs, attention core,
    element-wise work, tensor-parallel collectives and (MoE) expert all-to-alls."""
    s = work.shape
    h, f, seq, heads = float(s.hidden), float(s.ffn_hidden), float(s.seq_len), float(s.heads)
    kv = float(s.kv_heads * work.head_dim)
    active = float(work.active_experts)
    gated = s.ffn_gated
    tokens = mb * seq  # tokens per micro-batch

    # --- GEMMs of one layer's forward pass (Megatron column/row split over tp) ---
    g_qkv = gemm_time(tokens, h, (h + 2.0 * kv) / tp, hw, eff)
    g_out = gemm_time(tokens, h / tp, h, hw, eff)
    g_up = gemm_time(tokens, h, (2.0 if gated else 1.0) * f * active / tp, hw, eff)
    g_down = gemm_time(tokens, f * active / tp, h, hw, eff)
    gemm_f = g_qkv + g_out + g_up + g_down

    # --- attention core (QK^T, softmax, AV) ---
    attn_flops = 4.0 * tokens * seq * h / tp  # model-FLOPs accounting (full square)
    if eff.flash_attention:
        # One fused kernel; the causal mask skips half the square. Scores never reach HBM.
        attn_f = 0.5 * attn_flops / (hw.bf16_peak_flops * eff.gemm * eff.attention_ratio) + eff.kernel_overhead_s
        attn_b = FLASH_BACKWARD_RATIO * attn_f
    else:
        scores = mb * heads / tp * seq * seq
        bmm = np.maximum(
            attn_flops / (hw.bf16_peak_flops * eff.gemm),
            2.0 * (2.0 * scores + 4.0 * tokens * h / tp) / (hw.hbm_bytes_s * eff.hbm),
        )
        softmax = SOFTMAX_BYTES_PER_SCORE * scores / (hw.hbm_bytes_s * eff.hbm)
        attn_f = bmm + softmax + 3.0 * eff.kernel_overhead_s
        attn_b = 2.0 * attn_f

    # --- element-wise (HBM bound): norms and residuals sharded only with sequence parallelism ---
    act_fn_bytes = (6.0 if gated else 4.0) * f * active  # activation function: read input(s), write output
    ew_bytes = tokens * (ELEMENTWISE_BYTES_PER_HIDDEN * h / sp + act_fn_bytes / tp)
    ew_f = ew_bytes / (hw.hbm_bytes_s * eff.hbm) + ELEMENTWISE_KERNELS_PER_LAYER * eff.kernel_overhead_s

    # --- tensor-parallel collectives: 2 all-reduce equivalents forward, 2 backward, on the NVLink domain ---
    tp_bw = np.where(tp <= hw.nvlink_domain, hw.nvlink_bytes_s, hw.scaleout_bytes_s)
    coll = ring_time(2.0 * tokens * h, tp, 2.0, tp_bw, eff.nvlink, eff.collective_latency_s)
    comm_f = 2.0 * coll

    # --- expert all-to-alls (MoE with ep > 1): dispatch + combine forward, their transposes backward. With
    # sequence parallelism each TP rank dispatches only its 1/tp share of the tokens. Not overlapped with compute
    # (Megatron-Core's all-to-all dispatcher runs them on the critical path). ---
    if work.shape.moe is not None:
        ep_inside = ep * tp <= hw.nvlink_domain
        ep_bw = np.where(ep_inside, hw.nvlink_bytes_s, hw.scaleout_bytes_s)
        ep_link_eff = np.where(ep_inside, eff.nvlink, eff.scaleout)
        a2a_bytes = expert_alltoall_bytes(tokens / sp, h, active, ep)
        a2a = np.where(ep > 1, eff.collective_latency_s + a2a_bytes / (ep_bw * ep_link_eff), 0.0)
        ep_f = 2.0 * a2a
    else:
        ep_f = np.zeros_like(tp)

    return _LayerForward(gemm_f, attn_f, attn_b, ew_f, comm_f, ep_f)


def layout_costs(
    work: Workload,
    hw: Hardware,
    eff: Efficiency,
    tp: np.ndarray,
    pp: np.ndarray,
    micro_batch: np.ndarray,
    interleave: np.ndarray,
    recompute: np.ndarray,
    ep: np.ndarray | None = None,
) -> LayoutCosts:
    """Everything that does not depend on the data-parallel degree or ZeRO stage, for arrays of layouts.

    `ep` (expert parallelism, default 1) only matters for mixture-of-experts models: it divides the expert
    parameters per GPU and adds two all-to-alls (dispatch, combine) per MoE layer to the forward pass and two to
    the backward, on NVLink when the ep x tp GPUs of an expert group fit in the NVLink domain, else on the
    scale-out NICs. The expert GEMMs keep their FLOPs (each GPU still runs tokens x active expert FFNs on average;
    ep changes where they run, not how many), so ep = 1 leaves every figure as it was.

    About 80 lines: one straight-line vectorised pass (stage time, pipeline sends, parameters, activations) whose
    parts share a dozen arrays; the per-layer forward is already apart in `_layer_forward`.
    """
    s = work.shape
    tp = np.asarray(tp, dtype=float)
    pp = np.asarray(pp, dtype=float)
    mb = np.asarray(micro_batch, dtype=float)
    v = np.asarray(interleave, dtype=float)
    rc = np.asarray(recompute)
    ep = np.ones_like(tp) if ep is None else np.asarray(ep, dtype=float)
    h, seq, vocab = float(s.hidden), float(s.seq_len), float(s.vocab)
    tokens = mb * seq  # tokens per micro-batch
    sp = tp if eff.sequence_parallel else np.ones_like(tp)  # divisor for the element-wise work

    gemm_f, attn_f, attn_b, ew_f, comm_f, ep_f = _layer_forward(work, hw, eff, mb, tp, sp, ep)
    fwd = gemm_f + attn_f + ew_f + comm_f + ep_f
    bwd = 2.0 * gemm_f + attn_b + 2.0 * ew_f + comm_f + ep_f
    # Full recompute replays the forward (with its collectives); selective replays only the attention core,
    # which flash attention already does inside its backward.
    recompute_extra = np.where(rc == 2, fwd, np.where(rc == 1, 0.0 if eff.flash_attention else attn_f, 0.0))
    layer_time = fwd + bwd + recompute_extra
    layers_per_stage = s.layers / pp
    body = layers_per_stage * layer_time
    tp_comm = layers_per_stage * (comm_f * np.where(rc == 2, 3.0, 2.0))
    ep_comm = layers_per_stage * (ep_f * np.where(rc == 2, 3.0, 2.0))

    # --- LM head and loss on the last stage (not recomputed): 3 GEMM passes + fp32 logits traffic ---
    head = 3.0 * gemm_time(tokens, h, vocab / tp, hw, eff) + 12.0 * tokens * vocab / tp / (hw.hbm_bytes_s * eff.hbm)
    stage = body + head

    # --- pipeline point-to-point: activations forward, gradients backward, v times per micro-batch. Each TP rank
    # sends only its 1/tp slice and the receiver all-gathers it over NVLink (Narayanan 2021 scatter/gather). ---
    pp_bw = np.where(tp * pp <= hw.nvlink_domain, hw.nvlink_bytes_s, hw.scaleout_bytes_s)
    p2p_one = eff.collective_latency_s + 2.0 * tokens * h / tp / (pp_bw * eff.scaleout)
    p2p = np.where(pp > 1, 2.0 * v * p2p_one, 0.0)

    # --- parameters of the heaviest stage per GPU (first holds the embedding, last the head) ---
    layer_params = work.layer_params()
    params_stage = params_per_gpu(work, tp, pp, ep)
    experts_stage = expert_params_per_gpu(work, tp, pp, ep)
    layer_params_gpu = (layer_params - work.moe_expert_params_per_layer() * (1.0 - 1.0 / ep)) / tp

    # --- activations (Korthikanti 2022 terms, generalised to GQA / gated FFN / MoE; see memory.py) ---
    act_full, per_layer_sel, act_none = activation_terms(work, tokens, tp, sp, eff.flash_attention)
    per_layer = np.where(rc == 2, act_full, np.where(rc == 1, per_layer_sel, act_none))
    act_stage = per_layer * layers_per_stage
    # Full recompute rebuilds one layer's activations at a time; the last stage keeps fp32 logits and their grad.
    extra = np.where(rc == 2, act_none, 0.0) + 8.0 * tokens * vocab / tp

    return LayoutCosts(
        tp=tp,
        pp=pp,
        micro_batch=mb,
        interleave=v,
        recompute=rc,
        stage_time_s=stage,
        body_stage_time_s=body,
        p2p_time_s=p2p,
        tp_comm_time_s=tp_comm,
        ep_comm_time_s=ep_comm,
        params_per_gpu=params_stage,
        # At ep = 1 the experts are replicated over all of dp like the dense weights, so they stay in that share.
        expert_params_per_gpu=np.where(ep > 1, experts_stage, 0.0),
        layer_params_per_gpu=layer_params_gpu,
        activation_bytes=act_stage,
        activation_extra_bytes=extra,
        dp_bandwidth_bytes_s=hw.scaleout_bytes_s,
        ep=ep,
    )


@dataclass
class StepCosts:
    """Per-candidate arrays after choosing dp and ZeRO stage."""

    micro_batches: np.ndarray
    step_time_s: np.ndarray
    pipeline_time_s: np.ndarray
    bubble_time_s: np.ndarray
    dp_exposed_time_s: np.ndarray
    optimizer_time_s: np.ndarray
    tokens_per_step: np.ndarray
    weights_bytes: np.ndarray
    gradients_bytes: np.ndarray
    optimizer_bytes: np.ndarray
    activations_bytes: np.ndarray
    reserve_bytes: float
    memory_bytes: np.ndarray


def step_costs(
    lay: LayoutCosts,
    idx: np.ndarray,
    dp: np.ndarray,
    zero: np.ndarray,
    batch_sequences: int,
    seq_len: int,
    hw: Hardware,
    eff: Efficiency,
) -> StepCosts:
    """Broadcast layout costs (rows `idx`) over data parallelism `dp` and ZeRO stage `zero` (0-3).

    m = floor(global batch / (dp x micro_batch)) micro-batches per step; a 1F1B pipeline takes
    m x t_stage + (pp - 1) / v x t_body (Narayanan 2021 bubble). ZeRO-0/1 reduce gradients once per step
    (an all-reduce's volume), overlapped with the last micro-batch's backward; ZeRO-2 reduce-scatters every
    micro-batch; ZeRO-3 also all-gathers parameters for forward and backward of every micro-batch, overlapped
    with that micro-batch's compute. The optimizer step is HBM bound over the parameters a GPU updates.

    With expert parallelism (MoE, ep > 1, ep dividing dp) the expert share of the parameters is replicated only
    over dp / ep ranks, so its gradient collectives and ZeRO sharding run over dp / ep; they are added as
    separate collectives (zero for dense models, whose figures are therefore unchanged).

    About 80 lines: one straight-line vectorised pass whose pipeline, collective, optimizer and memory parts share
    the same indexed arrays; split, they would pass a dozen arrays back and forth.
    """
    dp = np.asarray(dp, dtype=float)
    zero = np.asarray(zero)
    tp, pp = lay.tp[idx], lay.pp[idx]
    mb, v = lay.micro_batch[idx], lay.interleave[idx]
    t_stage, t_body, p2p = lay.stage_time_s[idx], lay.body_stage_time_s[idx], lay.p2p_time_s[idx]
    params = lay.params_per_gpu[idx]
    experts = lay.expert_params_per_gpu[idx]
    ep = lay.ep[idx] if lay.ep is not None else np.ones_like(dp)
    edp = dp / ep  # ranks holding the same experts (expert-data-parallel group)
    has_experts = experts > 0

    m = np.floor(batch_sequences / (dp * mb))
    m_eff = np.maximum(m, 1.0)
    bubble = (pp - 1.0) / v * t_body
    pipeline = m_eff * (t_stage + p2p) + bubble

    # DP groups stay inside a system only when the whole job does; otherwise they cross the compute fabric.
    inside = tp * pp * dp <= hw.gpus_per_system
    bw = np.where(inside, hw.nvlink_bytes_s, lay.dp_bandwidth_bytes_s)
    link_eff = np.where(inside, eff.nvlink, eff.scaleout)
    dense = params - experts
    grad_bytes = dense * eff.grad_reduce_bytes_per_param
    expert_grad_bytes = experts * eff.grad_reduce_bytes_per_param
    lat = eff.collective_latency_s

    def expert_ring(bytes_: np.ndarray, factor: float) -> np.ndarray:
        return np.where(has_experts, ring_time(bytes_, edp, factor, bw, link_eff, lat), 0.0)

    all_reduce = ring_time(grad_bytes, dp, 2.0, bw, link_eff, lat) + expert_ring(expert_grad_bytes, 2.0)
    reduce_scatter = ring_time(grad_bytes, dp, 1.0, bw, link_eff, lat) + expert_ring(expert_grad_bytes, 1.0)
    gather = ring_time(dense * 2.0, dp, 1.0, bw, link_eff, lat) + expert_ring(experts * 2.0, 1.0)
    backward_last = t_stage * (2.0 / 3.0)
    hide = eff.dp_overlap
    exposed_once = np.maximum(0.0, all_reduce - hide * backward_last)
    exposed_z2 = m_eff * np.maximum(0.0, reduce_scatter - hide * backward_last) + gather
    exposed_z3 = m_eff * np.maximum(0.0, 2.0 * gather + reduce_scatter - hide * t_stage)
    dp_exposed = np.where(zero == 3, exposed_z3, np.where(zero == 2, exposed_z2, exposed_once))

    shard = np.where(zero >= 1, dp, 1.0)
    expert_shard = np.where(zero >= 1, edp, 1.0)
    updated = dense / shard + experts / expert_shard
    optimizer_time = updated * OPTIMIZER_BYTES_PER_PARAM / (hw.hbm_bytes_s * eff.hbm)
    step = pipeline + dp_exposed + optimizer_time

    weights, grads, optim = state_bytes_ep(params, experts, lay.layer_params_per_gpu[idx], dp, ep, zero)
    in_flight = np.minimum(pp, m_eff)
    interleave_factor = np.where(v > 1, 1.0 + (pp - 1.0) / (pp * v), 1.0)
    acts = lay.activation_bytes[idx] * in_flight * interleave_factor + lay.activation_extra_bytes[idx]
    reserve = hw.hbm_bytes * eff.reserve_fraction
    return StepCosts(
        micro_batches=m,
        step_time_s=step,
        pipeline_time_s=pipeline,
        bubble_time_s=bubble,
        dp_exposed_time_s=dp_exposed,
        optimizer_time_s=optimizer_time,
        tokens_per_step=dp * mb * m * seq_len,
        weights_bytes=weights,
        gradients_bytes=grads,
        optimizer_bytes=optim,
        activations_bytes=acts,
        reserve_bytes=reserve,
        memory_bytes=weights + grads + optim + acts + reserve,
    )
