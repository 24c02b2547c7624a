"""How context-parallel ranks exchange what attention needs: the four methods Megatron-Core offers
(`cp_comm_type`), each with its exposed time per layer and the working memory it adds.

Why four: they trade bandwidth, overlap and head count differently, and practitioners pick per model and
cluster (NVIDIA's Megatron-Bridge performance guide, "Context-parallel (CP) communication", and its
hierarchical context parallel page, 2025):

- `ring` (Megatron's `p2p`): K and V chunks pass round a ring while each step's attention runs; only what the
  step's compute cannot hide is exposed (`ring_attention_time`). Any cp.
- `all_gather`: every rank gathers the whole sequence's K and V before attention; exposed, but small with few
  KV heads. Meta's Llama 3 405B long-context training ('The Llama 3 Herd of Models', arXiv 2407.21783, 2024,
  section 3.3.2). Transformer Engine keeps only the local chunk for the backward, so the backward gathers K and V
  again and reduce-scatters their gradients: twice the forward's transfer. Gathered K and V, and their
  full-length gradients, are working memory of the layer being computed.
- `all_to_all` (DeepSpeed-Ulysses, Jacobs et al., arXiv 2309.14509, 2023): an all-to-all before attention trades
  each rank's sequence chunk of Q, K and V for all the sequence on heads / cp of the heads, another after it
  brings the output back; the backward does the same with the gradients. Exposed. cp must divide the KV heads
  a tensor-parallel rank holds (and the query heads).
- `hierarchical` (Megatron's `a2a+p2p`): all-to-all inside a group small enough for the KV heads (and, here,
  inside the NVLink domain), then a ring across the groups over chunks that many times longer.

Sliding-window layers are the exception: Transformer Engine runs them under context parallelism only with the
all-gather or the all-to-all (`attn_forward_func_with_cp`, 2025), so they take the faster of those whatever the
full-attention layers use (Megatron-Core's `cp_comm_type` may differ per layer).

All functions work on numpy arrays of layouts (scalars broadcast).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.performance.layout_terms import KV_BYTES_PER_ELEMENT, kv_pair_width_per_gpu
from engine.performance.roofline import Efficiency, Hardware
from engine.workload.model import Workload

__all__ = [
    "CP_COMM_CODES",
    "CP_COMM_NAMES",
    "CpComm",
    "a2a_group",
    "cp_comm_terms",
    "cp_comm_valid",
    "ring_attention_time",
]

CP_COMM_NAMES = ("ring", "all_gather", "all_to_all", "hierarchical")
CP_COMM_CODES = {name: code for code, name in enumerate(CP_COMM_NAMES)}
RING, ALL_GATHER, ALL_TO_ALL, HIERARCHICAL = range(len(CP_COMM_NAMES))


class CpComm(NamedTuple):
    """One layer's context-parallel exchange per micro-batch in the method each layout uses."""

    forward_s: np.ndarray  # exposed in the forward pass
    backward_s: np.ndarray  # exposed in the backward pass
    method: np.ndarray  # CP_COMM_CODES: the full-attention layers' (all layers' without a window)
    working_bytes: np.ndarray  # memory held while the layer runs (not per micro-batch in flight)
    windowed_method: np.ndarray  # the sliding-window layers' (the same as `method` without such layers)


def _heads_per_rank(work: Workload, tp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(query heads, distinct KV heads) one tensor-parallel rank holds. Past the KV heads a rank holds a copy of
    one KV head, which an all-to-all cannot split further: 0 distinct heads to share."""
    s = work.shape
    kv = np.where(tp <= s.kv_heads, float(s.kv_heads) / tp, 0.0)
    return float(s.heads) / tp, kv


def a2a_group(work: Workload, tp: np.ndarray, cp: np.ndarray, nvlink_domain: int) -> np.ndarray:
    """The all-to-all group of the hierarchical method: the largest divisor a of cp that divides the query and KV
    heads of a tensor-parallel rank with tp x a inside one NVLink domain (tp x a divides it, so no group straddles
    two; 1: none, the method is a plain ring)."""
    tp, cp = np.asarray(tp, dtype=float), np.asarray(cp, dtype=float)
    q_heads, kv_heads = _heads_per_rank(work, tp)
    group = np.ones_like(cp)
    top = int(min(np.max(cp, initial=1.0), np.max(kv_heads, initial=0.0)))
    for a in range(2, top + 1):
        fits = (cp % a == 0) & (kv_heads % a == 0) & (q_heads % a == 0) & (nvlink_domain % (tp * a) == 0)
        group = np.where(fits & (kv_heads >= a), float(a), group)
    return group


def cp_comm_valid(work: Workload, tp, cp, nvlink_domain: int) -> np.ndarray:
    """Which methods each layout can run, shape (4, n): ring and all-gather always; all-to-all when cp divides the
    query and KV heads of a tensor-parallel rank; hierarchical when it has an all-to-all group of two or more (a
    group of all cp GPUs leaves a ring of one: the plain all-to-all, kept inside an NVLink domain)."""
    tp, cp = np.asarray(tp, dtype=float), np.asarray(cp, dtype=float)
    q_heads, kv_heads = _heads_per_rank(work, tp)
    whole = (kv_heads >= cp) & (kv_heads % cp == 0) & (q_heads % cp == 0)
    group = a2a_group(work, tp, cp, nvlink_domain)
    always = np.ones(cp.shape, dtype=bool)
    return np.stack([always, always, whole, group > 1])


def ring_attention_time(
    work: Workload,
    hw: Hardware,
    eff: Efficiency,
    tokens: np.ndarray,
    tp: np.ndarray,
    cp: np.ndarray,
    attention_f: np.ndarray,
    attention_b: np.ndarray,
    inside: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Exposed ring-attention transfer time per layer (forward, backward) with context parallelism over `cp`.

    Each GPU holds `tokens` (its 1/cp of the micro-batch's sequences; Megatron-Core splits each sequence into
    2 x cp chunks and gives rank r chunks r and 2cp - 1 - r so causal work balances). Forward: cp - 1 steps,
    each passing the K and V of its chunk (tokens x K plus V width x 2 B, `kv_pair_width_per_gpu`) to the next
    rank while computing attention against the chunk it holds, i.e. 1/cp of the GPU's attention time per step;
    exposed is max(0, transfer - compute) per step. Backward passes K, V and their gradients: twice the volume, against
    1/cp of the attention backward. On NVLink when the tp x cp GPUs fit the NVLink domain, else on the
    scale-out NICs (`inside` overrides that test: a ring over groups of ranks crosses systems when its whole
    group does). Zero at cp = 1.

    Sliding-window layers do not take the ring (`cp_comm_terms`: Transformer Engine runs them only with the
    all-gather or the all-to-all).
    """
    pair, _ = kv_pair_width_per_gpu(work, tp)
    kv_bytes = tokens * pair * KV_BYTES_PER_ELEMENT
    inside = tp * cp <= hw.nvlink_domain if inside is None else inside
    bw = np.where(inside, hw.nvlink_bytes_s, hw.scaleout_bytes_s) * np.where(inside, eff.nvlink, eff.scaleout)
    lat = eff.collective_latency_s
    steps = np.maximum(cp - 1.0, 0.0)
    cp1 = np.maximum(cp, 1.0)
    fwd = steps * np.maximum(0.0, lat + kv_bytes / bw - attention_f / cp1)
    bwd = steps * np.maximum(0.0, lat + 2.0 * kv_bytes / bw - attention_b / cp1)
    return fwd, bwd


def _alltoall_s(bytes_: np.ndarray, group: np.ndarray, bw: np.ndarray, lat: float) -> np.ndarray:
    """All-to-alls moving `bytes_` per rank in all over `group` ranks ((group - 1) / group of it leaves the rank),
    their start-ups `lat` together."""
    return np.where(group > 1, lat + bytes_ * (group - 1.0) / np.maximum(group, 1.0) / bw, 0.0)


def cp_comm_terms(
    work: Workload,
    hw: Hardware,
    eff: Efficiency,
    tokens: np.ndarray,
    tp: np.ndarray,
    cp: np.ndarray,
    attention_f: np.ndarray,
    attention_b: np.ndarray,
    recompute: np.ndarray,
    pinned: str | None = None,
) -> CpComm:
    """Exposed context-parallel time of one layer (forward, backward) for the pinned method, or for each layout
    the fastest method it can run (a full recompute replays the forward's exchange too). `tokens` are the GPU's
    1/cp share of the micro-batch; `attention_f` / `attention_b` the GPU's attention time that a ring step
    hides under, a full-attention layer's (`step_time._full_layer_attention`). Zero at cp = 1 (reported as the
    ring)."""
    tp, cp = np.asarray(tp, dtype=float), np.asarray(cp, dtype=float)
    tokens = np.asarray(tokens, dtype=float)
    pair, pair_plain = kv_pair_width_per_gpu(work, tp)
    kv = tokens * pair * KV_BYTES_PER_ELEMENT  # the local chunk's K and V
    qkvo = tokens * (work.qk_width / tp + pair_plain + work.v_width / tp) * KV_BYTES_PER_ELEMENT
    inside = tp * cp <= hw.nvlink_domain
    bw = np.where(inside, hw.nvlink_bytes_s * eff.nvlink, hw.scaleout_bytes_s * eff.scaleout)
    lat = eff.collective_latency_s
    steps = np.maximum(cp - 1.0, 0.0)

    ring_f, ring_b = ring_attention_time(work, hw, eff, tokens, tp, cp, attention_f, attention_b)
    gather_f = steps * (lat + kv / bw)
    gather_b = 2.0 * gather_f
    # Before attention Q, K and V go out, after it the output comes back (two all-to-alls, each its own start-up,
    # together Q + K + V + O); the backward moves their gradients the same way.
    a2a = _alltoall_s(qkvo, cp, bw, 2.0 * lat)
    group = a2a_group(work, tp, cp, hw.nvlink_domain)
    outer = cp / group
    inner = _alltoall_s(qkvo, group, hw.nvlink_bytes_s * eff.nvlink, 2.0 * lat)  # its group is inside NVLink
    outer_f, outer_b = ring_attention_time(work, hw, eff, tokens, tp, outer, attention_f, attention_b, inside)
    forward = np.stack([ring_f, gather_f, a2a, inner + outer_f])
    backward = np.stack([ring_b, gather_b, a2a, inner + outer_b])
    working = np.stack([np.zeros_like(kv), 2.0 * cp * kv, np.zeros_like(kv), np.zeros_like(kv)])
    working = np.where(cp > 1, working, 0.0)

    valid = cp_comm_valid(work, tp, cp, hw.nvlink_domain)
    replays = np.where(np.asarray(recompute) == 2, 2.0, 1.0)
    cost = np.where(valid, forward * replays + backward, np.inf)
    fastest = np.argmin(cost, axis=0)  # ties go to the earlier method: the ring first
    method = fastest if pinned is None else np.full(cp.shape, CP_COMM_CODES[pinned], dtype=np.int64)
    method = np.where(cp > 1, method, RING)
    chosen = _take(forward, method), _take(backward, method), _take(working, method)
    share = work.windowed_layers / work.shape.layers
    if share == 0.0:
        return CpComm(chosen[0], chosen[1], method, chosen[2], method)
    # Transformer Engine runs sliding-window attention under context parallelism only with the all-gather or the
    # all-to-all (`attn_forward_func_with_cp`); Megatron-Core takes a method per layer, so windowed layers use the
    # faster of those two the layout allows (a pinned one of them: that one) whatever the full layers use.
    if pinned in ("all_gather", "all_to_all"):
        own = method
    else:  # the all-gather always runs; the all-to-all where the heads allow it and it is faster
        own = np.where(cost[ALL_TO_ALL] < cost[ALL_GATHER], ALL_TO_ALL, ALL_GATHER)
    own = np.where(cp > 1, own, RING)
    windowed = _take(forward, own), _take(backward, own), _take(working, own)
    if share == 1.0:  # every layer windowed: theirs is the only method that runs
        return CpComm(windowed[0], windowed[1], own, windowed[2], own)
    return CpComm(
        (1.0 - share) * chosen[0] + share * windowed[0],
        (1.0 - share) * chosen[1] + share * windowed[1],
        method,
        np.maximum(chosen[2], windowed[2]),  # one layer's working set at a time: the larger kind's
        own,
    )


def _take(per_method: np.ndarray, method: np.ndarray) -> np.ndarray:
    """Each layout's figure for its method (`per_method` has a leading method axis)."""
    return np.take_along_axis(per_method, method[None, ...], axis=0)[0]
