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

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from engine.performance.cp_comm import cp_comm_terms
from engine.performance.dp_step import StepCosts, step_costs
from engine.performance.layout_terms import (
    activation_offload_time_s,
    kv_replica_terms,
    layers_on_gpu,
    pack_positions,
    position_activations,
    position_params,
)
from engine.performance.memory import MemoryOptions
from engine.performance.moe_terms import (
    attention_gemms,
    combined_1f1b_layer_s,
    dense_ffn_gemms,
    expert_alltoall_time,
    exposed_dispatch_share,
    moe_ffn_parts,
    moe_permute_time,
)
from engine.performance.roofline import (
    DROPOUT_BYTES_PER_SCORE,
    ELEMENTWISE_BYTES_PER_HIDDEN,
    ELEMENTWISE_KERNELS_PER_LAYER,
    FLASH_BACKWARD_RATIO,
    FLASH_KEY_BLOCK_TOKENS,
    RECOMPUTE_CODES,
    RECOMPUTE_NAMES,
    SOFTMAX_BYTES_PER_SCORE,
    Efficiency,
    Hardware,
    attention_head_speed,
    efficiency_for,
    expert_alltoall_bytes,
    gemm_time,
    hardware_for,
    ring_latencies_s,
    ring_time,
)
from engine.performance.stages import stage_positions, stage_split
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
    """Per-layout arrays (one entry per (tp, pp, micro_batch, interleave, recompute, ep, cp, stage split, offload,
    activation offload) layout). `positions` has shape (n, 4, fields): per layout, the four stage positions that
    can hold the most memory (`stages.stage_positions`: first, the first middle stage of each size, last), each
    with the fields named by `layout_terms.POS_*` (parameters, activations, stage index...)."""

    tp: np.ndarray
    pp: np.ndarray
    micro_batch: np.ndarray
    interleave: np.ndarray
    recompute: np.ndarray
    stage_time_s: np.ndarray  # one micro-batch forward + backward (+ recompute) through the slowest stage
    body_stage_time_s: np.ndarray  # the same through the stage with the most layers, without the LM head (bubble)
    p2p_time_s: np.ndarray  # exposed pipeline send/receive time per micro-batch
    tp_comm_time_s: np.ndarray  # TP collectives inside stage_time_s (for the explain output)
    ep_comm_time_s: np.ndarray  # expert all-to-alls inside stage_time_s (0 for dense models and ep = 1)
    params_per_gpu: np.ndarray  # parameters held by one GPU of the heaviest stage before ZeRO sharding
    expert_params_per_gpu: np.ndarray  # the expert share of params_per_gpu (after ep), sharded over dp / ep
    layer_params_per_gpu: np.ndarray
    activation_bytes: np.ndarray  # one micro-batch's stored activations for the first stage (all its layers)
    activation_extra_bytes: np.ndarray  # working set not multiplied by micro-batches in flight (first stage)
    dp_bandwidth_bytes_s: float  # per GPU for DP collectives crossing systems
    ep: np.ndarray | None = None  # expert-parallel degree (out of dp, or of tp x cp x dp folded); None = 1
    etp: np.ndarray | None = None  # expert tensor-parallel degree: tp, or 1 with the experts folded; None = tp
    # ep x etp / tp: the data-parallel ranks (times cp) holding the same experts are dp x cp / this (1 = dense)
    expert_dp_divisor: np.ndarray | None = None
    cp: np.ndarray | None = None  # context-parallel degree; None = 1 everywhere
    first_layers: np.ndarray | None = None  # transformer layers on the first / last pipeline stage
    last_layers: np.ndarray | None = None
    offload: np.ndarray | None = None  # OFFLOAD_CODES; None = 0 everywhere
    act_offload: np.ndarray | None = None  # layers whose activations are in host memory (pp = 1); None = 0
    act_offload_time_s: np.ndarray | None = None  # their exposed host-link time per micro-batch, in stage_time_s
    act_offload_bytes: np.ndarray | None = None  # the activation bytes they keep in host memory per GPU
    cp_comm_time_s: np.ndarray | None = None  # exposed context-parallel exchange inside stage_time_s
    cp_comm: np.ndarray | None = None  # its method (cp_comm.CP_COMM_CODES); None = the ring
    cp_comm_windowed: np.ndarray | None = None  # the sliding-window layers' method; None without such layers
    positions: np.ndarray | None = None  # (n, 4, POSITION_FIELDS): see layout_terms.POS_*
    memory: MemoryOptions = field(default_factory=MemoryOptions)
    dp_chunks: np.ndarray | None = None  # layers a stage holds: ZeRO-3 gathers and reduces them one at a time
    backward_share: np.ndarray | None = None  # of a layer's time: backward, with any recompute (2/3 without)
    # 1: expert all-to-alls overlapped with the other micro-batch's computation (combined 1F1B); stage_time_s is
    # then a paired micro-batch's, and ep_unpaired_s what each micro-batch the schedule cannot pair adds to it
    ep_overlap: np.ndarray | None = None
    ep_unpaired_s: np.ndarray | None = None
    # micro-batches of a stage's activations EP overlap adds in flight: one layer's, the paired forward's layer made
    # before the backward frees its own (with pipelining the warm-up's extra micro-batch takes the place of the
    # forward 1F1B runs ahead of its backward, which the in-flight count already holds)
    ep_extra_in_flight: np.ndarray | None = None
    group: np.ndarray | None = None  # tp x cp x pp as integers, cached by the search
    columns: np.ndarray | None = None  # the per-layout columns step_costs reads, stacked (built on first use)
    # Figures the searches derive from these costs alone (and the request inputs in their key), kept with the
    # costs so every search sharing them (`search/layout_cache.py`) reuses them; read-only once stored.
    derived: dict[Hashable, Any] = field(default_factory=dict)


class _LayerForward(NamedTuple):
    """One layer's forward-pass times (seconds per micro-batch) by kind of work, and the attention backward."""

    gemm: np.ndarray
    attention: np.ndarray
    attention_backward: np.ndarray
    elementwise: np.ndarray
    tp_comm: np.ndarray
    ep_comm: np.ndarray
    moe_permute: np.ndarray  # routed tokens gathered per expert and scattered back (as long in the backward)
    moe_gemm: np.ndarray  # the MoE layers' routed experts' GEMMs inside `gemm`, per layer (shared ones apart)
    ep_comm_whole: np.ndarray  # the expert all-to-alls with none of them hidden (`ep_comm` hides a share)


def _layer_forward(
    work: Workload,
    hw: Hardware,
    eff: Efficiency,
    mb: np.ndarray,
    tp: np.ndarray,
    sp: np.ndarray,
    ep: np.ndarray,
    etp: np.ndarray | None = None,
) -> _LayerForward:
    """Forward pass of one transformer layer for a micro-batch of `mb` sequences: GEMMs, attention core,
    element-wise work, tensor-parallel collectives and (MoE) expert all-to-alls."""
    s = work.shape
    h, seq, heads = float(s.hidden), float(s.seq_len), float(s.heads)
    gated = s.ffn_gated
    tokens = mb * seq  # tokens per micro-batch
    etp = tp if etp is None else etp  # expert tensor parallelism: tp, or 1 with the experts folded over tp

    # --- GEMMs of one layer's forward pass (Megatron column/row split over tp); a MoE model's leading dense layers
    # and its expert layers are averaged over the layers, as pipeline stages are sized by layer count ---
    gemm_f = attention_gemms(work, hw, eff, tokens, tp)
    moe_gemm_f = np.zeros_like(tp)
    if s.moe is None:
        gemm_f = gemm_f + dense_ffn_gemms(work, hw, eff, tokens, tp, float(s.ffn_hidden))
    else:
        moe_share = work.moe_layers / s.layers
        routed_f, shared_f = moe_ffn_parts(work, hw, eff, tokens, tp, ep, etp)
        moe_gemm_f = moe_share * routed_f
        gemm_f = gemm_f + moe_share * (routed_f + shared_f)
        if work.dense_layers:
            gemm_f = gemm_f + (1.0 - moe_share) * dense_ffn_gemms(work, hw, eff, tokens, tp, float(s.ffn_hidden))

    # --- attention core (QK^T, softmax, AV) ---
    attn_flops = 2.0 * tokens * seq * (work.qk_width + work.v_width) / tp  # model FLOPs (full square); 4 t s h
    if eff.flash_attention:
        # One fused kernel; the causal mask skips half the square and a sliding window the key blocks outside it
        # (`attention_span`, in whole blocks). Scores never reach HBM.
        span_flops = attn_flops * work.attention_span(seq, FLASH_KEY_BLOCK_TOKENS) / seq
        speed = eff.attention_ratio * attention_head_speed(work.qk_width / heads, eff)
        attn_f = 0.5 * span_flops / (hw.bf16_peak_flops * eff.gemm * speed) + eff.kernel_overhead_s
        attn_b = FLASH_BACKWARD_RATIO * attn_f
    else:
        # Unfused attention computes the whole masked square, window or not.
        scores = mb * heads / tp * seq * seq
        bmm = np.maximum(
            attn_flops / (hw.bf16_peak_flops * eff.gemm),
            2.0 * (2.0 * scores + 2.0 * tokens * (work.qk_width + work.v_width) / tp) / (hw.hbm_bytes_s * eff.hbm),
        )
        per_score = SOFTMAX_BYTES_PER_SCORE + (DROPOUT_BYTES_PER_SCORE if work.shape.dropout else 0.0)
        softmax = per_score * scores / (hw.hbm_bytes_s * eff.hbm)
        attn_f = bmm + softmax + 3.0 * eff.kernel_overhead_s
        attn_b = 2.0 * attn_f

    # --- element-wise (HBM bound): norms and residuals sharded only with sequence parallelism ---
    act_fn_bytes = (6.0 if gated else 4.0) * work.ffn_active_width  # activation function: read input(s), write
    ew_bytes = tokens * (ELEMENTWISE_BYTES_PER_HIDDEN * h / sp + act_fn_bytes / tp)
    ew_f = ew_bytes / (hw.hbm_bytes_s * eff.hbm) + ELEMENTWISE_KERNELS_PER_LAYER * eff.kernel_overhead_s

    # --- tensor-parallel collectives: 2 all-reduce equivalents forward, 2 backward, on the NVLink domain ---
    tp_bw = np.where(tp <= hw.nvlink_domain, hw.nvlink_bytes_s, hw.scaleout_bytes_s)
    # With sequence parallelism each all-reduce volume is an all-gather and a reduce-scatter, each paying its own
    # start-up and tp - 1 steps; without it, one all-reduce (ring or tree, the cheaper).
    half, reduce = ring_latencies_s(eff, tp, np.minimum(tp, hw.gpus_per_system))
    tp_lat = 2.0 * half if eff.sequence_parallel else reduce
    coll = ring_time(2.0 * tokens * h, tp, 2.0, tp_bw, eff.nvlink, tp_lat)
    # Experts folded over the tensor-parallel ranks (etp < tp) take each rank's own tokens straight from the
    # sequence-parallel shard, so a folded MoE layer has no FFN-side collective: only attention's remains.
    folded = etp < tp
    ffn_collectives = np.where(folded, 1.0 - work.moe_layers / s.layers, 1.0) if s.moe is not None else 1.0
    comm_f = (1.0 + ffn_collectives) * coll
    # With TP communication overlap (Transformer Engine userbuffers; needs sequence parallelism and an NVLink
    # domain), each all-gather / reduce-scatter is split into chunks that run under the neighbouring GEMM's
    # chunks: a share of the collective time hides, never more than the GEMM time it hides under.
    if eff.tp_overlap > 0.0 and eff.sequence_parallel:
        hidden = np.where(tp <= hw.nvlink_domain, np.minimum(eff.tp_overlap * comm_f, gemm_f), 0.0)
        comm_f = comm_f - hidden

    # --- expert all-to-alls (MoE with ep > 1): dispatch + combine forward, their transposes backward. With
    # sequence parallelism each TP rank dispatches only its 1/tp share of the tokens; the exposed share is set by
    # moe_dispatch_overlap (Megatron-Core's all-to-all dispatcher runs them on the critical path). ---
    if s.moe is not None:
        moe_share = work.moe_layers / s.layers
        # each GPU dispatches its sequence-parallel share; folded, each rank dispatches its own 1/tp of the tokens
        # (Megatron-Core requires sequence parallelism there)
        dispatched = tokens / np.where(folded, tp, sp)
        ep_whole = 2.0 * moe_share * expert_alltoall_time(work, hw, eff, dispatched, etp, ep, hidden=0.0)
        ep_f = ep_whole * exposed_dispatch_share(eff)
        permute_f = moe_share * moe_permute_time(work, hw, eff, tokens / sp)
    else:
        ep_f = ep_whole = permute_f = np.zeros_like(tp)

    return _LayerForward(gemm_f, attn_f, attn_b, ew_f, comm_f, ep_f, permute_f, moe_gemm_f, ep_whole)


def _full_layer_attention(work: Workload, eff: Efficiency, attn_f: np.ndarray, attn_b: np.ndarray):
    """A full-attention layer's fused attention time (forward, backward) from the average layer's: what a context-
    parallel ring of the full layers hides under (windowed layers exchange otherwise, `cp_comm.cp_comm_terms`).
    The average layer attends `attention_span` positions a query, a full one the whole sequence."""
    if not work.windowed_layers or not eff.flash_attention:
        return attn_f, attn_b
    seq = float(work.shape.seq_len)
    scale = seq / work.attention_span(seq, FLASH_KEY_BLOCK_TOKENS)
    full_f = (attn_f - eff.kernel_overhead_s) * scale + eff.kernel_overhead_s
    return full_f, attn_b * full_f / attn_f


def _layer_terms(
    work: Workload,
    hw: Hardware,
    eff: Efficiency,
    tp: np.ndarray,
    mb: np.ndarray,
    cp: np.ndarray,
    ep: np.ndarray,
    rc: np.ndarray,
    fp8_activations: bool,
    etp: np.ndarray | None,
    cp_comm: str | None,
    logits_bytes: float,
) -> tuple[np.ndarray, ...]:
    """Per-layer figures of rows (tp, micro-batch, cp, ep, recompute, expert tensor parallelism etp): one layer's
    time per micro-batch (forward, backward and recompute), the LM head's, the TP / EP / CP communication inside
    it, the replicated KV parameters, and the activations per layer (stored, and full recompute's working set)."""
    s = work.shape
    h, vocab = float(s.hidden), float(s.vocab)
    tokens = mb * float(s.seq_len) / cp  # tokens per GPU per micro-batch
    sp = tp if eff.sequence_parallel else np.ones_like(tp)  # divisor for the element-wise work
    parts = _layer_forward(work, hw, eff, mb / cp, tp, sp, ep, etp)
    gemm_f, attn_f, attn_b, ew_f, comm_f, ep_f, permute_f = parts[:7]
    kv_f, kv_params, kv_acts = kv_replica_terms(work, tokens, tp, hw, eff)
    full_f, full_b = _full_layer_attention(work, eff, attn_f, attn_b)
    cp_f, cp_b, cp_method, cp_working, cp_windowed = cp_comm_terms(
        work, hw, eff, tokens, tp, cp, full_f, full_b, rc, cp_comm
    )
    per_layer_acts, act_none, replay_bytes = position_activations(
        work, eff.flash_attention, tokens, tp, sp, rc, fp8_activations, kv_acts
    )
    fwd = gemm_f + kv_f + attn_f + ew_f + comm_f + ep_f + cp_f + permute_f
    bwd = 2.0 * (gemm_f + kv_f) + attn_b + 2.0 * ew_f + comm_f + ep_f + cp_b + permute_f
    # Full recompute replays the forward (with its collectives); selective replays the attention core (which
    # fused attention already does inside its backward) and, with fused attention, the norms and activation.
    cheap = replay_bytes / (hw.hbm_bytes_s * eff.hbm) + np.where(replay_bytes > 0, 3.0 * eff.kernel_overhead_s, 0.0)
    recompute_extra = np.where(rc == 2, fwd, np.where(rc == 1, (0.0 if eff.flash_attention else attn_f) + cheap, 0.0))
    layer_time = fwd + bwd + recompute_extra
    if work.shape.moe is None:  # no all-to-all to overlap: the layer runs as it is
        paired = whole = layer_time
    else:
        paired, whole = _paired_layer_s(parts, fwd, bwd + recompute_extra, ep_f, eff)

    # --- LM head and loss on the last stage (not recomputed): 3 GEMM passes + the loss's passes over the logits:
    # the head writes them, the loss reads them and writes its gradient, each at the bytes the loss keeps per
    # logit (`logits_bytes_per_element`: 2 for a fused 16-bit cross entropy, 8 with FP32 softmax and gradient) ---
    logits_traffic = 3.0 * logits_bytes * tokens * vocab / tp
    head = 3.0 * gemm_time(tokens, h, vocab / tp, hw, eff) + logits_traffic / (hw.hbm_bytes_s * eff.hbm)
    return (layer_time, head, comm_f, ep_f, cp_f, cp_b, kv_params, per_layer_acts, act_none, fwd, cp_method,
            cp_working, cp_windowed, paired, whole)  # fmt: skip


def _paired_layer_s(parts: _LayerForward, fwd: np.ndarray, bwd: np.ndarray, ep_f: np.ndarray, eff: Efficiency):
    """A layer's forward of one micro-batch and backward of another with the expert all-to-alls of each under the
    other's computation (`moe_terms.combined_1f1b_layer_s`): the layer time of a layout with EP overlap, where the
    schedule pairs them, of which a run realises the share `ep_overlap_realised` of the saving. Its work splits
    into the experts' (their GEMMs and the token permutation) and the rest, before the dispatch; the all-to-alls
    are taken whole, without the share `moe_dispatch_overlap` hides: the schedule replaces that share.

    Returns (paired, whole): the paired layer, and the layer run alone with its all-to-alls whole, as the passes
    the schedule cannot pair run."""
    mlp_f = parts.moe_gemm + parts.moe_permute
    mlp_b = 2.0 * parts.moe_gemm + parts.moe_permute
    attn_f = fwd - ep_f - mlp_f
    attn_b = bwd - ep_f - mlp_b
    ideal = combined_1f1b_layer_s(attn_f, mlp_f, attn_b, mlp_b, 0.5 * parts.ep_comm_whole, eff.moe_dispatch_sm_fraction)
    whole = fwd + bwd + 2.0 * (parts.ep_comm_whole - ep_f)
    return whole - eff.ep_overlap_realised * (whole - ideal), whole


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
    cp: np.ndarray | None = None,
    first_layers: np.ndarray | None = None,
    last_layers: np.ndarray | None = None,
    offload: np.ndarray | None = None,
    memory: MemoryOptions | None = None,
    act_offload: np.ndarray | None = None,
    fold: np.ndarray | None = None,
    cp_comm: str | None = None,
    ep_overlap: np.ndarray | None = None,
) -> LayoutCosts:
    """Everything that does not depend on the data-parallel degree or ZeRO stage, for arrays of layouts.

    `ep` (expert parallelism, default 1) divides a MoE model's expert parameters per GPU and adds the expert
    all-to-alls (`_layer_forward`). `fold` (default 0) marks layouts whose experts are folded over the tensor-
    parallel ranks (expert tensor parallelism 1, Megatron-Core's MoE parallel folding) instead of split by them
    (expert tensor parallelism tp). `cp` (context parallelism, default 1) gives each GPU 1/cp of every sequence:
    GEMMs, element-wise work, attention, collectives and activations are those of mb / cp sequences, plus the
    exposed context-parallel exchange (`cp_comm.cp_comm_terms`: the pinned `cp_comm` method, or per layout the
    fastest one it can run). `first_layers` / `last_layers` (default:
    the balanced split) set the end stages; the middle stages share the rest (`stages.py`). `act_offload` (pp = 1,
    no recompute) keeps that many layers' activations in host memory, paying the exposed host-link time
    (`layout_terms.activation_offload_time_s`) in every micro-batch. The slowest stage sets
    the per-micro-batch time (stage = max over stages of layers x layer time, + the LM head on the last), the
    fullest layer count the bubble's body, and memory is kept per stage position for `step_costs` to find the
    fullest: the per-layer terms (`_terms_per_layout`), the pipeline transfers (`_p2p_time_s`) and the parameters
    and activations per stage position (`_position_memory`) are steps of their own.
    """
    s = work.shape
    tp, pp = np.asarray(tp, dtype=float), np.asarray(pp, dtype=float)
    mb, v, rc = np.asarray(micro_batch, dtype=float), np.asarray(interleave, dtype=float), np.asarray(recompute)
    ep = np.ones_like(tp) if ep is None else np.asarray(ep, dtype=float)
    cp = np.ones_like(tp) if cp is None else np.asarray(cp, dtype=float)
    offload = np.zeros_like(tp) if offload is None else np.asarray(offload, dtype=float)
    etp = tp if fold is None else np.where(np.asarray(fold) > 0, 1.0, tp)
    memory = memory or MemoryOptions()
    if first_layers is None or last_layers is None:
        first_layers, last_layers = stage_split(s.layers, pp.astype(np.int64), 0, 0)
    counts, index, has_embedding, has_head, _valid = stage_positions(s.layers, pp, first_layers, last_layers)
    tokens = mb * float(s.seq_len) / cp  # tokens per GPU per micro-batch
    terms = _terms_per_layout(work, hw, eff, tp, mb, cp, ep, rc, memory.fp8_activations, etp, cp_comm,
                              memory.logits_bytes_per_element)  # fmt: skip
    layer_time, head, comm_f, ep_f, cp_f, cp_b, kv_params, per_layer_acts, act_none, fwd = terms[:10]
    cp_method, cp_working, cp_windowed, paired, whole = terms[10:]
    most_layers = counts.max(axis=1)
    act_offload = np.zeros_like(tp) if act_offload is None else np.asarray(act_offload, dtype=float)
    act_offload_s = activation_offload_time_s(act_offload, per_layer_acts, most_layers, fwd, layer_time - fwd, memory)
    per_stage = counts * layer_time[:, None] + has_head * head[:, None]
    rows = np.arange(per_stage.shape[0])
    slowest = per_stage.argmax(axis=1)
    stage = per_stage[rows, slowest] + act_offload_s
    backward_share = _stage_backward_share(
        counts[rows, slowest], has_head[rows, slowest], layer_time - fwd, head, act_offload_s, stage
    )
    passes = np.where(rc == 2, 3.0, 2.0)
    ep_comm = most_layers * ep_f * passes
    ep_overlap = np.zeros_like(tp) if ep_overlap is None else np.asarray(ep_overlap, dtype=float)
    unpaired = np.zeros_like(tp)
    body = most_layers * layer_time
    if ep_overlap.any():  # the combined 1F1B schedule: a micro-batch's layers run paired with the next one's
        paired_stage = (counts * paired[:, None] + has_head * head[:, None]).max(axis=1) + act_offload_s
        whole_stage = (counts * whole[:, None] + has_head * head[:, None]).max(axis=1) + act_offload_s
        on = ep_overlap > 0
        unpaired = np.where(on, whole_stage - paired_stage, 0.0)
        stage = np.where(on, paired_stage, stage)
        body = np.where(on, most_layers * whole, body)  # the fill and drain run unpaired, all-to-alls whole
        compute = layer_time - 2.0 * ep_f  # the layer's work without its two passes' all-to-alls
        ep_comm = np.where(on, most_layers * (paired - compute), ep_comm)
    dense, experts, acts, extra = _position_memory(
        work,
        tp,
        ep,
        etp,
        rc,
        counts,
        has_embedding,
        has_head,
        kv_params,
        per_layer_acts,
        act_none,
        tokens,
        cp_working,
        memory.logits_bytes_per_element,
    )
    if act_offload.any():
        acts = layers_on_gpu(counts, act_offload) * per_layer_acts[:, None]
    total = dense + experts
    p2p = _p2p_time_s(hw, eff, tp, cp, pp, v, tokens, s.hidden)
    heaviest = total.argmax(axis=1)
    return LayoutCosts(
        tp=tp, pp=pp, micro_batch=mb, interleave=v, recompute=rc,
        stage_time_s=stage, body_stage_time_s=body, p2p_time_s=p2p,
        tp_comm_time_s=most_layers * comm_f * passes, ep_comm_time_s=ep_comm,
        params_per_gpu=total[rows, heaviest], expert_params_per_gpu=experts[rows, heaviest],
        layer_params_per_gpu=(work.layer_params() - work.moe_expert_params_per_layer()) / tp
        + work.moe_expert_params_per_layer() / (ep * etp) + kv_params,
        activation_bytes=acts[:, 0], activation_extra_bytes=extra[:, 0],
        dp_bandwidth_bytes_s=hw.scaleout_bytes_s,
        ep=ep, etp=etp, expert_dp_divisor=ep * etp / tp, cp=cp, first_layers=np.asarray(first_layers, dtype=float),
        last_layers=np.asarray(last_layers, dtype=float), offload=offload,
        act_offload=act_offload, act_offload_time_s=act_offload_s, act_offload_bytes=act_offload * per_layer_acts,
        cp_comm_time_s=most_layers * (cp_f * np.where(rc == 2, 2.0, 1.0) + cp_b), cp_comm=cp_method,
        cp_comm_windowed=cp_windowed if work.windowed_layers else None,
        positions=pack_positions(dense, experts, acts, extra, index, pp[:, None]), memory=memory,
        dp_chunks=np.maximum(most_layers, 1.0), backward_share=backward_share,
        ep_overlap=ep_overlap, ep_unpaired_s=unpaired,
        ep_extra_in_flight=np.where(ep_overlap > 0, 1.0 / np.maximum(most_layers, 1.0), 0.0),
    )  # fmt: skip


def _stage_backward_share(layers, has_head, layer_backward_s, head_s, act_offload_s, stage_s):
    """Share of the slowest stage's time per micro-batch spent in its backward, which the data-parallel reduction
    hides under: its layers' backward (with any recompute), two of the LM head's three GEMM passes (the head is
    not recomputed), and half the exposed host-link copies of offloaded activations (the reloads; the network is
    free while the stage waits for them)."""
    backward = layers * layer_backward_s + has_head * head_s * (2.0 / 3.0) + 0.5 * act_offload_s
    return backward / np.maximum(stage_s, 1e-30)


def _terms_per_layout(work: Workload, hw: Hardware, eff: Efficiency, tp: np.ndarray, mb: np.ndarray, cp: np.ndarray,
                      ep: np.ndarray, rc: np.ndarray, fp8_activations: bool, etp: np.ndarray,
                      cp_comm: str | None, logits_bytes: float) -> tuple[np.ndarray, ...]:  # fmt: skip
    """`_layer_terms` of every layout. Everything per layer depends on (tp, micro-batch, cp, ep, recompute) alone, a
    few hundred distinct rows in a grid of thousands (the rest is stage splits, pipeline degrees and
    interleaving): worked out once per distinct row, then read per layout (the same elementwise figures, bit for
    bit)."""
    code = tp
    for column in (mb, cp, ep, rc, etp):  # mixed radix: each column below its largest value + 1 (whole numbers)
        code = code * (float(np.max(column, initial=0)) + 1.0) + column
    _codes, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    terms = _layer_terms(work, hw, eff, tp[first], mb[first], cp[first], ep[first], rc[first], fp8_activations,
                         etp[first], cp_comm, logits_bytes)  # fmt: skip
    return tuple(t[inverse.ravel()] for t in terms)


def _p2p_time_s(hw: Hardware, eff: Efficiency, tp: np.ndarray, cp: np.ndarray, pp: np.ndarray, v: np.ndarray,
                tokens: np.ndarray, hidden: int) -> np.ndarray:  # fmt: skip
    """Pipeline point-to-point per micro-batch: activations forward, gradients backward, v times. Each TP rank
    sends only its 1/tp slice and the receiver all-gathers it over NVLink (Narayanan 2021 scatter/gather). Inside
    one NVLink domain the transfer runs at NVLink bandwidth and NVLink's achieved share of it."""
    scale_up = tp * cp * pp <= hw.nvlink_domain
    pp_bw = np.where(scale_up, hw.nvlink_bytes_s * eff.nvlink, hw.scaleout_bytes_s * eff.scaleout)
    p2p_one = eff.collective_latency_s + 2.0 * tokens * float(hidden) / tp / pp_bw
    return np.where(pp > 1, 2.0 * v * p2p_one, 0.0)


def _position_memory(work: Workload, tp: np.ndarray, ep: np.ndarray, etp: np.ndarray, rc: np.ndarray,
                     counts: np.ndarray,
                     has_embedding: np.ndarray, has_head: np.ndarray, kv_params: np.ndarray,
                     per_layer_acts: np.ndarray, act_none: np.ndarray, tokens: np.ndarray,
                     cp_working: np.ndarray,
                     logits_bytes: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """(dense params, expert params, activations, extra activation bytes) per GPU per stage position. At ep = 1
    the experts shard over all of dp like dense weights (counted as dense). Full recompute rebuilds one layer's
    activations at a time, as an all-gather context-parallel exchange holds one layer's gathered K and V with
    their gradients (`cp_working`); the head's stage keeps what the loss holds per logit (`logits_bytes`: 2 with
    a fused cross entropy writing the gradient over 16-bit logits, 8 with FP32 softmax and gradient)."""
    dense, experts = position_params(work, tp[:, None], ep[:, None], counts, has_embedding, has_head,
                                     kv_params[:, None], etp[:, None])  # fmt: skip
    split = ep[:, None] > 1
    dense = np.where(split, dense, dense + experts)
    experts = np.where(split, experts, 0.0)
    vocab = float(work.shape.vocab)
    held = np.where(rc == 2, act_none, 0.0) + cp_working  # one layer's at a time
    extra = (counts > 0) * held[:, None] + has_head * (logits_bytes * tokens * vocab / tp)[:, None]
    return dense, experts, counts * per_layer_acts[:, None], extra
