"""The hardware side of the training step-time model: what one GEMM, ring collective or expert all-to-all costs
on a GPU, and the catalog figures and calibrated efficiency constants those costs are computed from.

Kept apart from `step_time` (which adds up a layer, a pipeline stage and a step from these) so the roofline
primitives and their constants can be read, tested and calibrated on their own. All functions work on numpy
arrays (scalars broadcast).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Gpu, System
from engine.performance.memory import GIB

__all__ = [
    "RECOMPUTE_CODES",
    "RECOMPUTE_NAMES",
    "Efficiency",
    "Hardware",
    "attention_head_speed",
    "efficiency_for",
    "expert_alltoall_bytes",
    "gemm_time",
    "hardware_for",
    "ring_latencies_s",
    "ring_time",
    "tile_efficiency",
]

# Recompute modes as array codes: 0 none, 1 selective (attention core only), 2 full (whole layer forward).
RECOMPUTE_CODES = {"none": 0, "selective": 1, "full": 2}
RECOMPUTE_NAMES = {v: k for k, v in RECOMPUTE_CODES.items()}
# Element-wise HBM traffic per token per layer in the forward pass, in units of hidden: two norms (read + write
# 2 B each = 4h each) and two residual adds (read 2 x 2 B, write 2 B = 6h each): 8h + 12h = 20h.
ELEMENTWISE_BYTES_PER_HIDDEN = 20.0
# Non-flash attention: a fused scale-mask-softmax reads and writes each score (2 + 2 B per score element in the
# forward pass); attention dropout, where the model trains with it, reads, writes and keeps a 1-byte mask (2 + 2 + 1).
SOFTMAX_BYTES_PER_SCORE = 4.0
DROPOUT_BYTES_PER_SCORE = 5.0
# Element-wise kernels launched per layer and forward pass (norms, residuals, activation, dropouts, rotary).
ELEMENTWISE_KERNELS_PER_LAYER = 7.0
# FlashAttention's backward is about 2.5x its forward (it recomputes the scores): FlashAttention-2 paper, section 3.
FLASH_BACKWARD_RATIO = 2.5
# Keys a fused attention kernel reads per tile: FlashAttention-2 tunes blocks of 64-128 queries by 64-128 keys by
# head size (Dao 2023, arXiv 2307.08691), FlashAttention-3 runs 128-key blocks at head sizes 64-128 (Shah et al.
# 2024, arXiv 2407.08608), so a sliding window costs whole 128-key blocks, not its exact positions.
FLASH_KEY_BLOCK_TOKENS = 128
# Expert dispatch and combine move 16-bit (bf16) activations, like the TP collectives and pipeline sends.
EXPERT_ALLTOALL_BYTES_PER_ELEMENT = 2.0
# Casting a 16-bit activation to FP8: Transformer Engine fuses the cast and its amax into the kernel that produces
# the activation (LayerNormLinear, LayerNormMLP, the fused activation-cast kernels), so what remains is writing the
# FP8 copy beside the 16-bit one: 1 B per element.
FP8_CAST_BYTES_PER_ELEMENT = 1.0
# Optimizer step traffic per parameter it updates: read bf16 grad 2 + fp32 master/m/v 12, write 12 + bf16 weight 2.
OPTIMIZER_BYTES_PER_PARAM = 28.0


@dataclass(frozen=True)
class Hardware:
    """The catalog figures the step model needs, in SI units (FLOP/s, bytes/s, bytes)."""

    gemm_peak_flops: float  # dense peak at the training precision (GEMMs run in it)
    bf16_peak_flops: float  # attention and element-wise work stay in 16-bit
    hbm_bytes_s: float
    hbm_bytes: float
    nvlink_bytes_s: float  # per GPU and direction
    scaleout_bytes_s: float  # per GPU and direction (compute NICs / GPUs)
    nvlink_domain: int
    gpus_per_system: int
    sm_count: int = 0  # streaming multiprocessors (0: unknown, no wave quantisation)


@dataclass(frozen=True)
class Efficiency:
    """Resolved efficiency constants (named assumptions) for one GPU generation."""

    gemm: float  # fraction of peak a large GEMM reaches
    attention_ratio: float  # flash attention speed relative to a GEMM of the same FLOPs
    attention_head64_ratio: float  # fused attention with 64-wide heads relative to 128-wide (`attention_head_speed`)
    hbm: float
    nvlink: float
    scaleout: float
    kernel_overhead_s: float
    collective_latency_s: float
    dp_overlap: float
    flash_attention: bool
    sequence_parallel: bool
    reserve_fraction: float
    grad_reduce_bytes_per_param: float
    tile_rows: float = 0.0  # GEMM output tile (rows x cols) one SM computes; 0 = no wave quantisation
    tile_cols: float = 0.0
    fp8: bool = False  # the training precision is FP8 (expert dispatch can move 1-byte activations)
    moe_dispatch_overlap: float = 0.0  # share of expert all-to-all time hidden behind compute
    moe_dispatch_sm_fraction: float = 0.0  # share of the SMs the dispatch kernels hold while hidden under compute
    ep_overlap_realised: float = 1.0  # share of the combined 1F1B schedule's saving a run realises (EP overlap)
    moe_permute_in_dispatch: bool = False  # the dispatch kernels place tokens for the experts: no permute pass
    moe_dispatch_once_per_node: bool = True  # cross-node dispatch sends a token once per node, then NVLink
    moe_load_imbalance: float = 1.0  # slowest expert-parallel rank's expert work over the mean
    tp_overlap: float = 0.0  # share of NVLink tensor-parallel collective time hidden under the layer's GEMMs
    # Latency of each step of a ring collective (`ring_latencies_s`), by the link the step crosses; 0: a flat
    # `collective_latency_s` per collective, whatever its size.
    ring_step_nvlink_s: float = 0.0
    ring_step_network_s: float = 0.0
    # Parameters in one bucket of the data-parallel gradient reduction (`dp_comm.dp_buckets`): at least the
    # minimum, growing with the ranks so the ring's latency, which grows with them too, stays amortised. The
    # defaults are Megatron-LM's, as the assumptions dp_bucket_min_params and dp_bucket_params_per_rank carry them.
    dp_bucket_min_params: float = 40e6
    dp_bucket_params_per_rank: float = 1e6


def hardware_for(gpu: Gpu, system: System, precision: str) -> Hardware:
    """Catalog GPU + system -> the step model's hardware figures."""
    peak = gpu.dense_tflops(precision)
    if peak is None:
        raise ValueError(f"{gpu.id} has no {precision} tensor cores")
    return Hardware(
        gemm_peak_flops=peak * 1e12,
        bf16_peak_flops=gpu.bf16_dense_tflops * 1e12,
        hbm_bytes_s=gpu.hbm_tbps * 1e12,
        hbm_bytes=gpu.hbm_gib * GIB,
        nvlink_bytes_s=gpu.scaleup_gbyte_s / 2.0 * 1e9,
        scaleout_bytes_s=system.scaleout_gbyte_s_per_gpu * 1e9,
        nvlink_domain=system.nvlink_domain_gpus,
        gpus_per_system=system.gpus_per_system,
        sm_count=gpu.sm_count or 0,
    )


# Scale-out fabric kinds whose collectives reach a different share of line rate than InfiniBand (the base).
NETWORK_EFFICIENCY_RATIOS = {"roce": "roce_efficiency_ratio", "efa": "efa_efficiency_ratio"}


def efficiency_for(gpu: Gpu, precision: str, a: Assumptions, network: str = "infiniband") -> Efficiency:
    """Read the generation's calibrated constants and the global ones from the assumptions; the scale-out
    efficiency is InfiniBand's times the fabric kind's ratio (RoCE, a cloud's EFA)."""
    gemm = a[f"gemm_efficiency_{gpu.generation}"]
    scaleout = a["scaleout_efficiency"]
    if network in NETWORK_EFFICIENCY_RATIOS:
        scaleout *= a[NETWORK_EFFICIENCY_RATIOS[network]]
    if precision == "fp8":
        gemm *= a["fp8_gemm_efficiency_ratio"]
    return Efficiency(
        gemm=gemm,
        attention_ratio=a["flash_attention_efficiency_ratio"],
        attention_head64_ratio=a[f"flash_attention_head64_ratio_{gpu.generation}"],
        hbm=a["hbm_efficiency"],
        nvlink=a["nvlink_efficiency"],
        scaleout=scaleout,
        kernel_overhead_s=a["kernel_overhead_us"] * 1e-6,
        collective_latency_s=a["collective_latency_us"] * 1e-6,
        dp_overlap=a["dp_overlap_fraction"],
        flash_attention=bool(a["flash_attention"]),
        sequence_parallel=bool(a["sequence_parallel"]),
        reserve_fraction=a["training_memory_reserve_fraction"],
        grad_reduce_bytes_per_param=a["grad_reduce_bytes_per_param"],
        tile_rows=a["gemm_tile_rows"],
        tile_cols=a["gemm_tile_cols"],
        fp8=precision == "fp8",
        moe_dispatch_overlap=a["moe_dispatch_overlap"],
        moe_dispatch_sm_fraction=a["moe_dispatch_sm_fraction"],
        ep_overlap_realised=a["ep_overlap_realised"],
        moe_permute_in_dispatch=bool(a["moe_permute_in_dispatch"]),
        moe_dispatch_once_per_node=bool(a["moe_dispatch_once_per_node"]),
        moe_load_imbalance=a["moe_load_imbalance"],
        tp_overlap=a["tp_comm_overlap_fraction"],
        ring_step_nvlink_s=a["ring_step_latency_us_nvlink"] * 1e-6,
        ring_step_network_s=a["ring_step_latency_us_network"] * 1e-6,
        dp_bucket_min_params=a["dp_bucket_min_params"],
        dp_bucket_params_per_rank=a["dp_bucket_params_per_rank"],
    )


def tile_efficiency(m, n, sm_count: int, tile_rows: float, tile_cols: float):
    """Share of the SMs' tile slots that do useful work for an m x n GEMM output (1 when unknown).

    A GEMM kernel cuts its output into tiles, one per SM at a time, and runs them in waves of `sm_count` tiles: a
    last wave that fills only some SMs leaves the rest idle (wave quantisation), and edge tiles that overhang the
    matrix compute padding. Efficiency = useful elements / (waves x SMs x tile elements). NVIDIA's 'Matrix
    Multiplication Background User's Guide' (Deep Learning Performance documentation) describes both effects; large
    GEMMs run many waves and lose little, TP-sliced and small-model GEMMs lose more.
    """
    if sm_count <= 0 or tile_rows <= 0 or tile_cols <= 0:
        return 1.0
    best = 0.0
    shapes = ((tile_rows, tile_cols), (tile_cols, tile_rows), (tile_rows, tile_cols / 2), (tile_rows / 2, tile_cols))
    for r, c in shapes:  # the best of the shapes a library heuristic would pick from
        waves = np.ceil(np.ceil(m / r) * np.ceil(n / c) / sm_count)
        best = np.maximum(best, (m * n) / (waves * sm_count * r * c))
    return best


def attention_head_speed(head_dim: float, eff: Efficiency) -> float:
    """Fused attention's speed at this head size relative to its speed with 128-wide heads.

    Why: a fused kernel loads a tile of keys and values once per block of queries and does head_dim's worth of
    multiply-adds on it, so narrower heads do less work per byte moved and per synchronisation and reach less of the
    peak (FlashAttention-3's Figure 5: 64-wide heads at 0.67-0.76 of 128-wide on Hopper). Heads between 64 and 128
    wide are interpolated linearly; wider ones get no credit (FlashAttention-3 runs 256-wide heads faster, cuDNN
    slower), narrower ones none beyond the 64-wide figure (no published measurement)."""
    share = min(max((float(head_dim) - 64.0) / 64.0, 0.0), 1.0)
    return eff.attention_head64_ratio + (1.0 - eff.attention_head64_ratio) * share


def gemm_time(m: np.ndarray, k: np.ndarray, n: np.ndarray, hw: Hardware, eff: Efficiency) -> np.ndarray:
    """Roofline of one (m x k) @ (k x n) GEMM: max(compute at the efficient fraction, operand traffic).

    The compute side runs at the large-GEMM efficiency times the tile efficiency of its output shape
    (`tile_efficiency`); a fixed kernel overhead is added, so small GEMMs reach a smaller fraction of peak.
    In FP8 the two inputs are 1-byte and the output stays 16-bit, and the activation input is first written as
    an FP8 copy (`FP8_CAST_BYTES_PER_ELEMENT`, fused into the kernel that produced it): traffic the GEMM cannot
    hide, so FP8 gains least on small, memory-bound GEMMs (Micikevicius et al. 2022, 'FP8 Formats for Deep
    Learning', arXiv 2209.05433; NVIDIA Transformer Engine documentation, 'Using FP8 with Transformer Engine').
    """
    flops = 2.0 * m * k * n
    tiles = tile_efficiency(m, n, hw.sm_count, eff.tile_rows, eff.tile_cols)
    compute = flops / (hw.gemm_peak_flops * eff.gemm * tiles)
    hbm = hw.hbm_bytes_s * eff.hbm
    if eff.fp8:
        memory = (m * k + k * n + 2.0 * m * n) / hbm
        cast = FP8_CAST_BYTES_PER_ELEMENT * m * k / hbm
        return np.maximum(compute, memory) + eff.kernel_overhead_s + cast
    memory = 2.0 * (m * k + k * n + m * n) / hbm
    return np.maximum(compute, memory) + eff.kernel_overhead_s


def ring_latencies_s(eff: Efficiency, ranks, ranks_per_node) -> tuple[np.ndarray, np.ndarray]:
    """Latency of one (all-gather or reduce-scatter, all-reduce) over `ranks` GPUs, `ranks_per_node` of them in
    each system: a fixed start plus one hop per step. An all-gather or reduce-scatter takes ranks - 1 steps, of
    which nodes - 1 cross the network; an all-reduce's ring twice as many, or, where fewer, a tree's
    2 x (ranks per node - 1) hops on NVLink and 2 x log2(nodes) on the network (the collective library picks the
    faster). NCCL's own tuning model (src/graph/tuning.cc, `latencies`): base + (steps - network steps) x NVLink
    hop + network steps x network hop. 0 for one rank. Callers pass 1 <= ranks_per_node <= ranks (the ranks of
    the group one system holds)."""
    ranks = np.asarray(ranks, dtype=float)
    per_node = np.asarray(ranks_per_node, dtype=float)
    nodes = np.ceil(ranks / per_node)
    hop, net, base = eff.ring_step_nvlink_s, eff.ring_step_network_s, eff.collective_latency_s
    hops = (ranks - nodes) * hop + (nodes - 1.0) * net  # one pass round the ring
    tree = base + 2.0 * ((per_node - 1.0) * hop + np.log2(nodes) * net)
    several = ranks > 1
    return np.where(several, base + hops, 0.0), np.where(several, np.minimum(base + 2.0 * hops, tree), 0.0)


def ring_time(bytes_: np.ndarray, ranks: np.ndarray, factor: float, bw: np.ndarray, eff: float, lat):
    """Ring collective: latency + factor x (ranks - 1) / ranks x bytes / (bandwidth x efficiency); 0 for 1 rank.
    `lat` is a number or one per row (`ring_latencies_s`).

    factor 2 is an all-reduce (reduce-scatter + all-gather), 1 an all-gather or a reduce-scatter.
    """
    ranks = np.asarray(ranks, dtype=float)
    t = lat + factor * (ranks - 1.0) / np.maximum(ranks, 1.0) * bytes_ / (bw * eff)
    return np.where(ranks > 1, t, 0.0)


def expert_alltoall_bytes(tokens, hidden: float, active: float, ep, bytes_per_element: float = 2.0):
    """Bytes one GPU sends (and receives) in one expert all-to-all (a dispatch or a combine) of a MoE layer.

    Each of the GPU's `tokens` goes to `active` experts as a `hidden`-wide vector, and the experts are spread
    evenly over the `ep` GPUs of the expert-parallel group, so (ep - 1) / ep of the copies leave the GPU:
    tokens x active x hidden x bytes x (ep - 1) / ep. The top-k factor is real: Megatron-Core's all-to-all token
    dispatcher and GShard/DeepSpeed-MoE's capacity buffers both send one copy per (token, expert) pair. 0 at ep = 1.
    `bytes_per_element` is 2 for 16-bit activations, 1.5 on average for an FP8 dispatch with a BF16 combine.
    """
    ep = np.asarray(ep, dtype=float)
    return tokens * active * hidden * bytes_per_element * (ep - 1.0) / ep
