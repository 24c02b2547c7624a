"""Training memory per GPU: model state (ZeRO-1 accounting) plus activations (Korthikanti et al. 2022).

Kept separate from the layout search so the formulas can be tested by hand; the engine (`step_time`) calls
the same functions over numpy arrays of layouts, and inference sizing reuses `params_per_gpu`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.workload.model import ServingStage, Workload

if TYPE_CHECKING:
    from engine.catalog.hardware import System

__all__ = [
    "GIB",
    "GRAD_BYTES_PER_PARAM",
    "OFFLOAD_CODES",
    "OFFLOAD_NAMES",
    "OPTIMIZER_BYTES_PER_PARAM",
    "RECOMPUTE_MODES",
    "WEIGHT_BYTES_PER_PARAM",
    "MemoryBreakdown",
    "MemoryOptions",
    "activation_bytes_per_layer",
    "activation_terms",
    "cheap_recompute_bytes",
    "expert_params_per_gpu",
    "fp8_activation_savings",
    "memory_options_for",
    "params_per_gpu",
    "stage_params_per_gpu",
    "state_bytes",
    "state_bytes_ep",
    "tp_whole_params",
    "training_memory",
]

GIB = 1024**3
# Mixed-precision Adam (ZeRO paper accounting): bf16 weights 2 + bf16 grads 2 + fp32 master/m/v 12 = 16 B/param.
WEIGHT_BYTES_PER_PARAM = 2.0
GRAD_BYTES_PER_PARAM = 2.0
OPTIMIZER_BYTES_PER_PARAM = 12.0
RECOMPUTE_MODES = ("none", "selective", "full")
# Offload of model state to host (or Grace) memory, as array codes: 0 none, 1 the fp32 optimizer state (master
# weights + Adam moments, 12 B/param), 2 that and the bf16 gradients, streamed to the host as produced (14 B/param).
OFFLOAD_CODES = {"none": 0, "optimizer": 1, "optimizer_and_params": 2}
OFFLOAD_NAMES = {v: k for k, v in OFFLOAD_CODES.items()}


@dataclass(frozen=True)
class MemoryOptions:
    """The memory side of a training stack, resolved from the request and the named assumptions.

    `reserve_bytes` is what the framework holds outside the model state and activations (CUDA context and NCCL
    buffers as a fixed amount, allocator fragmentation as a share of HBM); None keeps the older
    `Efficiency.reserve_fraction` x HBM (callers that build layouts without assumptions). The host link carries
    offloaded state and activations: PCIe for x86 hosts, NVLink-C2C for Grace superchips (`memory_options_for`).
    """

    reserve_bytes: float | None = None
    fp8_activations: bool = False
    host_link_bytes_s: float = 50e9
    offload_overlap: float = 0.5
    # Activation offload: the share of the host-link transfers the other layers' compute can hide; and the host
    # memory per GPU that offloaded activations and optimizer state may fill together.
    activation_offload_overlap: float = 0.5
    host_offload_bytes: float = math.inf  # no limit until resolved from the system's host memory
    # What the loss keeps per logit until the backward (assumption `logits_bytes_per_element`).
    logits_bytes_per_element: float = 2.0


def memory_options_for(system: System, hbm_bytes: float, fp8_activations: bool, a) -> MemoryOptions:
    """Resolve the reserve, the host link and the host memory offload may fill from the system's catalog record
    and the assumptions (`a`: the Assumptions registry). The host link is what one GPU gets per direction with
    every GPU of the system transferring at once (the catalog's `host` record: PCIe shared by the GPUs on one
    uplink, or NVLink-C2C shared by a Grace CPU's two GPUs)."""
    reserve = a["training_memory_reserve_gib"] * GIB + a["training_memory_fragmentation_fraction"] * hbm_bytes
    return MemoryOptions(
        reserve_bytes=reserve,
        fp8_activations=fp8_activations,
        host_link_bytes_s=system.host_link_gbyte_s_per_gpu * 1e9,
        offload_overlap=a["offload_overlap_fraction"],
        activation_offload_overlap=a["activation_offload_overlap_fraction"],
        host_offload_bytes=a["host_memory_offload_share"] * system.host_memory_gib_per_gpu * GIB,
        logits_bytes_per_element=a["logits_bytes_per_element"],
    )


def cheap_recompute_bytes(work: Workload, tokens, tp, sp):
    """Activation bytes per layer that recomputing the cheap ops (norms, activation function) frees, with fused
    attention: the two norm outputs feeding the QKV and FC1 GEMMs (2 x 2h B per token, sharded with sequence
    parallelism) and the activation function's output feeding FC2 (2 x d_ff B per token and active expert,
    sharded over tp). Megatron-Core `--recompute-granularity selective --recompute-modules layernorm mlp_act`
    (Transformer Engine recomputes them in backward at element-wise cost). Also the element-wise bytes the
    recompute reads and writes again: norms 2 x (2h + 2h), the activation (gated 4 d_ff in + 2 d_ff out)."""
    s = work.shape
    h, f = float(s.hidden), float(work.ffn_active_width)
    saved = tokens * (4.0 * h / sp + 2.0 * f / tp)
    replay = tokens * (8.0 * h / sp + (6.0 if s.ffn_gated else 4.0) * f / tp)
    return saved, replay


def fp8_activation_savings(work: Workload, tokens, tp, sp, cheap_recompute):
    """Bytes per layer an FP8 recipe saves by keeping GEMM inputs in 1 byte instead of 2 (Transformer Engine
    caches the FP8 casts of the inputs for the weight-gradient GEMMs): half of the QKV and FC1 inputs (norm
    outputs, 2h each), the output projection input (attention output, 2 x the value width: h unless the head size
    is decoupled) and the FC2 input (2 d_ff per active expert). What cheap-op recompute already dropped
    (`cheap_recompute`: norm outputs and the FC2 input) is not stored, so only the output projection input is
    saved then."""
    s = work.shape
    h, f, v = float(s.hidden), float(work.ffn_active_width), float(work.v_width)
    all_inputs = tokens * (2.0 * h / sp + v / tp + f / tp)
    return np.where(cheap_recompute, tokens * v / tp, all_inputs)


@dataclass(frozen=True)
class MemoryBreakdown:
    """Per-GPU memory of the most loaded pipeline stage, GiB."""

    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    reserve_gib: float
    host_overflow_gib: float = 0.0  # offloaded state and activations the host memory cannot hold, kept in HBM

    @property
    def total_gib(self) -> float:
        parts = self.weights_gib + self.gradients_gib + self.optimizer_gib + self.activations_gib + self.reserve_gib
        return parts + self.host_overflow_gib

    def as_dict(self) -> dict[str, float]:
        """The parts, named; the host overflow only where there is one (almost never)."""
        parts = {
            "weights": self.weights_gib,
            "gradients": self.gradients_gib,
            "optimizer": self.optimizer_gib,
            "activations": self.activations_gib,
            "reserve": self.reserve_gib,
        }
        return {**parts, "host_overflow": self.host_overflow_gib} if self.host_overflow_gib > 0 else parts


def params_per_gpu(work: Workload, tp, pp, ep=1):
    """Parameters on one GPU of the heaviest pipeline stage (scalars, or numpy arrays of layouts).

    The first stage also holds the input embedding, the last the output head (a tied matrix is held by both,
    as Megatron does), so with pipelining the heavier end stage sets the memory need. Expert parallelism
    splits a mixture-of-experts layer's experts over `ep` GPUs (each holds experts / ep whole experts, still
    sharded over tp); attention, router, norms and embeddings are not split by ep. The expert share is
    subtracted (times 1 - 1/ep) rather than re-added so that ep = 1 reproduces the dense figure bit for bit.
    """
    layers_per_stage = np.ceil(work.shape.layers / np.asarray(pp, dtype=float))
    ep = np.asarray(ep, dtype=float)
    layer = work.layer_params() - work.moe_expert_params_per_layer() * (1.0 - 1.0 / ep)
    scale = work.params / work.params_derived  # declared-params scaling, 1.0 normally
    first_extra = work.input_embedding_params * scale
    head = work.shape.vocab * work.shape.hidden if work.shape.tied_embeddings else work.output_head_params
    last_extra = (head + work.final_norm_params) * scale
    both = first_extra + (work.output_head_params + work.final_norm_params) * scale
    stage = layers_per_stage * layer + np.where(np.asarray(pp) == 1, both, max(first_extra, last_extra))
    return _scalar_or_array(stage / tp)


def stage_params_per_gpu(work: Workload, stage: ServingStage, tp: int) -> float:
    """Parameters one GPU of a serving pipeline stage holds: its layers by kind (a mixture-of-experts model's
    leading dense-FFN layers and its expert layers, each with attention and norms), the input embedding on the
    first stage, the LM head and final norm on the last (a tied matrix on both when they differ), all split over
    tp except what vLLM keeps whole on every tensor-parallel GPU: the MoE router and, with latent attention, the
    two down-projections into the query and key-value latents (`ReplicatedLinear` in vLLM's DeepSeek-V2/V3
    model, 2025)."""
    s = work.shape
    scale = work.params / work.params_derived  # declared-params scaling, 1.0 normally
    common = work.attention_params_per_layer + work.norm_and_bias_params_per_layer
    moe_layers = stage.layers - stage.dense_ffn
    expert_layer = work.router_params_per_layer + work.ffn_params_per_expert_per_layer * (
        work.experts + work.shared_experts
    )
    layers = stage.layers * common + stage.dense_ffn * work.dense_ffn_params_per_layer + moe_layers * expert_layer
    whole = _whole_on_every_tp_gpu(work, stage.layers, moe_layers)
    ends = 0.0
    if stage.first:
        ends += work.input_embedding_params
    if stage.last:
        head = work.output_head_params
        if s.tied_embeddings and not stage.first:
            head = s.vocab * s.hidden
        ends += head + work.final_norm_params
    return ((layers - whole + ends) / tp + whole) * scale


def _whole_on_every_tp_gpu(work: Workload, layers: int, moe_layers: int) -> float:
    """Parameters of `layers` layers (`moe_layers` of them with experts) that vLLM keeps whole on every
    tensor-parallel GPU: the routers, and with latent attention the query and key-value down-projections."""
    s = work.shape
    whole = moe_layers * work.router_params_per_layer if s.moe is not None else 0.0
    if s.mla is not None:
        whole += layers * s.hidden * ((s.mla.q_lora_rank or 0) + s.mla.kv_lora_rank + s.mla.qk_rope_head_dim)
    return float(whole)


def tp_whole_params(work: Workload) -> float:
    """The whole model's parameters vLLM keeps whole on every tensor-parallel GPU (`_whole_on_every_tp_gpu`),
    after any declared-params scaling: what a decode step reads on every GPU rather than 1/tp of."""
    s = work.shape
    whole = _whole_on_every_tp_gpu(work, s.layers, s.layers - work.dense_layers)
    return whole * work.params / work.params_derived


def expert_params_per_gpu(work: Workload, tp, pp, ep):
    """Expert parameters one GPU of the heaviest stage holds after expert parallelism: layers/pp x experts
    x per-expert FFN / (ep x tp); 0 for a dense model. Their gradients are reduced, and their optimizer state
    sharded, over the dp / ep ranks that hold the same experts, not over all of dp (`state_bytes_ep`)."""
    layers_per_stage = np.ceil(work.shape.layers / np.asarray(pp, dtype=float))
    return _scalar_or_array(layers_per_stage * work.moe_expert_params_per_layer() / np.asarray(ep, dtype=float) / tp)


def activation_terms(work: Workload, tokens, tp, sp, flash_attention: bool = False):
    """Activation bytes one layer keeps for `tokens` tokens of a micro-batch: (full, selective, none) recompute.

    Korthikanti et al. 2022 (16-bit activations): s b (18h + 4 d_ff) + 5 a s^2 b per layer without
    parallelism, which is 34 s b h + 5 a s^2 b at d_ff = 4h. Their count keeps dropout's masks (2 s b h, and
    a s^2 b in unfused attention with the dropped-out scores, 2 a s^2 b); a model trained without dropout
    (`model.dropout` false, the default: PyTorch's dropout at rate 0 returns its input and stores nothing) keeps
    32 s b h + 2 a s^2 b. Two generalisations, same derivation:
    with GQA the stored K and V shrink by kv_heads/heads (attention 11 sbh -> (7 + 4 kv/a) sbh with dropout's
    mask, (6 + 4 kv/a) sbh without), and Q and the
    output projection's input are the heads' widths where the head size is decoupled from h; the FFN keeps
    the activation function's input and the second matmul's input, 2 d_ff + 2 d_ff = 4 s b d_ff for a plain FFN
    and 4 d_ff (gate and up) + 2 d_ff = 6 s b d_ff for a fused SwiGLU; MoE keeps these for each of the `active`
    experts a token visits. Selective recompute drops the score term (5 a s^2 b, or 2 a s^2 b without dropout)
    (as FlashAttention does, so with `flash_attention` no mode keeps it); full recompute keeps only the layer
    input (2 s b h). Tensor parallelism shards the terms over `tp`; the 8h of norm and GEMM inputs (10h with
    dropout masks) shard only with sequence parallelism, over `sp` (sp = tp with it, 1 without).
    """
    s = work.shape
    h = float(s.hidden)
    # Attention keeps Q and the output projection's input (qk and v widths: h each unless the head size is
    # decoupled) and K and V (kv_heads x head_dim each with GQA; MLA decompresses per-head keys and values).
    if s.mla is None:
        key_width = value_width = float(s.kv_heads * work.head_dim)
    else:
        key_width, value_width = float(work.qk_width), float(work.v_width)
    attention = 2.0 * (work.qk_width + work.v_width) + 2.0 * (key_width + value_width)
    act_fn_bytes = (6.0 if s.ffn_gated else 4.0) * float(work.ffn_active_width)
    # Norm inputs (2 x 2h), the QKV and FC1 GEMMs' inputs (2 x 2h) and, with dropout, its two 1-byte masks.
    replicated = (8.0 + (2.0 if s.dropout else 0.0)) * h
    linear = replicated + attention + act_fn_bytes  # bytes per token per layer at 16-bit
    selective = tokens * (replicated / sp + (linear - replicated) / tp)
    # Unfused attention keeps the softmax output (2 B per score); with dropout also its mask and output (1 + 2 B).
    per_score = 5.0 if s.dropout else 2.0
    score = 0.0 if flash_attention else per_score * float(s.heads) * float(s.seq_len) * tokens / tp
    return 2.0 * tokens * h / sp, selective, selective + score


def activation_bytes_per_layer(work: Workload, micro_batch: int, tp: int, recompute: str) -> float:
    """Activation bytes one layer keeps for one micro-batch, with tensor + sequence parallelism over `tp`
    and no FlashAttention (`activation_terms` has the derivation)."""
    if recompute not in RECOMPUTE_MODES:
        raise ValueError(f"unknown recompute mode {recompute!r}")
    full, selective, none = activation_terms(work, float(work.shape.seq_len * micro_batch), tp, tp)
    return _scalar_or_array({"full": full, "selective": selective, "none": none}[recompute])


def state_bytes(params, layer_params, dp, zero):
    """Bytes per GPU of (weights, gradients, optimizer state) under ZeRO stage `zero` over `dp` ranks.

    2 + 2 + 12 bytes per parameter (module note); ZeRO-1 shards the optimizer state, ZeRO-2 also the
    gradients, ZeRO-3 also the weights (keeping one gathered layer, 4 bytes per its parameter, in flight).
    """
    shard = np.where(zero >= 1, dp, 1.0)
    weights = np.where(
        zero == 3,
        WEIGHT_BYTES_PER_PARAM * params / dp + 4.0 * layer_params,
        WEIGHT_BYTES_PER_PARAM * params,
    )
    grads = np.where(zero >= 2, GRAD_BYTES_PER_PARAM * params / dp, GRAD_BYTES_PER_PARAM * params)
    optim = OPTIMIZER_BYTES_PER_PARAM * params / shard
    return weights, grads, optim


def state_bytes_ep(params, expert_params, layer_params, dp, ep, zero):
    """`state_bytes` with expert parallelism: the dense share of `params` shards over dp, the expert share
    (`expert_params`, already divided by ep) over the dp / ep expert-data-parallel ranks holding the same
    experts (Megatron-Core and DeepSpeed-MoE carve EP groups out of DP). With no expert share (dense models)
    the expert term is exactly zero, so dense figures are unchanged."""
    dp = np.asarray(dp, dtype=float)
    dense = state_bytes(params - expert_params, layer_params, dp, zero)
    expert = state_bytes(expert_params, 0.0, dp / np.asarray(ep, dtype=float), zero)
    return tuple(d + e for d, e in zip(dense, expert, strict=True))


def training_memory(
    work: Workload,
    *,
    tp: int,
    pp: int,
    dp: int,
    micro_batch: int,
    micro_batches: int,
    recompute: str,
    hbm_gib: float,
    reserve_fraction: float,
    ep: int = 1,
) -> MemoryBreakdown:
    """Memory per GPU: 2 + 2 + 12/dp bytes per parameter (ZeRO-1 distributed optimizer) plus activations.

    With expert parallelism `ep` (which must divide dp) each GPU holds experts / ep of every MoE layer.

    Under 1F1B the first stage has min(pp, micro-batches) micro-batches in flight, each holding its
    ceil(L/pp) layers' activations, i.e. about L layers' worth when the pipeline is full. The engine
    (`step_time.step_costs`) adds the other ZeRO stages, interleaving and the last stage's logits.
    """
    params = params_per_gpu(work, tp, pp, ep)
    experts = expert_params_per_gpu(work, tp, pp, ep)
    layers_per_stage = math.ceil(work.shape.layers / pp)
    in_flight = min(pp, micro_batches)
    activations = activation_bytes_per_layer(work, micro_batch, tp, recompute) * layers_per_stage * in_flight
    weights, grads, optim = (float(x) for x in state_bytes_ep(params, experts, params, float(dp), ep, np.asarray(1)))
    return MemoryBreakdown(
        weights_gib=weights / GIB,
        gradients_gib=grads / GIB,
        optimizer_gib=optim / GIB,
        activations_gib=activations / GIB,
        reserve_gib=hbm_gib * reserve_fraction,
    )


def _scalar_or_array(x):
    """A plain float for scalar inputs (so callers keep Python floats), the array otherwise."""
    return float(x) if np.ndim(x) == 0 else x
