"""Data-parallel communication of a training step: the gradient and parameter collectives over the ranks holding
the same weights, and the part of them the backward does not hide, per ZeRO stage.

Why a module of its own: `dp_step._times` reads as the step's formula, the collectives' arithmetic lives here.
The functions work on the arrays `dp_step` gathers for a batch of candidates (numpy's per-call cost dominates on
the search's batches, so each is a few operations); every figure is the same floating-point expression, in the
same order, as when it was written inline in `_times` (the answers are bit for bit the same).
"""

from __future__ import annotations

import numpy as np

from engine.performance.roofline import Efficiency, Hardware, ring_latencies_s, ring_time

__all__ = [
    "crossing_bandwidth",
    "dp_buckets",
    "dp_collectives",
    "dp_exposed_s",
    "dp_ranks_per_system",
    "expert_collectives",
    "exposed_after_passes",
]


def dp_ranks_per_system(tp, cp, pp, dpc, gpus_per_system: float):
    """Ranks of one weight-holding group (same pipeline stage and tensor rank, `dpc` = dp x cp of them) that one
    system holds, with ranks placed tensor, context, pipeline, then data parallel (the order the pipeline's
    point-to-point term assumes: a replica's stages share a system where they fit). A system holding whole
    replicas holds gpus_per_system / (tp x pp) ranks of the group (its cp ranks in each replica); a replica larger
    than a system leaves it the cp ranks of one stage it holds; at least 1, at most the group."""
    gps = float(gpus_per_system)
    fits = tp * cp * pp <= gps
    per_system = np.where(fits, np.floor(gps / (tp * pp)), np.minimum(cp, np.floor(gps / tp)))
    return np.minimum(np.maximum(per_system, 1.0), dpc)


def dp_buckets(zero, params, dp, v, layer_chunks, eff: Efficiency):
    """Buckets (collectives) the data-parallel reduction of `params` per GPU runs in. Megatron's data-parallel
    gradient buffer (plain data parallelism and the distributed optimizer, ZeRO 0-2 here) fills buckets of at
    least `dp_bucket_min_params` parameters, growing by `dp_bucket_params_per_rank` per data-parallel rank (`dp`,
    without context parallelism), so at thousands of ranks a few large collectives pay the ring's latency rather
    than one per layer; each of the `v` virtual stages keeps a buffer of its own, so there are at least v. Fully
    sharded parameters (ZeRO-3) are gathered and reduced a layer at a time (`layer_chunks`), as FSDP wraps each
    block. The buckets follow the heaviest stage; Megatron leaves the other stages' buffers unsplit, as they have
    the pipeline's drain to hide under."""
    bucket = np.maximum(eff.dp_bucket_min_params, eff.dp_bucket_params_per_rank * dp)
    return np.where(zero <= 2, np.maximum(np.ceil(params / bucket), np.maximum(v, 1.0)), layer_chunks)


def crossing_bandwidth(nvlink: float, scaleout: float, ranks_per_system: np.ndarray) -> np.ndarray:
    """Bytes/s of a ring over ranks spread across systems, `ranks_per_system` of them in each (link efficiencies
    applied): the collective library builds one ring per channel and sends each channel across systems through a
    different GPU's NIC, so with m ranks per system the ring crosses on m NICs at once and each carries 1/m of the
    data, while the remaining (m - 1)/m of every rank's share moves on NVLink. The slower of the two sets the pace:
    min(m x NIC, NVLink x m / (m - 1)); with one rank per system (tensor parallelism filling it) it is the NIC's
    bandwidth, as before. NCCL's rail-aligned rings: NVIDIA, NCCL documentation, 'NCCL_CROSS_NIC' (rings keep
    each channel on one NIC rail); nccl-tests' bus bandwidth across DGX H100 or p5 nodes is measured against the
    node's summed NIC rate (AWS: 3,200 Gbps per p5 instance), not one NIC's."""
    m = np.maximum(ranks_per_system, 1.0)
    on_nvlink = nvlink * m / np.maximum(m - 1.0, 1e-9)
    return np.where(m > 1.0, np.minimum(m * scaleout, on_nvlink), scaleout)


def dp_collectives(
    scaleout_bytes_s: float,
    inside: np.ndarray,
    dpc: np.ndarray,
    dense: np.ndarray,
    dense_16bit: np.ndarray,
    hw: Hardware,
    eff: Efficiency,
    ranks_per_system: np.ndarray,
    chunks: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(all-reduce, reduce-scatter, all-gather) seconds of the dense gradients and 16-bit weights over the `dpc`
    ranks holding the same weights: roofline.ring_time, latency + factor x (ranks - 1) / ranks x bytes / (bandwidth
    x link efficiency), on NVLink `inside` a system, else across systems at `crossing_bandwidth` (the scale-out
    fabric, `scaleout_bytes_s` per GPU, used by every rank of the group a system holds). Each runs as `chunks`
    collectives (its buckets, `dp_buckets`), each paying the ring's latency
    (`roofline.ring_latencies_s`: one hop per step, so it grows with the group).

    The three collectives share the ring fraction and bandwidth, with fewer operations per candidate, each element
    the same figure as ring_time's expression: the bandwidth x link efficiency product is taken per branch (the same
    two factors); 2 x fraction x bytes / bandwidth is exactly 2 x (fraction x bytes / bandwidth) (doubling is exact
    in floating point); and with one rank (fraction 0) each collective is 0 + 0 = 0 rather than a `where`, as long
    as the bandwidths are positive and finite (else the plain form below)."""
    nvlink, scaleout = hw.nvlink_bytes_s * eff.nvlink, scaleout_bytes_s * eff.scaleout
    grad_bytes = dense * eff.grad_reduce_bytes_per_param
    half, reduce = ring_latencies_s(eff, dpc, np.where(inside, dpc, ranks_per_system))  # 0 for one rank
    lat_reduce, lat_half = chunks * reduce, chunks * half
    fraction = (dpc - 1.0) / np.maximum(dpc, 1.0)
    bandwidth = np.where(inside, nvlink, crossing_bandwidth(nvlink, scaleout, ranks_per_system))
    if min(nvlink, scaleout) > 0.0 and max(nvlink, scaleout) < np.inf:
        ring = fraction * grad_bytes / bandwidth
        return lat_reduce + 2.0 * ring, lat_half + ring, lat_half + fraction * dense_16bit / bandwidth
    several = dpc > 1
    return (
        np.where(several, lat_reduce + 2.0 * fraction * grad_bytes / bandwidth, 0.0),
        np.where(several, lat_half + fraction * grad_bytes / bandwidth, 0.0),
        np.where(several, lat_half + fraction * dense_16bit / bandwidth, 0.0),
    )


def expert_collectives(
    scaleout_bytes_s: float,
    inside: np.ndarray,
    edp: np.ndarray,
    experts: np.ndarray,
    experts_16bit: np.ndarray,
    hw: Hardware,
    eff: Efficiency,
    ranks_per_system: np.ndarray,
    chunks: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The expert parameters' own (all-reduce, reduce-scatter, all-gather) seconds over the `edp` ranks holding
    the same experts (roofline.ring_time; 0 where a row holds no experts), added to the dense ones; across systems
    at `crossing_bandwidth` for the expert-data-parallel ranks each system holds; `chunks` collectives each, each
    with the ring's latency, as the dense ones."""
    has_experts = experts > 0
    expert_grad_bytes = experts * eff.grad_reduce_bytes_per_param
    nvlink, scaleout = hw.nvlink_bytes_s * eff.nvlink, scaleout_bytes_s * eff.scaleout
    bw = np.where(inside, nvlink, crossing_bandwidth(nvlink, scaleout, ranks_per_system))
    half, reduce = ring_latencies_s(eff, edp, np.where(inside, edp, ranks_per_system))

    def expert_ring(bytes_: np.ndarray, factor: float) -> np.ndarray:
        lat = chunks * (reduce if factor == 2.0 else half)
        return np.where(has_experts, ring_time(bytes_, edp, factor, bw, 1.0, lat), 0.0)

    return expert_ring(expert_grad_bytes, 2.0), expert_ring(expert_grad_bytes, 1.0), expert_ring(experts_16bit, 1.0)


def exposed_after_passes(comm, last_bucket, v, pp, t_pass, overlap: float, own_pass):
    """Seconds of a once-per-step collective (`comm` over `v` virtual stages, its last bucket taking
    `last_bucket`) left exposed when each virtual stage's share starts at that stage's last pass of the step and
    runs under the passes still to come (a share `overlap` of them).

    A stage finishes its virtual stages one after another, a round of pp micro-batch passes apart, so share k (of
    v) can hide under k rounds of pp passes, plus its own last pass where the buckets go out during that pass
    (`own_pass` 1) rather than after it (0). The network takes the shares in turn, so the exposed tail is the
    largest over k of (k + 1) x comm / v - overlap x (k pp + own_pass) x t_pass; linear in k, that is the larger of
    its ends (k = 0 and k = v - 1). At least the last bucket stays exposed. Without interleaving (v = 1) it is
    comm - overlap x own_pass x t_pass."""
    first = comm / v - overlap * own_pass * t_pass
    last = comm - overlap * ((v - 1.0) * pp + own_pass) * t_pass
    return np.maximum(np.maximum(last_bucket, first), last)


def dp_exposed_s(
    zero: np.ndarray,
    m_eff: np.ndarray,
    collectives: tuple[np.ndarray, np.ndarray, np.ndarray],
    last_buckets: tuple[np.ndarray, np.ndarray, np.ndarray],
    v: np.ndarray,
    pp: np.ndarray,
    t_stage: np.ndarray,
    backward_share: np.ndarray,
    eff: Efficiency,
    t_ends: np.ndarray | None = None,
) -> np.ndarray:
    """The data-parallel communication the passes do not hide, per ZeRO stage, as Megatron-Core overlaps it
    (overlap_grad_reduce, overlap_param_gather). `collectives` are the step's (all-reduce, reduce-scatter,
    all-gather) seconds and `last_buckets` the seconds of each one's last bucket (`dp_buckets`; dense and expert
    parameters fill buckets of their own, and the slower last bucket of the two counts).

    - ZeRO-0 all-reduces the gradients once per step under the backward's last passes; ZeRO-1 (the distributed
      optimizer) reduce-scatters them there and all-gathers the updated weights under the next step's first
      forward passes (`exposed_after_passes`).
    - With interleaving a virtual stage's reduction starts only once its last backward is done (the default
      aligned reduction), so it hides under the later stages' passes, not its own; without interleaving the
      buckets go out during the last micro-batch's backward. The weight gather always runs a bucket ahead of the
      forward that needs it; without interleaving each pipeline stage starts its own first bucket only when its
      first forward needs it (Megatron does not align the gather across stages then), so the pipeline's fill
      waits for one bucket at every stage.
    - ZeRO-2 reduce-scatters every micro-batch under that micro-batch's backward: never less exposed than ZeRO-1,
      whose reduction is its last micro-batch's, and more once a micro-batch's reduction outlasts its backward;
      it gathers the weights once, as ZeRO-1. ZeRO-3 also all-gathers the parameters for forward and backward of
      every micro-batch, overlapped with its compute, and cannot hide the first bucket's gather.

    The passes are timed on the slowest stage: its backward is `backward_share` of its time per micro-batch (two
    thirds without recompute, about three quarters when the backward replays the forward), the forward the rest. The
    once-per-step collectives hide under the step's last backward and first forward passes, timed at `t_ends`
    (default `t_stage`): with EP overlap those run unpaired, longer than the paired passes the per-micro-batch
    ZeRO-2 and ZeRO-3 collectives hide under."""
    all_reduce, reduce_scatter, gather = collectives
    last_all_reduce, last_reduce_scatter, last_gather = last_buckets
    t_ends = t_stage if t_ends is None else t_ends  # the step's last and first passes (unpaired under EP overlap)
    backward_pass = t_ends * backward_share / v
    forward_pass = t_ends * (1.0 - backward_share) / v
    hide = eff.dp_overlap
    during_last_backward = np.where(v > 1.0, 0.0, 1.0)  # the aligned reduction waits for an interleaved stage's end
    exposed_z0 = exposed_after_passes(all_reduce, last_all_reduce, v, pp, backward_pass, hide, during_last_backward)
    exposed_gather = exposed_after_passes(gather, last_gather, v, pp, forward_pass, hide, 1.0)
    # Without interleaving the gather is not aligned across stages: each stage starts its first bucket only when
    # its first forward needs it, so the pipeline's fill waits for one bucket at every stage after the first.
    exposed_gather = exposed_gather + np.where((v <= 1.0) & (pp > 1.0), (pp - 1.0) * last_gather, 0.0)
    exposed_reduce = exposed_after_passes(
        reduce_scatter, last_reduce_scatter, v, pp, backward_pass, hide, during_last_backward
    )
    exposed_once = np.where(zero == 1, exposed_reduce + exposed_gather, exposed_z0)
    hidden = hide * t_stage * backward_share
    exposed_z2 = np.maximum(exposed_reduce, m_eff * (reduce_scatter - hidden)) + exposed_gather
    exposed_z3 = m_eff * np.maximum(last_gather + last_reduce_scatter, 2.0 * gather + reduce_scatter - hide * t_stage)
    return np.where(zero == 3, exposed_z3, np.where(zero == 2, exposed_z2, exposed_once))
