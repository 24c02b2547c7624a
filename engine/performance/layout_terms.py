"""Layout terms of the training step model that go beyond Megatron 2021's (tp, pp, dp): the K and V widths context
parallelism exchanges (its methods are in `cp_comm.py`), KV heads replicated when tensor parallelism exceeds them,
and the per-stage parameters and activations of uneven pipeline stages. `step_time.layout_costs` adds them to the
per-layer costs.

All functions work on numpy arrays of layouts (scalars broadcast).
"""

from __future__ import annotations

import numpy as np

from engine.performance.memory import (
    GRAD_BYTES_PER_PARAM,
    OPTIMIZER_BYTES_PER_PARAM,
    WEIGHT_BYTES_PER_PARAM,
    MemoryOptions,
    activation_terms,
    cheap_recompute_bytes,
    fp8_activation_savings,
)
from engine.performance.roofline import Efficiency, Hardware, gemm_time
from engine.performance.stages import stage_positions
from engine.workload.model import Workload

__all__ = [
    "KV_BYTES_PER_ELEMENT",
    "POS_ACTS",
    "POS_DENSE",
    "POS_DEPTH",
    "POS_EXPERTS",
    "POS_EXTRA",
    "POS_INDEX",
    "activation_floor",
    "activation_offload_time_s",
    "host_overflow_bytes",
    "interleave_factor",
    "kv_pair_width_per_gpu",
    "kv_replica_terms",
    "kv_width_per_gpu",
    "layers_on_gpu",
    "offload_time_s",
    "pack_positions",
    "position_activations",
    "position_params",
    "stage_memory",
]

# Ring attention passes K and V chunks in 16-bit (Megatron-Core context parallelism, Transformer Engine).
KV_BYTES_PER_ELEMENT = 2.0
# Fields of a stage position (LayoutCosts.positions[..., field]): dense and expert parameters per GPU, one
# micro-batch's stored activations, the working set held once (full-recompute layer, logits), pp - i (the
# micro-batches a 1F1B stage i can hold in flight, before the cap m), and the stage index i.
POS_DENSE, POS_EXPERTS, POS_ACTS, POS_EXTRA, POS_DEPTH, POS_INDEX = range(6)


def kv_width_per_gpu(work: Workload, tp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(K or V width one TP rank holds with replication, the same without): kv_heads x head_dim / tp, floored
    at one whole head per GPU when tp > kv_heads (the heads are copied, as vLLM and Megatron-Core do)."""
    s = work.shape
    kv_heads = float(s.kv_heads)
    head_dim = float(work.head_dim)
    return np.maximum(kv_heads / tp, 1.0) * head_dim, kv_heads * head_dim / tp


def kv_pair_width_per_gpu(work: Workload, tp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(K plus V columns one TP rank holds in attention with replication, the same without). Latent attention
    (MLA) expands the latent into full keys (nope + rope head sizes) and values for every head, split over tp
    like the queries: its query-key and value widths / tp, never replicated."""
    if work.shape.mla is not None:
        width = np.asarray((work.qk_width + work.v_width) / np.asarray(tp, dtype=float))
        return width, width
    rep, plain = kv_width_per_gpu(work, tp)
    return 2.0 * rep, 2.0 * plain


def _kv_extra_columns(work: Workload, tp: np.ndarray) -> np.ndarray:
    """K and V columns a TP rank holds beyond its share because KV heads are copied (0 when tp <= kv_heads)."""
    rep, plain = kv_width_per_gpu(work, tp)
    return 2.0 * (rep - plain)


def kv_replica_terms(work: Workload, tokens: np.ndarray, tp: np.ndarray, hw: Hardware, eff: Efficiency):
    """What replicating KV heads adds per layer and GPU when tp > kv_heads: forward GEMM time of the extra K/V
    columns, parameters, and stored activation bytes (K and V, 2 B each). All zero when tp <= kv_heads.

    The extra columns are timed as their own GEMM without a second kernel overhead (they are part of the fused
    QKV projection): 2 x (width with replication - width without) columns of a (tokens x hidden) GEMM.
    """
    h = float(work.shape.hidden)
    extra_cols = _kv_extra_columns(work, tp)
    time = np.where(extra_cols > 0, gemm_time(tokens, h, extra_cols, hw, eff) - eff.kernel_overhead_s, 0.0)
    return time, h * extra_cols, tokens * 2.0 * extra_cols


def position_params(work: Workload, tp, ep, pos_layers, pos_embedding, pos_head, kv_extra_params, etp=None):
    """(dense, expert) parameters per GPU on each stage position, shape (n, 4) (per-layout inputs as (n, 1)).

    A layer's dense share (attention, router, norms, shared experts; K/V copies when tp > kv_heads) is split
    over tp; its routed experts over ep x etp (etp: the expert tensor-parallel degree, tp by default, 1 when the
    experts are folded over the tensor-parallel ranks). The first stage adds the input embedding, the last the LM head
    and final norm (a tied matrix is held by both ends, as Megatron does; at pp = 1 the single stage holds it
    once). The declared-parameter scaling of `params_per_gpu` applies to the embeddings alike.
    """
    scale = work.params / work.params_derived
    expert_layer = work.moe_expert_params_per_layer()
    dense_layer = (work.layer_params() - expert_layer) / tp + kv_extra_params
    expert_gpu = expert_layer / ep / (tp if etp is None else etp)
    first_extra = work.input_embedding_params * scale
    own_head = (work.output_head_params + work.final_norm_params) * scale
    tied = work.shape.vocab * work.shape.hidden if work.shape.tied_embeddings else work.output_head_params
    split_head = (tied + work.final_norm_params) * scale
    single = pos_embedding & pos_head  # pp = 1: one stage holds both ends
    head = np.where(single, own_head, split_head)
    dense = pos_layers * dense_layer + (pos_embedding * first_extra + pos_head * head) / tp
    experts = pos_layers * expert_gpu
    return dense, experts


def position_activations(work, flash_attention: bool, tokens, tp, sp, rc, fp8_activations: bool, kv_extra_bytes):
    """Per-layer stored activation bytes for one micro-batch (Korthikanti terms, `memory.activation_terms`),
    adjusted for what the model adds: selective recompute with fused attention also recomputes the cheap ops
    (`memory.cheap_recompute_bytes`); FP8 recipes keep GEMM inputs in 1 byte; KV copies when tp > kv_heads.
    Returns (per layer by the layout's recompute mode, one layer without recompute, cheap-op replay bytes)."""
    full, sel, none = activation_terms(work, tokens, tp, sp, flash_attention)
    saved, replay = cheap_recompute_bytes(work, tokens, tp, sp)
    cheap = (rc == 1) & flash_attention
    sel = sel + kv_extra_bytes - np.where(cheap, saved, 0.0)
    none = none + kv_extra_bytes
    if fp8_activations:
        sel = sel - fp8_activation_savings(work, tokens, tp, sp, cheap)
        none = none - fp8_activation_savings(work, tokens, tp, sp, False)
    per_layer = np.where(rc == 2, full, np.where(rc == 1, sel, none))
    return per_layer, none, np.where(cheap, replay, 0.0)


def activation_floor(
    work: Workload,
    g,
    need_m,
    fp8_activations: bool,
    flash_attention: bool,
    sequence_parallel: bool,
    logits_bytes: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Per layout of the grid `g` (arrays tp, pp, micro_batch, interleave, recompute, cp, first, last,
    act_offload): (the activation bytes of the fullest stage with the fewest micro-batches in flight a step can
    have (`need_m`), the same terms `step_time.layout_costs` keeps; the activation bytes the layout keeps in host
    memory). No dp, ZeRO stage or state offload lowers the first, so a layout whose floor exceeds HBM can be
    dropped before its step costs are computed. Both depend on the model, the grid, these three switches and the
    loss's bytes per logit alone (no hardware figure), so systems with different GPUs or fabrics share them."""
    tp, pp, v = g["tp"].astype(float), g["pp"].astype(float), g["interleave"].astype(float)
    cp, rc = g["cp"].astype(float), g["recompute"]
    tokens = g["micro_batch"] * float(work.shape.seq_len) / cp
    sp = tp if sequence_parallel else np.ones_like(tp)
    counts, index, _emb, head, _valid = stage_positions(work.shape.layers, pp, g["first"], g["last"])
    offloaded = g["act_offload"].astype(float)
    counts = layers_on_gpu(counts, offloaded)
    kv_acts = tokens * 2.0 * _kv_extra_columns(work, tp)  # kv_replica_terms' activation bytes
    per_layer, act_none, _replay = position_activations(
        work, flash_attention, tokens, tp, sp, rc, fp8_activations, kv_acts
    )
    in_flight = np.minimum(np.maximum(pp[:, None] - index, 0.0), need_m[:, None])
    ileave = interleave_factor(pp, v)
    logits = logits_bytes * tokens * float(work.shape.vocab) / tp
    extra = (counts > 0) * np.where(rc == 2, act_none, 0.0)[:, None] + head * logits[:, None]
    floor = (counts * (per_layer * ileave)[:, None] * in_flight + extra).max(axis=1)
    return floor, offloaded * per_layer


def layers_on_gpu(counts, offloaded):
    """Layers per stage position whose activations stay in HBM when `offloaded` layers' go to host memory (per
    layout, pp = 1). One offloaded layer's activations are still on the GPU at a time: its copy to the host runs
    during the next layer's forward, and backward fetches each back one layer ahead (Megatron-Core's
    cpu_offloading; Transformer Engine double-buffers the transfers)."""
    offloaded = np.asarray(offloaded, dtype=float)[:, None]
    return np.where((offloaded > 0) & (counts > 0), counts - offloaded + 1.0, counts)


def activation_offload_time_s(offloaded, bytes_per_layer, layers, forward_s, backward_s, memory: MemoryOptions):
    """Exposed host-link time per micro-batch of `offloaded` layers' activations (pp = 1, no recompute).

    Forward copies each offloaded layer's stored activations (`bytes_per_layer`) to host memory while the layers
    after it compute; backward fetches them back while the layers above compute their gradients. Each direction
    runs on its own side of the host link (`memory.host_link_bytes_s` per direction), a share
    `memory.activation_offload_overlap` of it hidden under the other layers' compute at best; what the compute
    cannot cover is exposed: max((1 - overlap) x transfer, transfer - compute of the other layers), forward and
    backward apart."""
    offloaded = np.asarray(offloaded, dtype=float)
    transfer = offloaded * bytes_per_layer / memory.host_link_bytes_s
    others = np.maximum(layers - 1.0, 0.0)
    floor = (1.0 - memory.activation_offload_overlap) * transfer
    fwd = np.maximum(floor, transfer - others * forward_s)
    bwd = np.maximum(floor, transfer - others * backward_s)
    return np.where(offloaded > 0, fwd + bwd, 0.0)


def pack_positions(dense, experts, acts, extra, index, pp) -> np.ndarray:
    """The (n, 4) position arrays as one (n, 4, 6) array, so a search gathers a candidate's positions once."""
    depth = np.maximum(pp - index, 0.0) * (acts > 0)
    return np.stack([dense, experts, acts, extra, depth, index.astype(float)], axis=-1)


def offload_time_s(memory: MemoryOptions, offload, updated, m):
    """Exposed host-link time of offloaded state per step (ZeRO-Offload, Ren et al. 2021, as Megatron-Core's
    optimizer CPU offload does it): the optimizer step runs on the host; each step sends the gradients of the
    parameters a GPU updates down (2 B each; with gradient offload, every micro-batch's gradients as produced)
    and the updated bf16 weights back up (2 B), at the host link's bandwidth, a share `offload_overlap` hidden
    behind compute."""
    down = 2.0 * np.where(offload == 2, m, 1.0)
    transfer = (down + 2.0) * updated / memory.host_link_bytes_s
    return np.where(offload > 0, transfer * (1.0 - memory.offload_overlap), 0.0)


def host_overflow_bytes(memory: MemoryOptions, dense, experts, offload, zero, dpc, edp, activation_bytes):
    """Bytes per GPU the host cannot take: what offloaded optimizer state and offloaded activations need beyond the
    host memory a GPU may give them (`memory.host_offload_bytes`). Added to the GPU's memory: what does not fit on
    the host has to stay in HBM.

    With optimizer offload (either code) the host keeps, for each parameter the GPU updates, the 12 B of fp32
    master weights and Adam moments plus the 2 B gradient the CPU step reads (the same parameters
    `offload_time_s` moves): the dense ones sharded over the dp x cp ranks from ZeRO-1, the heaviest stage's
    experts (`experts`, after ep) over the dp x cp / ep ranks that hold the same experts."""
    shard = zero >= 1
    updated = dense / np.where(shard, dpc, 1.0) + experts / np.where(shard, edp, 1.0)
    state = np.where(offload >= 1, (OPTIMIZER_BYTES_PER_PARAM + GRAD_BYTES_PER_PARAM) * updated, 0.0)
    return np.maximum(state + activation_bytes - memory.host_offload_bytes, 0.0)


def _state_tables() -> np.ndarray:
    """Bytes per parameter of (weights, gradients, optimizer) by [ZeRO stage, offload code] as (fixed, per-rank)
    pairs: the bytes a GPU holds are fixed + per_rank / ranks. ZeRO-1 shards the 12 B optimizer state, ZeRO-2 also
    the 2 B gradients, ZeRO-3 also the 2 B weights (module note of memory.py); offload code 1 moves the optimizer
    state to the host, code 2 also the gradients."""
    table = np.zeros((4, 3, 3, 2))  # zero, offload, part (weights, gradients, optimizer), (fixed, per rank)
    for zero in range(4):
        for offload in range(3):
            w = (0.0, WEIGHT_BYTES_PER_PARAM) if zero == 3 else (WEIGHT_BYTES_PER_PARAM, 0.0)
            g = (0.0, GRAD_BYTES_PER_PARAM) if zero >= 2 else (GRAD_BYTES_PER_PARAM, 0.0)
            o = (0.0, OPTIMIZER_BYTES_PER_PARAM) if zero >= 1 else (OPTIMIZER_BYTES_PER_PARAM, 0.0)
            table[zero, offload] = [w, (0.0, 0.0) if offload == 2 else g, (0.0, 0.0) if offload >= 1 else o]
    return table


STATE_BYTES = _state_tables()


def interleave_factor(pp, v):
    """Narayanan's (1 + (p - 1) / (p v)): the activations an interleaved 1F1B schedule holds over plain 1F1B."""
    return np.where(v > 1, 1.0 + (pp - 1.0) / (pp * v), 1.0)


def stage_memory(
    pos, ileave, layer_params, zero, dpc, edp, offload, m, experts_possible: bool = True, extra_in_flight=None
):
    """Memory of the fullest pipeline stage: (weights, gradients, optimizer, activations, total, stage index).

    `pos` is the candidates' (n, 4, 6) positions. Bytes per parameter under ZeRO over dpc = dp x cp ranks
    (experts over edp) from `STATE_BYTES` (weights 2, gradients 2, optimizer 12, sharded from ZeRO-3, -2, -1; one
    gathered layer at 4 B/param under ZeRO-3; offloaded parts 0). Stage i holds min(pp - i, m) micro-batches'
    activations under 1F1B (times `ileave`, `interleave_factor`, with interleaving); the four positions are
    evaluated and the fullest wins. Per-candidate coefficients are formed first so only a handful of operations
    run over the four positions (the search calls this thousands of times on small batches).
    `experts_possible=False` (no layout of the grid has experts) skips looking for them: there are none.
    `extra_in_flight` adds that many micro-batches' activations of a stage to every position (EP overlap's combined
    1F1B: `LayoutCosts.ep_extra_in_flight`).
    """
    parts = STATE_BYTES[zero, offload.astype(np.int64)]  # (n, 3, 2)
    per_part_d = parts[:, :, 0] + parts[:, :, 1] / dpc[:, None]  # (n, 3) bytes per dense parameter
    dense, experts = pos[:, :, POS_DENSE], pos[:, :, POS_EXPERTS]
    in_flight = np.minimum(pos[:, :, POS_DEPTH], m[:, None]) * ileave[:, None]
    if extra_in_flight is not None:
        in_flight = in_flight + extra_in_flight[:, None]
    acts = pos[:, :, POS_ACTS] * in_flight
    acts += pos[:, :, POS_EXTRA]
    total = dense * per_part_d.sum(axis=1)[:, None] + acts
    has_experts = experts_possible and bool(experts.any())
    if has_experts:
        per_part_e = parts[:, :, 0] + parts[:, :, 1] / edp[:, None]
        total += experts * per_part_e.sum(axis=1)[:, None]
    k = total.argmax(axis=1)
    rows = np.arange(total.shape[0])
    state = per_part_d * dense[rows, k][:, None]  # (n, 3): weights, gradients, optimizer of the fullest stage
    if has_experts:
        state += per_part_e * experts[rows, k][:, None]
    gathered = np.where(zero == 3, 4.0 * layer_params, 0.0)
    weights = state[:, 0] + gathered
    return weights, state[:, 1], state[:, 2], acts[rows, k], total[rows, k] + gathered, pos[rows, k, POS_INDEX]
