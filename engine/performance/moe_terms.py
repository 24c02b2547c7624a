"""The parts of a transformer layer that differ for mixture-of-experts and latent-attention models.

Kept apart from `step_time` so the layer there reads as attention + FFN + communication, and each variant's
formula can be read and tested on its own. Every function works on numpy arrays of layouts (scalars broadcast).

- Routed experts run as one GEMM per local expert on the tokens routed to it (fine-grained experts are narrow
  and see few tokens, so their GEMMs run further from peak than one wide FFN of the same FLOPs), scaled by the
  load imbalance of the slowest expert-parallel rank. Shared experts and leading dense layers run on every token.
- Expert dispatch and combine (all-to-alls) cross the NVLink domain or the scale-out fabric; node-limited routing
  (DeepSeek-V3) sends a token once per node it reaches and forwards it inside the node over NVLink; an FP8
  dispatch moves 1-byte activations; a share of the time can overlap with compute.
- Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434) projects queries and keys/values through low-rank
  latents; the down-projections are not split over tensor parallelism.
"""

from __future__ import annotations

import numpy as np

from engine.performance.roofline import Efficiency, Hardware, expert_alltoall_bytes, gemm_time
from engine.workload.model import Workload

__all__ = [
    "attention_gemms",
    "combined_1f1b_layer_s",
    "dense_ffn_gemms",
    "expert_alltoall_time",
    "exposed_dispatch_share",
    "moe_ffn_gemms",
    "moe_ffn_parts",
    "moe_permute_time",
    "nodes_reached",
]

# HBM bytes per token and hidden element one MoE layer's forward moves to regroup its routed tokens, in units of
# 2-byte elements: the permute reads each token once per routed expert and writes that copy (2 x active), the
# unpermute reads the active copies back and writes their weighted sum (active + 1): 3 x active + 1.
PERMUTE_COPIES_PER_ACTIVE = 3.0


def attention_gemms(work: Workload, hw: Hardware, eff: Efficiency, tokens, tp):
    """Forward time of one layer's attention projections (QKV and output), Megatron column/row split over tp."""
    s = work.shape
    h = float(s.hidden)
    mla = s.mla
    if mla is None:
        kv = float(s.kv_heads * work.head_dim)
        query = float(work.qk_width)
        return gemm_time(tokens, h, (query + 2.0 * kv) / tp, hw, eff) + gemm_time(tokens, query / tp, h, hw, eff)
    heads = float(s.heads)
    if mla.q_lora_rank:
        query = gemm_time(tokens, h, float(mla.q_lora_rank), hw, eff)
        query = query + gemm_time(tokens, float(mla.q_lora_rank), work.qk_width / tp, hw, eff)
    else:
        query = gemm_time(tokens, h, work.qk_width / tp, hw, eff)
    latent = gemm_time(tokens, h, float(mla.kv_lora_rank + mla.qk_rope_head_dim), hw, eff)
    up = heads * (mla.qk_nope_head_dim + mla.v_head_dim) / tp
    key_value = latent + gemm_time(tokens, float(mla.kv_lora_rank), up, hw, eff)
    return query + key_value + gemm_time(tokens, work.v_width / tp, h, hw, eff)


def dense_ffn_gemms(work: Workload, hw: Hardware, eff: Efficiency, tokens, tp, width: float):
    """Forward time of an FFN of inner size `width` on every token (up or gate+up, then down), split over tp."""
    h = float(work.shape.hidden)
    up = (2.0 if work.shape.ffn_gated else 1.0) * width
    return gemm_time(tokens, h, up / tp, hw, eff) + gemm_time(tokens, width / tp, h, hw, eff)


def moe_ffn_gemms(work: Workload, hw: Hardware, eff: Efficiency, tokens, tp, ep, etp=None):
    """Forward time of one MoE layer's FFN: its routed and shared experts (`moe_ffn_parts`) together."""
    routed, shared = moe_ffn_parts(work, hw, eff, tokens, tp, ep, etp)
    return routed + shared


def moe_ffn_parts(work: Workload, hw: Hardware, eff: Efficiency, tokens, tp, ep, etp=None):
    """Forward times (routed, shared) of one MoE layer's experts: each of the experts / ep local routed experts on
    the tokens routed to it, times the slowest rank's load imbalance; the shared experts on every token. Kept
    apart because EP overlap's schedule runs the shared experts before the dispatch, with the attention.

    `etp` is the expert tensor-parallel degree (default tp). At etp = tp each expert is split over the tensor-
    parallel ranks, which all see the micro-batch's `tokens`: an expert gets tokens x active x ep / experts of
    them, at 1/tp of its width. At etp = 1 (Megatron-Core's MoE parallel folding) whole experts sit on the tensor-
    parallel ranks too, each rank dispatching its 1/tp of the tokens: tokens / tp x active x ep / experts a local
    expert, at full width. The FLOPs per GPU are the same; the GEMM shapes are not."""
    h = float(work.shape.hidden)
    width = float(work.expert_ffn_hidden)
    ep = np.asarray(ep, dtype=float)
    etp = tp if etp is None else etp
    local_experts = work.experts / ep
    routed_tokens = tokens * (etp / tp) * work.active_experts * ep / work.experts
    up = (2.0 if work.shape.ffn_gated else 1.0) * width
    per_expert = gemm_time(routed_tokens, h, up / etp, hw, eff) + gemm_time(routed_tokens, width / etp, h, hw, eff)
    routed = local_experts * per_expert * eff.moe_load_imbalance
    shared = dense_ffn_gemms(work, hw, eff, tokens, tp, work.shared_experts * width) if work.shared_experts else 0.0
    return routed, shared


def moe_permute_time(work: Workload, hw: Hardware, eff: Efficiency, tokens):
    """Forward time of one MoE layer's token permutation, HBM bound: before the experts run (and before the
    dispatch) each token is copied once per routed expert into per-expert contiguous buffers; after them (and the
    combine) the copies are read back and summed with their routing weights (Megatron-Core's `permute` /
    `unpermute`, fused in Transformer Engine; DeepSpeed-MoE and GShard do the same with capacity buffers). It runs
    in 16-bit whatever the GEMMs' precision, so an FP8 recipe speeds the expert GEMMs but not this; the backward
    moves the gradients the same way once. `tokens` are the GPU's tokens of the micro-batch (1/tp of them with
    sequence parallelism). None where the dispatch kernels place the tokens themselves
    (`Efficiency.moe_permute_in_dispatch`: their cost is the SMs they hold, `moe_dispatch_sm_fraction`)."""
    if eff.moe_permute_in_dispatch:
        return np.zeros_like(np.asarray(tokens, dtype=float))
    h, active = float(work.shape.hidden), float(work.active_experts)
    moved = tokens * h * 2.0 * (PERMUTE_COPIES_PER_ACTIVE * active + 1.0)
    return moved / (hw.hbm_bytes_s * eff.hbm) + 2.0 * eff.kernel_overhead_s


def nodes_reached(experts: float, active: int, nodes):
    """Expected number of distinct nodes a token's `active` routed experts fall on, when the experts are spread
    evenly over `nodes` nodes and drawn without repetition: nodes x (1 - P(a given node holds none of them)),
    P = prod over i < active of (experts - experts/nodes - i) / (experts - i). One node reaches one; 8 of 128
    experts over 2 nodes reach both nodes but for 2 x C(64, 8) / C(128, 8) = 0.6 % of tokens."""
    nodes = np.asarray(nodes, dtype=float)
    missed = np.ones_like(nodes)
    for i in range(active):
        missed = missed * np.clip((experts - experts / nodes - i) / (experts - i), 0.0, 1.0)
    return np.maximum(nodes * (1.0 - missed), 1.0)


def _per_node_s(tokens, h: float, element: float, nodes, reached, nvlink_s, hw: Hardware, eff: Efficiency):
    """One copy per reached node crosses the fabric (a share (nodes - 1) / nodes of them leave this node), then the
    copies for that node's experts go over its NVLink, counted after the crossing (not pipelined with it)."""
    crossing = tokens * reached * h * element * (nodes - 1.0) / nodes
    return crossing / (hw.scaleout_bytes_s * eff.scaleout) + nvlink_s


def expert_alltoall_time(work: Workload, hw: Hardware, eff: Efficiency, tokens, etp, ep, hidden: float | None = None):
    """Exposed time of one expert all-to-all (a dispatch or a combine) per MoE layer and micro-batch.

    The expert-parallel group spans ep x etp GPUs (`etp`: the expert tensor-parallel degree, tp unless the experts
    are folded over the tensor-parallel ranks). Inside the NVLink domain every copy goes over NVLink. Across
    nodes, a dispatcher that sends each token once per destination node and forwards it to that node's experts
    over NVLink (DeepEP, Megatron-Core's HybridEP: `moe_dispatch_once_per_node`, the default) puts one copy per
    node the token's experts fall on onto the scale-out fabric; node-limited routing (model.moe.node_limit) caps
    those nodes; a plain all-to-all sends one copy per routed expert, those for experts on other nodes across the
    fabric and the rest over NVLink at the same time. The exposed share is
    1 - moe_dispatch_overlap. Hiding the rest is not free: while the dispatch and combine kernels run they hold a
    share of the SMs (moe_dispatch_sm_fraction), so the computation they hide under slows by that share and each
    hidden second costs that fraction of a second of compute."""
    moe = work.shape.moe
    h, active = float(work.shape.hidden), float(work.active_experts)
    ep = np.asarray(ep, dtype=float)
    element = 1.5 if eff.fp8 else 2.0  # FP8 dispatch (1 B) with a BF16 combine (2 B), on average
    inside = ep * etp <= hw.nvlink_domain
    copies = expert_alltoall_bytes(tokens, h, active, ep, element)
    nvlink_s = copies / (hw.nvlink_bytes_s * eff.nvlink)
    nodes = np.maximum(ep * etp / hw.nvlink_domain, 1.0)
    # A plain all-to-all sends every copy to its expert's GPU at once: the (nodes - 1) / nodes of them bound for
    # other nodes cross the fabric while the rest go over NVLink.
    sent = tokens * active * h * element
    crossing = sent * (nodes - 1.0) / nodes
    alongside = sent * np.maximum(ep / nodes - 1.0, 0.0) / ep  # to the other expert ranks of this node
    plain_s = np.maximum(crossing / (hw.scaleout_bytes_s * eff.scaleout), alongside / (hw.nvlink_bytes_s * eff.nvlink))
    if moe is not None and moe.node_limit is not None:
        fabric_s = _per_node_s(tokens, h, element, nodes, np.minimum(float(min(moe.node_limit, active)), nodes),
                               nvlink_s, hw, eff)  # fmt: skip
    elif eff.moe_dispatch_once_per_node:
        # A tuned stack picks the faster dispatcher: per node pays off with many active experts per token.
        reached = nodes_reached(float(work.experts), int(work.active_experts), nodes)
        fabric_s = np.minimum(plain_s, _per_node_s(tokens, h, element, nodes, reached, nvlink_s, hw, eff))
    else:
        fabric_s = plain_s
    one = eff.collective_latency_s + np.where(inside, nvlink_s, fabric_s)
    share = exposed_dispatch_share(eff) if hidden is None else (1.0 - hidden) + eff.moe_dispatch_sm_fraction * hidden
    return np.where(ep > 1, one, 0.0) * share


def exposed_dispatch_share(eff: Efficiency) -> float:
    """What a second of all-to-all costs the step when `moe_dispatch_overlap` of it hides under compute: the
    exposed share plus the SMs the hidden share's kernels hold (`expert_alltoall_time`)."""
    hidden = eff.moe_dispatch_overlap
    return (1.0 - hidden) + eff.moe_dispatch_sm_fraction * hidden


def combined_1f1b_layer_s(attn_f, mlp_f, attn_b, mlp_b, alltoall, sm_fraction: float):
    """Seconds of one layer with the forward of one micro-batch and the backward of the one before it run
    together, as Megatron-Core's EP overlap (overlap_moe_expert_parallel_comm, the combined 1F1B schedule) runs
    them: each all-to-all of one micro-batch on a communication stream under the other's computation.

    `attn_f` / `attn_b` are the layer's work before the dispatch (attention, norms, router, shared experts) forward
    and backward, `mlp_f` / `mlp_b` the routed experts', `alltoall` one dispatch or combine. The schedule
    (megatron/core/models/common/model_chunk_schedule_plan.py, TransformerLayerSchedulePlan.run), each operation
    starting when its stream is free and its input is ready:

        communication: combine_bwd | dispatch_fwd -> dispatch_bwd | combine_fwd
        computation:   attn_fwd    | mlp_bwd -> mlp_fwd           | attn_bwd

    The experts' backward runs whole before its dispatch (mlp_bwd_dw does nothing unless delay_wgrad_compute is
    set, which NVIDIA's measured runs and most recipes leave off).

    The layer ends when both streams are done. While an all-to-all runs under computation its kernels hold a
    share of the SMs (`sm_fraction`, as for `expert_alltoall_time`), so each hidden second costs that fraction of a
    second of compute. With no all-to-all this is the forward plus the backward; with all-to-alls much longer
    than the computation it is the four of them back to back."""
    start = np.maximum(attn_f, alltoall)  # combine_bwd and attn_fwd side by side
    mlp_bwd_done = start + mlp_b
    dispatch_fwd_done = start + alltoall
    dispatch_bwd_done = np.maximum(dispatch_fwd_done, mlp_bwd_done) + alltoall
    mlp_fwd_done = np.maximum(mlp_bwd_done, dispatch_fwd_done) + mlp_f
    last_start = np.maximum(mlp_fwd_done, dispatch_bwd_done)
    end = last_start + np.maximum(alltoall, attn_b)  # combine_fwd beside attn_bwd
    compute = attn_f + mlp_f + attn_b + mlp_b
    exposed = end - compute
    return end + sm_fraction * (4.0 * alltoall - exposed)
