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

__all__ = ["crossing_bandwidth", "dp_collectives", "dp_exposed_s", "dp_ranks_per_system", "expert_collectives"]


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
    collectives (a layer or a virtual stage each, `dp_exposed_s`), each paying the ring's latency
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


def dp_exposed_s(
    zero: np.ndarray,
    m_eff: np.ndarray,
    all_reduce: np.ndarray,
    reduce_scatter: np.ndarray,
    gather: np.ndarray,
    chunks: np.ndarray,
    backward_last: np.ndarray,
    t_stage: np.ndarray,
    eff: Efficiency,
) -> np.ndarray:
    """The data-parallel communication the backward does not hide, per ZeRO stage: ZeRO-0/1 all-reduce once per
    step, overlapped with the last micro-batch's backward; ZeRO-2 reduce-scatters every micro-batch; ZeRO-3 also
    all-gathers the parameters for forward and backward of every micro-batch, overlapped with its compute.

    The reduction runs in chunks (a layer each; with pipelining, a virtual stage's layers each) that start as the
    backward produces them, so at least the last chunk is exposed (Megatron Bridge, 'Communication Overlap');
    ZeRO-3 likewise cannot hide the first chunk's parameter gather."""
    hidden = eff.dp_overlap * backward_last
    exposed_once = np.maximum(all_reduce / chunks, all_reduce - hidden)
    exposed_z2 = m_eff * np.maximum(reduce_scatter / chunks, reduce_scatter - hidden) + gather
    hide = eff.dp_overlap
    exposed_z3 = m_eff * np.maximum((gather + reduce_scatter) / chunks, 2.0 * gather + reduce_scatter - hide * t_stage)
    return np.where(zero == 3, exposed_z3, np.where(zero == 2, exposed_z2, exposed_once))
