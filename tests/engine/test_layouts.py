"""Layouts practitioners run (issue 13): uneven pipeline stages, context parallelism, TP beyond the KV heads,
memory options and an exactly honoured global batch. Expected values are worked out by hand from the rules
(stage splits, ring attention, replication), or from one layout of the same model relative to another."""

from __future__ import annotations

import numpy as np
import pytest

from engine.assumptions.registry import Assumptions
from engine.performance.cp_comm import ring_attention_time
from engine.performance.layout_terms import kv_replica_terms
from engine.performance.memory import GIB, MemoryOptions
from engine.performance.stages import stage_layer_counts, stage_split
from engine.performance.step_time import efficiency_for, hardware_for, layout_costs, step_costs
from engine.search.layouts import TrainingSearch
from engine.workload.model import analyse_model


@pytest.fixture
def setup(catalog, shape_of):
    system = catalog.systems["dgx-h100"]
    gpu = catalog.gpu_of(system)
    work = analyse_model(shape_of("llama-3-70b"))
    return work, hardware_for(gpu, system, "bf16"), efficiency_for(gpu, "bf16", Assumptions())


def _lay(work, hw, eff, tp=8, pp=1, mb=1, v=1, rc=0, cp=1, first=None, last=None, memory=None):
    a = lambda x: np.array([x])  # noqa: E731
    f = None if first is None else a(first)
    la = None if last is None else a(last)
    return layout_costs(work, hw, eff, a(tp), a(pp), a(mb), a(v), a(rc), None, a(cp), f, la, memory=memory)


# ---- stage splits ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("layers", "pp", "discounts", "expected"),
    [
        # Llama 3.1 405B on PP8: 126 + 2 (embedding, loss) = 128 units, 16 per stage: ends 15, middle 16.
        (126, 8, (1, 1), [15, 16, 16, 16, 16, 16, 16, 15]),
        # Balanced: 126 = 8 x 15 + 6, the 6 extra layers to the 6 middle stages: the same split.
        (126, 8, (0, 0), [15, 16, 16, 16, 16, 16, 16, 15]),
        # PP16: 128 / 16 = 8, ends 7.
        (126, 16, (1, 1), [7] + [8] * 14 + [7]),
        # DeepSeek-V3, 61 layers on PP8. Balanced: 7 each + 5 extra to the last middle stages.
        (61, 8, (0, 0), [7, 7, 8, 8, 8, 8, 8, 7]),
        # Embedding/loss-aware: 63 units = 8 x 7 + 7: 6 middle stages get 8, the first 8 - 1 = 7, the last 7 - 1 = 6.
        (61, 8, (1, 1), [7, 8, 8, 8, 8, 8, 8, 6]),
        (80, 8, (0, 0), [10] * 8),
    ],
)
def test_stage_splits(layers, pp, discounts, expected):
    first, last = stage_split(layers, np.array([pp]), *discounts)
    counts = stage_layer_counts(layers, pp, int(first[0]), int(last[0]))
    assert counts == expected and sum(counts) == layers


def test_slowest_stage_sets_the_step_time(setup):
    work, hw, eff = setup
    even = _lay(work, hw, eff, pp=4)  # 20 layers per stage
    layer_time = even.body_stage_time_s[0] / 20
    # Ends pinned at 10 layers: the two middle stages get 30 each and set the pace (10 layers + head < 30).
    uneven = _lay(work, hw, eff, pp=4, first=10, last=10)
    assert uneven.stage_time_s[0] == pytest.approx(30 * layer_time, rel=1e-12)
    assert uneven.body_stage_time_s[0] == pytest.approx(30 * layer_time, rel=1e-12)
    head = even.stage_time_s[0] - even.body_stage_time_s[0]  # the last stage's LM head and loss
    assert 0 < head < 20 * layer_time
    # Bubble: (pp - 1) / v of the body stage (Narayanan 2021), here the 30-layer stage.
    c = step_costs(uneven, np.array([0]), np.array([4]), np.array([1]), 512, 8192, hw, eff)
    assert c.bubble_time_s[0] == pytest.approx(3 * 30 * layer_time, rel=1e-12)
    assert c.step_time_s[0] >= 128 * 30 * layer_time


def test_fullest_stage_sets_the_memory(setup):
    work, hw, eff = setup
    single = _lay(work, hw, eff, pp=1)  # one stage: 80 layers' activations + the logits
    per_layer = single.activation_bytes[0] / 80
    logits = single.activation_extra_bytes[0]
    # A fused cross entropy keeps the 16-bit logits and writes their gradient over them: 2 B each, 1/tp of the vocab.
    assert logits == pytest.approx(2.0 * 8192 * work.shape.vocab / 8)
    # A loss that keeps FP32 softmax and its FP32 gradient holds 8 B per logit.
    fp32_loss = _lay(work, hw, eff, pp=1, memory=MemoryOptions(logits_bytes_per_element=8.0))
    assert fp32_loss.activation_extra_bytes[0] == pytest.approx(8.0 * 8192 * work.shape.vocab / 8)
    # pp = 2, first stage 1 layer (2 micro-batches in flight), last 79 layers (1 in flight) + LM head + logits:
    # the last stage holds 79 layers' activations + logits against the first's 2 layers' worth, so it binds.
    lay = _lay(work, hw, eff, pp=2, first=1, last=79)
    c = step_costs(lay, np.array([0]), np.array([32]), np.array([1]), 512, 8192, hw, eff)
    assert int(c.fullest_stage[0]) == 1
    assert c.activations_bytes[0] == pytest.approx(79 * per_layer + logits, rel=1e-12)
    # The other way round the first stage binds: 79 layers x 2 micro-batches in flight.
    lay = _lay(work, hw, eff, pp=2, first=79, last=1)
    c = step_costs(lay, np.array([0]), np.array([32]), np.array([1]), 512, 8192, hw, eff)
    assert int(c.fullest_stage[0]) == 0
    assert c.activations_bytes[0] == pytest.approx(2 * 79 * per_layer, rel=1e-12)


# ---- context parallelism ---------------------------------------------------------------------------------


def test_cp_2_halves_the_activations_per_gpu(setup):
    work, hw, eff = setup
    for rc in (0, 1, 2):
        one, two = _lay(work, hw, eff, mb=2, rc=rc), _lay(work, hw, eff, mb=2, rc=rc, cp=2)
        assert two.activation_bytes[0] == pytest.approx(one.activation_bytes[0] / 2, rel=1e-12)
        assert two.activation_extra_bytes[0] == pytest.approx(one.activation_extra_bytes[0] / 2, rel=1e-12)
    # Weights are replicated over cp: the parameters per GPU do not change.
    assert _lay(work, hw, eff, cp=2).params_per_gpu[0] == _lay(work, hw, eff).params_per_gpu[0]


def test_ring_attention_is_exposed_only_beyond_the_attention_compute(setup):
    work, hw, eff = setup
    tokens, tp, cp = np.array([4096.0]), np.array([8.0]), np.array([2.0])
    # K and V of the chunk, 2 B each: 2 x 4096 tokens x (8 KV heads x 128 / tp 8 = 128) x 2 B = 2 MiB per step,
    # on NVLink (tp x cp = 16 > 8-GPU domain: no, the scale-out NICs).
    kv_bytes = 2 * 4096 * 128 * 2
    assert tp[0] * cp[0] > hw.nvlink_domain
    send = eff.collective_latency_s + kv_bytes / (hw.scaleout_bytes_s * eff.scaleout)
    hidden_f, hidden_b = ring_attention_time(work, hw, eff, tokens, tp, cp, np.array([10.0]), np.array([10.0]))
    assert hidden_f[0] == 0.0 and hidden_b[0] == 0.0  # attention per step (5 s) hides the transfer
    attn = 0.5 * send  # per GPU; per step attn / cp = send / 4
    fwd, bwd = ring_attention_time(work, hw, eff, tokens, tp, cp, np.array([attn]), np.array([attn]))
    assert fwd[0] == pytest.approx(send - attn / 2, rel=1e-12)  # cp - 1 = 1 step
    # Backward passes K, V and their gradients: twice the bytes, one latency.
    assert bwd[0] == pytest.approx(eff.collective_latency_s + 2 * (send - eff.collective_latency_s) - attn / 2)
    assert np.all(
        ring_attention_time(work, hw, eff, tokens, tp, np.array([1.0]), np.array([0.0]), np.array([0.0]))[0] == 0
    )


# ---- TP beyond the KV heads ------------------------------------------------------------------------------


def test_tp16_replicates_the_8_kv_heads(setup):
    work, hw, eff = setup
    tokens = np.array([8192.0])
    # llama-3-70b: hidden 8192, 8 KV heads of 128. tp = 16: one whole head per GPU (128 wide) instead of half a
    # head (8 x 128 / 16 = 64): K and V each gain 64 columns.
    _time, params, acts = kv_replica_terms(work, tokens, np.array([16.0]), hw, eff)
    assert params[0] == 8192 * 2 * 64
    assert acts[0] == 8192 * 2 * 2 * 64  # tokens x (K + V) x 2 B x 64 extra columns
    assert all(x[0] == 0 for x in kv_replica_terms(work, tokens, np.array([8.0]), hw, eff))


def test_tp16_on_nvl72_plans_with_replicated_kv(catalog, shape_of):
    system = catalog.systems["gb200-nvl72"]
    work = analyse_model(shape_of("llama-3-70b"))
    from engine import validate_request

    body = {"workload": "training", "model": {"preset": "llama-3-70b"},
            "training": {"tokens": 1e12, "gpus": 1024, "parallelism": {"tp": 16}}}  # fmt: skip
    spec = validate_request(body, catalog).training
    search = TrainingSearch(work, spec, system, catalog.gpu_of(system), Assumptions({"max_tensor_parallel": 16}))
    assert 16 in search.tp_options()
    plan, _stats, _miss = search.fastest(1024)
    assert plan is not None and plan.tp == 16


# ---- batch and memory options ----------------------------------------------------------------------------


def test_the_global_batch_is_honoured_exactly(plan):
    body = {"workload": "training", "model": {"preset": "llama-3-70b"},
            "training": {"tokens": 15e12, "deadline_days": 90}, "hardware": {"system": "gb200-nvl72"}}  # fmt: skip
    p = plan({**body, "assumptions": {"global_batch_tolerance": 0}})
    t = p["training"]
    par = t["parallelism"]
    # 4 Mi tokens / 8192 = 512 sequences = dp x micro_batch x micro-batches, on 72-GPU racks (spare GPUs allowed).
    assert par["dp"] * par["micro_batch"] * t["micro_batches_per_step"] == 512 == t["global_batch_sequences"]
    assert t["gpus"] == par["tp"] * par["cp"] * par["pp"] * par["dp"]
    assert "batch_note" not in t
    # With a 10 % tolerance a batch within 10 % that needs fewer GPUs wins, and the plan says so.
    loose = plan({**body, "assumptions": {"global_batch_tolerance": 0.1}})["training"]
    if loose["gpus"] < t["gpus"]:
        assert abs(loose["global_batch_sequences"] / 512 - 1) <= 0.10
        assert "512" in loose["batch_note"] and str(loose["global_batch_sequences"]) in loose["batch_note"]


def test_a_batch_no_layout_can_take_exactly_uses_the_nearest_and_says_so(plan):
    # 509 sequences (a prime) with dp pinned at 2: dp x micro_batch is even, so no split is exact.
    p = plan({"workload": "training", "model": {"preset": "llama-3-8b"},
              "training": {"tokens": 1e11, "gpus": 16, "global_batch_tokens": 509 * 8192,
                           "parallelism": {"dp": 2}}, "hardware": {"system": "dgx-h100"}})  # fmt: skip
    t = p["training"]
    assert t["global_batch_sequences_requested"] == 509
    used = t["global_batch_sequences"]
    assert used != 509 and abs(used - 509) <= t["parallelism"]["dp"] * t["parallelism"]["micro_batch"] / 2
    assert "nearest batch" in t["batch_note"] and str(used) in t["batch_note"] and "509" in t["batch_note"]


def test_a_pinned_micro_batch_larger_than_each_ranks_share_is_named_as_the_cause(plan):
    # 32 sequences on 16 data-parallel ranks is 2 per rank; a pinned micro-batch of 4 needs 16 x 4 = 64.
    p = plan({"workload": "training", "model": {"preset": "llama-3-8b"},
              "training": {"tokens": 1e11, "gpus": 16, "global_batch_tokens": 32 * 8192,
                           "parallelism": {"tp": 1, "pp": 1, "cp": 1, "micro_batch": 4, "zero_stage": 3,
                                           "recompute": "full"}},
              "hardware": {"system": "dgx-h100"}})  # fmt: skip
    t = p["training"]
    assert t["global_batch_sequences_requested"] == 32 and t["global_batch_sequences"] == 64
    note = t["batch_note"]
    assert "+100.0%" in note and "pinned micro-batch of 4 on 16 data-parallel ranks" in note
    assert "at least 64" in note and "at most 2" in note


def test_offload_is_searched_only_when_nothing_fits(catalog, shape_of):
    system = catalog.systems["dgx-h100"]
    work = analyse_model(shape_of("llama-3-70b"))
    from engine import validate_request

    spec = validate_request({"workload": "training", "model": {"preset": "llama-3-70b"},
                             "training": {"tokens": 1e11, "gpus": 8}}, catalog).training  # fmt: skip
    search = TrainingSearch(work, spec, system, catalog.gpu_of(system), Assumptions())
    # 70B on 8 GPUs: even ZeRO-3 keeps 16 B x 70.6e9 / 8 = 141 GB per GPU > 80 GiB; with the optimizer state on the
    # host (12 B/param off) it fits.
    plan, _stats, _miss = search.fastest(8)
    assert plan is not None and plan.offload != "none"
    assert plan.memory_gib <= system_hbm_gib(catalog, system)
    # 64 GPUs fit without it, and then it is not used.
    assert search.fastest(64)[0].offload == "none"


def system_hbm_gib(catalog, system) -> float:
    return catalog.gpu_of(system).hbm_gib


def test_reserve_is_a_fixed_amount_plus_fragmentation(setup, catalog):
    _work, hw, _eff = setup
    a = Assumptions()
    search_reserve = a["training_memory_reserve_gib"] * GIB + a["training_memory_fragmentation_fraction"] * hw.hbm_bytes
    system = catalog.systems["dgx-h100"]
    from engine.performance.memory import memory_options_for

    options = memory_options_for(system, hw.hbm_bytes, False, a)
    assert options.reserve_bytes == search_reserve
    # DGX H100: 2 TB of host memory over 8 GPUs = 232.83 GiB each, three quarters of it for offload (174.62 GiB);
    # PCIe Gen5 x16 (about 50 GB/s) shared by two GPUs per uplink: 25 GB/s each.
    assert options.host_offload_bytes == pytest.approx(0.75 * 2e12 / 8, rel=1e-4)  # the catalog's GiB to 0.1
    assert options.host_link_bytes_s == pytest.approx(25e9)
    grace = memory_options_for(catalog.systems["gb200-nvl72"], hw.hbm_bytes, False, a)
    # GB200 NVL72: 36 x 480 GB over 72 GPUs; NVLink-C2C 450 GB/s per direction shared by a Grace's two GPUs.
    assert grace.host_offload_bytes == pytest.approx(0.75 * 36 * 480e9 / 72, rel=1e-4)
    assert grace.host_link_bytes_s == pytest.approx(225e9)


def test_end_stages_give_a_virtual_stage_to_the_embedding_and_the_loss():
    """Llama 3.1 405B on PP16 x VP8 (NVIDIA's GB200 MXFP8 recipe): 126 layers + the embedding + the loss are 128
    virtual stages of one, so the end stages' 7 layers take 8 virtual stages; a middle stage of 7 could not."""
    from engine.search.grid import GridOptions, layout_grid

    opt = GridOptions(tps=(4,), pps=(16,), mbs=(1,), rcs=(0,), eps=(1,), cps=(1,), interleave=8, first_layers=None,
                      last_layers=None)  # fmt: skip
    g = layout_grid(126, opt)
    assert len(g["tp"]) > 0
    assert {(int(f), int(la)) for f, la in zip(g["first"], g["last"], strict=True)} == {(7, 7)}  # 7 + 14 x 8 + 7
    assert len(layout_grid(125, opt)["tp"]) == 0  # 125 layers leave a middle stage with 7
