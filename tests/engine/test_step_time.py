"""Step-time and memory model: hand-derived properties of the roofline, bubble, recompute and ZeRO accounting."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.assumptions.registry import Assumptions
from engine.performance.step_time import efficiency_for, hardware_for, layout_costs, step_costs
from engine.workload.model import analyse_model


@pytest.fixture
def setup(catalog, shape_of):
    system = catalog.systems["dgx-h100"]
    gpu = catalog.gpu_of(system)
    work = analyse_model(shape_of("llama-3-70b"))
    return work, hardware_for(gpu, system, "bf16"), efficiency_for(gpu, "bf16", Assumptions())


def _one(work, hw, eff, tp, pp, mb, v, rc):
    return layout_costs(work, hw, eff, np.array([tp]), np.array([pp]), np.array([mb]), np.array([v]), np.array([rc]))


def test_bubble_is_pp_minus_1_over_v_body_stages(setup):
    work, hw, eff = setup
    for v in (1, 2, 5):
        lay = _one(work, hw, eff, 8, 8, 1, v, 1)
        c = step_costs(lay, np.array([0]), np.array([4]), np.array([1]), 512, 8192, hw, eff)
        # Narayanan 2021: bubble = (p - 1) / v of one micro-batch through a stage.
        assert c.bubble_time_s[0] == pytest.approx(7 / v * lay.body_stage_time_s[0])
        assert c.micro_batches[0] == 512 // (4 * 1)


def test_recompute_costs_order_and_full_is_about_a_third_more(setup):
    work, hw, eff = setup
    none, sel, full = (_one(work, hw, eff, 8, 1, 1, 1, rc).body_stage_time_s[0] for rc in (0, 1, 2))
    assert none <= sel < full
    # Full recompute replays the forward: about (3 + 1) / 3 of the work without it.
    assert 1.2 < full / none < 1.45


def test_sixteen_bytes_per_param_without_sharding_and_zero3_divides_by_dp(catalog, shape_of):
    system = catalog.systems["dgx-h100"]
    gpu = catalog.gpu_of(system)
    work = analyse_model(shape_of("llama-3-8b"))
    hw, eff = hardware_for(gpu, system, "bf16"), efficiency_for(gpu, "bf16", Assumptions())
    lay = _one(work, hw, eff, 1, 1, 1, 1, 2)
    params = work.params  # tp = pp = 1: one GPU holds everything
    assert lay.params_per_gpu[0] == pytest.approx(params)
    z0 = step_costs(lay, np.array([0]), np.array([8]), np.array([0]), 64, 8192, hw, eff)
    state0 = z0.weights_bytes[0] + z0.gradients_bytes[0] + z0.optimizer_bytes[0]
    assert state0 == pytest.approx(16 * params)  # 2 + 2 + 12 (ZeRO paper)
    z1 = step_costs(lay, np.array([0]), np.array([8]), np.array([1]), 64, 8192, hw, eff)
    assert z1.weights_bytes[0] + z1.gradients_bytes[0] + z1.optimizer_bytes[0] == pytest.approx((4 + 12 / 8) * params)
    z2 = step_costs(lay, np.array([0]), np.array([8]), np.array([2]), 64, 8192, hw, eff)
    assert z2.weights_bytes[0] + z2.gradients_bytes[0] + z2.optimizer_bytes[0] == pytest.approx((2 + 14 / 8) * params)


def test_tensor_parallel_comm_grows_as_hidden_shrinks(setup, shape_of):
    work, hw, eff = setup
    small = analyse_model(shape_of("llama-3-8b"))
    big_share = _one(work, hw, eff, 8, 1, 1, 1, 1)
    small_share = _one(small, hw, eff, 8, 1, 1, 1, 1)
    ratio_big = big_share.tp_comm_time_s[0] / big_share.body_stage_time_s[0]
    ratio_small = small_share.tp_comm_time_s[0] / small_share.body_stage_time_s[0]
    # Compute per layer grows with h^2, TP traffic with h: narrower models spend a larger share communicating.
    assert ratio_small > ratio_big > 0


def test_roofline_primitives_by_hand(setup):
    """engine.performance.roofline: a large square GEMM is compute bound, a ring over one rank costs nothing,
    an 8-rank all-reduce moves 2 x 7/8 of the bytes."""
    from engine.performance.roofline import gemm_time, ring_time

    _work, hw, eff = setup
    n = 8192.0
    compute_s = 2.0 * n**3 / (hw.gemm_peak_flops * eff.gemm)  # 2 n^3 FLOPs at the efficient fraction of peak
    memory_s = 2.0 * 3.0 * n * n / (hw.hbm_bytes_s * eff.hbm)  # three 16-bit n x n operands
    assert compute_s > memory_s
    assert gemm_time(n, n, n, hw, eff) == pytest.approx(compute_s + eff.kernel_overhead_s, rel=1e-12)
    assert ring_time(np.array([1e9]), np.array([1.0]), 2.0, 1e11, 0.5, 1e-5)[0] == 0.0
    expected = 1e-5 + 2.0 * 7.0 / 8.0 * 1e9 / (1e11 * 0.5)
    assert ring_time(np.array([1e9]), np.array([8.0]), 2.0, 1e11, 0.5, 1e-5)[0] == pytest.approx(expected, rel=1e-12)


def test_tile_efficiency_by_hand(setup):
    """Wave quantisation (NVIDIA 'Matrix Multiplication Background User's Guide'), best of four tile shapes.

    4096 x 4096 on 132 SMs: 128 x 256 gives 32 x 16 = 512 tiles in ceil(512 / 132) = 4 waves of 132 = 528 slots,
    512 / 528 = 96.97 %; the other shapes give 1024 tiles in 8 waves (1056 slots): the same 96.97 %.
    8192 x 1280 (a TP-8 QKV slice of a 70B model): 128 x 256 gives 64 x 5 = 320 tiles, 3 waves = 396 slots, 80.8 %,
    but 128 x 128 gives 640 tiles in 5 waves = 660 slots, 96.97 %: the heuristic picks the better one.
    """
    import dataclasses

    from engine.performance.roofline import gemm_time, tile_efficiency

    assert float(tile_efficiency(4096.0, 4096.0, 132, 128, 256)) == pytest.approx(512 / 528, rel=1e-12)
    assert float(tile_efficiency(8192.0, 1280.0, 132, 128, 256)) == pytest.approx(640 / 660, rel=1e-12)
    assert float(tile_efficiency(8192.0, 1280.0, 0, 128, 256)) == 1.0  # SM count unknown: no quantisation
    # A 100 x 100 output fills one 128 x 128 tile on one SM of 132: 10,000 / (132 x 128 x 128).
    assert float(tile_efficiency(100.0, 100.0, 132, 128, 256)) == pytest.approx(1e4 / (132 * 128 * 128), rel=1e-12)
    # Switched on, a compute-bound GEMM takes 1 / tile efficiency as long (before the kernel overhead).
    _work, hw, eff = setup
    tiled = dataclasses.replace(eff, tile_rows=128.0, tile_cols=256.0)
    base = gemm_time(8192.0, 8192.0, 1280.0, hw, eff) - eff.kernel_overhead_s
    slow = gemm_time(8192.0, 8192.0, 1280.0, hw, tiled) - eff.kernel_overhead_s
    assert hw.sm_count == 132 and slow == pytest.approx(base * 660 / 640, rel=1e-12)


def test_tp_overlap_hides_its_share_of_the_nvlink_collectives_by_hand(catalog, setup):
    """Llama 3 70B, TP8 on one DGX H100, one 8,192-token sequence: each layer's forward has two all-gather /
    reduce-scatter pairs = two all-reduce volumes of 2 B x tokens x hidden over NVLink; with overlap 0.7 the
    exposed time is 0.3 of it (the layer's GEMMs take far longer than the collectives, so the cap does not bind)."""
    work, hw, _ = setup
    gpu = catalog.gpu_of(catalog.systems["dgx-h100"])
    tokens, hidden, tp = 8192.0, 8192.0, 8.0
    nvlink_bytes_s = 900e9 / 2  # H100 NVLink 4: 900 GB/s both directions
    # With sequence parallelism each all-reduce volume is an all-gather and a reduce-scatter, each a 10 us start
    # plus 8 - 1 NVLink steps of 3.4 us (NCCL's ring on one node): 2 x 33.8 = 67.6 us.
    lat = 2 * (10e-6 + 7 * 3.4e-6)
    one_all_reduce = lat + 2.0 * (tp - 1) / tp * (2.0 * tokens * hidden) / (nvlink_bytes_s * 0.75)
    exposed = {}
    for share in (0.0, 0.7):
        eff = efficiency_for(gpu, "bf16", Assumptions(overrides={"tp_comm_overlap_fraction": share}))
        lay = _one(work, hw, eff, 8, 1, 1, 1, 0)
        exposed[share] = lay.tp_comm_time_s[0]
    layers, passes = 80, 2  # forward + backward each pay the forward's collectives once
    assert exposed[0.0] == pytest.approx(layers * passes * 2 * one_all_reduce, rel=1e-3)
    assert exposed[0.7] == pytest.approx(0.3 * exposed[0.0], rel=1e-9)


def test_dp_reduction_hides_under_the_passes_still_to_come_by_hand(setup):
    """Megatron-Core's distributed optimizer (ZeRO-1) reduce-scatters the gradients bucket by bucket (a layer each)
    and all-gathers the updated weights under the next step's first forward passes (overlap_grad_reduce,
    overlap_param_gather). Without interleaving the buckets go out during the last micro-batch's backward; with
    v virtual stages the aligned reduction of each starts once its last backward is done, a round of pp passes
    after the one before, so the last share hides under (v - 1) pp passes and the first not at all. The weight
    gather runs a bucket ahead of the forward, so each share also hides under its own first pass. Each bucket is
    a collective of its own: over 4 ranks on 4 systems NCCL's ring reduce-scatter (or all-gather) takes 10 us +
    3 network steps of 14 us = 52 us."""
    work, hw, eff = setup
    dp, pp, overlap = 4.0, 8.0, 0.8  # dp_overlap_fraction's default
    for v in (1, 5):
        lay = _one(work, hw, eff, 8, 8, 1, v, 1)
        c = step_costs(lay, np.array([0]), np.array([dp]), np.array([1]), 512, 8192, hw, eff)
        params = float(lay.params_per_gpu[0])  # the heaviest stage's GPU
        buckets = math.ceil(params / 40e6)  # Megatron's max(40M, 1M x 4 ranks) parameters a bucket
        # 10 of Llama 3 70B's layers (856M parameters each) and the 1.05B embedding, over TP8: 1.2B, 31 buckets
        assert buckets == math.ceil((10 * 856e6 + 1.05e9) / 8 / 40e6) == 31
        weights = params * 2.0  # BF16 gradients (and weights)
        half = buckets * 52e-6 + (dp - 1) / dp * weights / (50e9 * 0.8)  # 4 systems' NICs, 50 GB/s, 0.8
        t_stage = float(lay.stage_time_s[0])
        share = float(lay.backward_share[0])  # the stage's backward share (its own test below)
        backward, forward = share * t_stage / v, (1.0 - share) * t_stage / v
        own = 1.0 if v == 1 else 0.0  # buckets leave during the last backward only without interleaving
        reduce_scatter = max(half / buckets, half / v - overlap * own * backward,
                             half - overlap * ((v - 1) * pp + own) * backward)  # fmt: skip
        gather = max(half / buckets, half / v - overlap * forward, half - overlap * ((v - 1) * pp + 1) * forward)
        if v == 1:  # unaligned: the fill waits for the first bucket at each of the 7 later stages
            gather += (pp - 1) * half / buckets
        assert c.dp_exposed_time_s[0] == pytest.approx(reduce_scatter + gather, rel=1e-9)
        assert c.dp_exposed_time_s[0] >= 2.0 * half / buckets * (1 - 1e-9)  # the last bucket of each
        if v == 5:
            assert c.dp_exposed_time_s[0] >= half / 5  # the first finished share of the reduction cannot hide


def test_fp8_gemm_moves_one_byte_operands_plus_the_cast_copy_by_hand(catalog):
    """A memory-bound GEMM (8 tokens x 8192 x 8192 on an H100): in BF16 it moves 2 B per element of A, B and C;
    in FP8 1 B for A and B, 2 B for C, plus the 1-byte FP8 copy of A written before it."""
    from engine.performance.roofline import gemm_time

    system = catalog.systems["dgx-h100"]
    gpu = catalog.gpu_of(system)
    m, k, n = 8.0, 8192.0, 8192.0
    hbm = 3.35e12 * 0.8  # H100 SXM HBM3, hbm_efficiency default
    overhead = 4e-6  # kernel_overhead_us default
    times = {}
    for precision in ("bf16", "fp8"):
        hw = hardware_for(gpu, system, precision)
        eff = efficiency_for(gpu, precision, Assumptions())
        times[precision] = float(gemm_time(np.array(m), np.array(k), np.array(n), hw, eff))
    assert times["bf16"] == pytest.approx(2.0 * (m * k + k * n + m * n) / hbm + overhead, rel=1e-9)
    assert times["fp8"] == pytest.approx((m * k + k * n + 2.0 * m * n) / hbm + m * k / hbm + overhead, rel=1e-9)


def test_pipeline_send_inside_the_nvlink_domain_runs_at_nvlink_efficiency(setup):
    """Llama 3 70B, tp 2 x pp 4 = 8 GPUs: every stage boundary is inside the DGX H100's NVLink domain. Per
    micro-batch and virtual stage: activations forward and gradients backward, each 2 B x 8,192 tokens x 8,192
    hidden / tp 2 over 450 GB/s NVLink x nvlink_efficiency 0.75, plus the collective latency; a 2 x 16 = 32-GPU
    stage group crosses systems and runs at the NIC's 50 GB/s x scaleout_efficiency 0.8."""
    work, hw, eff = setup
    tokens, hidden = 8192.0, 8192.0
    inside = _one(work, hw, eff, 2, 4, 1, 1, 1).p2p_time_s[0]
    one = eff.collective_latency_s + 2.0 * tokens * hidden / 2 / (450e9 * 0.75)
    assert inside == pytest.approx(2.0 * one)
    across = _one(work, hw, eff, 2, 16, 1, 1, 1).p2p_time_s[0]
    one = eff.collective_latency_s + 2.0 * tokens * hidden / 2 / (50e9 * 0.8)
    assert across == pytest.approx(2.0 * one)


def _queue_tail_s(comm: float, v: int, pp: int, t_pass: float, own_pass: int) -> float:
    """Event by event: virtual stage k's share (comm / v) becomes ready k rounds of pp passes after the first (one
    pass earlier where its buckets go out during its own last pass), the network sends the shares one after
    another, and the stage's compute ends (v - 1) pp + own_pass passes after the first share was ready. Returns
    the network's time past that end."""
    network_free = 0.0
    for k in range(v):
        ready = k * pp * t_pass
        network_free = max(network_free, ready) + comm / v
    return max(network_free - ((v - 1) * pp + own_pass) * t_pass, 0.0)


@pytest.mark.parametrize("v", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("pp", [2, 4, 16])
@pytest.mark.parametrize("t_pass", [0.001, 0.01, 0.05])
@pytest.mark.parametrize("own_pass", [0, 1])
def test_exposed_tail_matches_an_event_by_event_queue(v, pp, t_pass, own_pass):
    """`exposed_after_passes` with everything hideable (overlap 1) and no bucket floor is the network's time past
    the last pass, simulated share by share; a bucket floor only raises it."""
    from engine.performance.dp_comm import exposed_after_passes

    comm = 0.4
    closed = float(exposed_after_passes(comm, 0.0, v, pp, t_pass, 1.0, own_pass))
    assert max(closed, 0.0) == pytest.approx(_queue_tail_s(comm, v, pp, t_pass, own_pass), abs=1e-12)
    assert float(exposed_after_passes(comm, comm / 3, v, pp, t_pass, 1.0, own_pass)) >= comm / 3


def test_buckets_grow_with_the_ranks_and_number_at_least_the_virtual_stages(setup):
    """Megatron's bucket: max(40M, 1M x dp) parameters. At dp 64 a bucket holds 64M, so 1.2B parameters on a GPU
    take ceil(1,200 / 64) = 19 buckets, at dp 8 ceil(1,200 / 40) = 30; 50M parameters at dp 64 would fit one, but
    with 4 virtual stages each keeps a buffer: 4. ZeRO-3 keeps the layer count it is given."""
    from engine.performance.dp_comm import dp_buckets

    _work, _hw, eff = setup
    zero = np.array([1, 1, 1, 2, 3])
    params = np.array([1.2e9, 1.2e9, 50e6, 50e6, 1.2e9])
    dp = np.array([64.0, 8.0, 64.0, 64.0, 64.0])
    v = np.array([1.0, 1.0, 4.0, 1.0, 1.0])
    layers = np.full(5, 10.0)
    assert dp_buckets(zero, params, dp, v, layers, eff).tolist() == [19.0, 30.0, 4.0, 1.0, 10.0]


def test_zero2_never_hides_more_than_zero1_and_pays_once_its_reduction_outlasts_a_backward(setup):
    """ZeRO-2 reduce-scatters after every micro-batch; its last micro-batch's reduction is ZeRO-1's, so it can only
    expose as much or more. Over a slow fabric (a hundredth of the NIC) a micro-batch's reduction outlasts its
    backward and the m micro-batches' excess shows."""
    from dataclasses import replace

    work, hw, eff = setup
    lay = _one(work, hw, eff, 8, 4, 1, 5, 1)
    for bandwidth in (hw.scaleout_bytes_s, hw.scaleout_bytes_s / 100):
        slow = replace(hw, scaleout_bytes_s=bandwidth)
        lay.dp_bandwidth_bytes_s = bandwidth
        z1, z2 = (step_costs(lay, np.array([0]), np.array([64]), np.array([z]), 4096, 8192, slow, eff) for z in (1, 2))
        assert z2.dp_exposed_time_s[0] >= z1.dp_exposed_time_s[0] * (1 - 1e-12)
    assert z2.dp_exposed_time_s[0] > 2 * z1.dp_exposed_time_s[0]  # 16 micro-batches each leaving some exposed


def test_the_backward_share_is_two_thirds_and_three_quarters_with_full_recompute(setup):
    """A layer's backward is two GEMM passes to the forward's one (2/3 of its time, a little off for attention and
    the element-wise work); full recompute replays the forward inside the backward: (2 + 1) / (1 + 2 + 1) = 3/4.
    The data-parallel reduction hides under that backward, the weight gather under the forward that is left."""
    work, hw, eff = setup
    none, selective, full = (float(_one(work, hw, eff, 8, 1, 1, 1, rc).backward_share[0]) for rc in (0, 1, 2))
    assert none == pytest.approx(2.0 / 3.0, abs=0.02)
    assert full == pytest.approx(3.0 / 4.0, abs=0.02)
    assert none <= selective < full


def test_the_pipeline_fill_waits_for_a_weight_bucket_at_every_stage_without_interleaving(setup):
    """A reduce-scatter of 0.2 s and a weight gather of 0.1 s in 10 buckets each, under passes long enough to hide
    anything that can hide: without pipelining the last reduce-scatter bucket (0.02 s) and the first gather bucket
    (0.01 s) stay exposed, 0.03 s; with 8 stages and no interleaving each later stage waits for its own first
    bucket in the fill, 7 x 0.01 s more, 0.10 s; with 2 virtual stages the gather is aligned (0.01 s) but the
    first finished half of the reduction cannot start before its stage's last backward ends: 0.1 + 0.01 s."""
    from engine.performance.dp_comm import dp_exposed_s

    _work, _hw, eff = setup
    assert eff.dp_overlap == 0.8

    def exposed(v: float, pp: float) -> float:
        one = np.array([1.0])
        collectives = (0.0 * one, 0.2 * one, 0.1 * one)
        last = (0.0 * one, 0.02 * one, 0.01 * one)
        z = dp_exposed_s(one, one, collectives, last, v * one, pp * one, 100.0 * one, 2.0 / 3.0 * one, eff)
        return float(z[0])

    assert exposed(1, 1) == pytest.approx(0.03)
    assert exposed(1, 8) == pytest.approx(0.10)
    assert exposed(2, 8) == pytest.approx(0.11)
