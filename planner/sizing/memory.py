"""Training memory per GPU: model state (ZeRO-1 accounting) plus activations (Korthikanti et al. 2022).

Kept separate from the layout search so the formulas can be tested by hand and reused by later stages
(checkpoint sizing reads the same per-parameter bytes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.sizing.workload import Workload

__all__ = [
    "GIB",
    "GRAD_BYTES_PER_PARAM",
    "OPTIMIZER_BYTES_PER_PARAM",
    "RECOMPUTE_MODES",
    "WEIGHT_BYTES_PER_PARAM",
    "MemoryBreakdown",
    "activation_bytes_per_layer",
    "params_per_gpu",
    "training_memory",
]

GIB = 1024**3
# Mixed-precision Adam (ZeRO paper accounting): bf16 weights 2 + bf16 grads 2 + fp32 master/m/v 12 = 16 B/param.
WEIGHT_BYTES_PER_PARAM = 2.0
GRAD_BYTES_PER_PARAM = 2.0
OPTIMIZER_BYTES_PER_PARAM = 12.0
RECOMPUTE_MODES = ("none", "selective", "full")


@dataclass(frozen=True)
class MemoryBreakdown:
    """Per-GPU memory of the most loaded pipeline stage, GiB."""

    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    reserve_gib: float

    @property
    def total_gib(self) -> float:
        return self.weights_gib + self.gradients_gib + self.optimizer_gib + self.activations_gib + self.reserve_gib

    def as_dict(self) -> dict[str, float]:
        return {
            "weights": self.weights_gib,
            "gradients": self.gradients_gib,
            "optimizer": self.optimizer_gib,
            "activations": self.activations_gib,
            "reserve": self.reserve_gib,
        }


def params_per_gpu(work: Workload, tp: int, pp: int) -> float:
    """Parameters on one GPU of the heaviest pipeline stage.

    The first stage also holds the input embedding, the last the output head (a tied matrix is held by both,
    as Megatron does), so with pipelining the heavier end stage sets the memory need.
    """
    layers_per_stage = math.ceil(work.shape.layers / pp)
    body = layers_per_stage * work.layer_params()
    scale = work.params / work.params_derived  # declared-params scaling, 1.0 normally
    first_extra = work.input_embedding_params * scale
    head = work.shape.vocab * work.shape.hidden if work.shape.tied_embeddings else work.output_head_params
    last_extra = (head + work.final_norm_params) * scale
    if pp == 1:
        stage = body + first_extra + (work.output_head_params + work.final_norm_params) * scale
    else:
        stage = body + max(first_extra, last_extra)
    return stage / tp


def activation_bytes_per_layer(work: Workload, micro_batch: int, tp: int, recompute: str) -> float:
    """Activation bytes one layer keeps for one micro-batch, with tensor + sequence parallelism over `tp`.

    Korthikanti et al. 2022 (16-bit activations): s b (18h + 4 d_ff) + 5 a s^2 b per layer without
    parallelism, which is 34 s b h + 5 a s^2 b at d_ff = 4h. Two generalisations, same derivation:
    with GQA the stored K and V shrink by kv_heads/heads (attention 11 sbh -> (7 + 4 kv/a) sbh); the FFN keeps
    the activation function's input and the second matmul's input, 2 d_ff + 2 d_ff = 4 s b d_ff for a plain FFN
    and 4 d_ff (gate and up) + 2 d_ff = 6 s b d_ff for a fused SwiGLU; MoE keeps these for each of the `active`
    experts a token visits. Selective recompute drops the 5 a s^2 b score term
    (as FlashAttention does); full recompute keeps only the layer input (2 s b h). Sequence parallelism
    shards every term over tp.
    """
    s = work.shape
    kv_ratio = s.kv_heads / s.heads
    ffn_bytes_per_token = (6.0 if s.ffn_gated else 4.0) * s.ffn_hidden * work.active_experts
    linear_per_token = (14.0 + 4.0 * kv_ratio) * s.hidden + ffn_bytes_per_token
    tokens = s.seq_len * micro_batch
    if recompute == "full":
        per_layer = 2.0 * tokens * s.hidden
    elif recompute == "selective":
        per_layer = tokens * linear_per_token
    elif recompute == "none":
        per_layer = tokens * linear_per_token + 5.0 * s.heads * s.seq_len**2 * micro_batch
    else:
        raise ValueError(f"unknown recompute mode {recompute!r}")
    return per_layer / tp


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
) -> MemoryBreakdown:
    """Memory per GPU: 2 + 2 + 12/dp bytes per parameter (ZeRO-1 distributed optimizer) plus activations.

    Under 1F1B the first stage has min(pp, micro-batches) micro-batches in flight, each holding its
    ceil(L/pp) layers' activations, i.e. about L layers' worth when the pipeline is full.
    """
    params = params_per_gpu(work, tp, pp)
    layers_per_stage = math.ceil(work.shape.layers / pp)
    in_flight = min(pp, micro_batches)
    activations = activation_bytes_per_layer(work, micro_batch, tp, recompute) * layers_per_stage * in_flight
    return MemoryBreakdown(
        weights_gib=params * WEIGHT_BYTES_PER_PARAM / GIB,
        gradients_gib=params * GRAD_BYTES_PER_PARAM / GIB,
        optimizer_gib=params * OPTIMIZER_BYTES_PER_PARAM / dp / GIB,
        activations_gib=activations / GIB,
        reserve_gib=hbm_gib * reserve_fraction,
    )
