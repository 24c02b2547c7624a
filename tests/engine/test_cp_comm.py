"""Context-parallel exchange methods (issue 13: "context parallelism ... with its attention communication (ring
or all-to-all)"). Expected values are worked out by hand from the model's head counts and the bytes each method
moves (Megatron-Core's cp_comm_type: p2p, all_gather, a2a, a2a+p2p), with the link figures of the system."""

from __future__ import annotations

import numpy as np
import pytest

from engine import validate_request
from engine.assumptions.registry import Assumptions
from engine.performance.cp_comm import CP_COMM_CODES, a2a_group, cp_comm_terms, cp_comm_valid
from engine.performance.step_time import efficiency_for, hardware_for
from engine.request.validation import RequestInvalid
from engine.workload.model import analyse_model

MIB = 2**20


@pytest.fixture
def h100(catalog):
    system = catalog.systems["dgx-h100"]
    gpu = catalog.gpu_of(system)
    return hardware_for(gpu, system, "bf16"), efficiency_for(gpu, "bf16", Assumptions())


def _arr(*values):
    return np.array(values, dtype=float)


def test_which_methods_a_layout_can_run(shape_of):
    # Llama 3 70B: 64 query heads, 8 KV heads. (tp, cp) -> KV heads per rank, all-to-all group of the hierarchy.
    work = analyse_model(shape_of("llama-3-70b"))
    tp, cp = _arr(8, 4, 2, 2, 16), _arr(2, 2, 8, 4, 2)
    valid = cp_comm_valid(work, tp, cp, 8)
    # tp 8: one KV head per rank, nothing to split; tp 4: 2 heads, cp 2 splits them; tp 2: 4 heads, cp 8 does not
    # divide them but cp 4 does; tp 16: each rank holds a copy of one head.
    assert valid[CP_COMM_CODES["ring"]].all() and valid[CP_COMM_CODES["all_gather"]].all()
    assert valid[CP_COMM_CODES["all_to_all"]].tolist() == [False, True, False, True, False]
    # Hierarchical needs a group of 2 or more: tp 2, cp 8 -> group 4 (4 heads, 2 x 4 = 8 GPUs of NVLink), ring of 2;
    # tp 2, cp 4 -> group 4, a ring of one (the plain all-to-all inside NVLink).
    assert a2a_group(work, tp, cp, 8).tolist() == [1, 2, 4, 4, 1]
    assert valid[CP_COMM_CODES["hierarchical"]].tolist() == [False, True, True, True, False]
    # The NVLink domain bounds the group: with 4-GPU domains tp 2 can only pair 2 ranks; on a 72-GPU rack a group
    # of tp 8 x 2 = 16 GPUs would straddle two 72 / 16 slices, so tp 8 x 2 is refused and tp 4 x 2 = 8 taken.
    assert a2a_group(work, _arr(2), _arr(8), 4).tolist() == [2]
    assert a2a_group(analyse_model(shape_of("llama-3-405b")), _arr(4), _arr(8), 72).tolist() == [2]
    assert a2a_group(analyse_model(shape_of("deepseek-v3")), _arr(8, 4), _arr(2, 2), 72).tolist() == [1, 2]


def test_all_gather_is_exposed_and_doubles_in_the_backward(shape_of, h100):
    hw, eff = h100
    work = analyse_model(shape_of("llama-3-70b"))
    tokens, tp, cp = _arr(4096), _arr(8), _arr(4)
    # K and V of the local chunk: 2 x 4096 tokens x (8 KV heads x 128 / tp 8) x 2 B = 2 MiB; tp x cp = 32 GPUs
    # cross the scale-out NICs. Three chunks arrive, none hidden, even behind 10 s of attention.
    kv = 2 * 4096 * 128 * 2
    assert kv == 2 * MIB
    link = hw.scaleout_bytes_s * eff.scaleout
    terms = cp_comm_terms(work, hw, eff, tokens, tp, cp, _arr(10.0), _arr(10.0), _arr(0), "all_gather")
    assert terms.forward_s[0] == pytest.approx(3 * (eff.collective_latency_s + kv / link), rel=1e-12)
    assert terms.backward_s[0] == pytest.approx(2 * terms.forward_s[0], rel=1e-12)
    # Working memory: the 4 chunks' K and V gathered, and their gradients: 2 x 4 x 2 MiB.
    assert terms.working_bytes[0] == pytest.approx(16 * MIB)
    # The ring hides the same transfers under that attention entirely.
    ring = cp_comm_terms(work, hw, eff, tokens, tp, cp, _arr(10.0), _arr(10.0), _arr(0), "ring")
    assert ring.forward_s[0] == 0.0 and ring.backward_s[0] == 0.0 and ring.working_bytes[0] == 0.0


def test_all_to_all_moves_q_k_v_and_the_output(shape_of, h100):
    hw, eff = h100
    work = analyse_model(shape_of("llama-3-8b"))  # 32 query heads, 8 KV heads of 128, hidden 4096
    tokens, tp, cp = _arr(8192), _arr(1), _arr(8)
    # Per GPU: Q 4096 + K 1024 + V 1024 columns of 2 B for 8192 tokens go out in the all-to-all before attention,
    # the output's 4096 in the one after; 7/8 of each leaves the GPU, on NVLink (8 GPUs, one system). Two start-ups.
    moved = 8192 * (4096 + 1024 + 1024 + 4096) * 2 * 7 / 8
    link = hw.nvlink_bytes_s * eff.nvlink
    expected = 2 * eff.collective_latency_s + moved / link
    terms = cp_comm_terms(work, hw, eff, tokens, tp, cp, _arr(1.0), _arr(2.0), _arr(0), "all_to_all")
    assert terms.forward_s[0] == pytest.approx(expected, rel=1e-12)
    assert terms.backward_s[0] == pytest.approx(expected, rel=1e-12)
    assert terms.working_bytes[0] == 0.0


def test_hierarchical_is_an_all_to_all_in_nvlink_and_a_ring_across(shape_of, h100):
    hw, eff = h100
    work = analyse_model(shape_of("llama-3-70b"))
    tokens, tp, cp = _arr(1024), _arr(2), _arr(8)
    # Group of 4 inside NVLink (4 KV heads per rank), then a ring of 8 / 4 = 2 across systems: one step carrying
    # the rank's K and V (after the all-to-all: 4 x the tokens on a quarter of the heads, the same bytes).
    q, kv_cols, o = 8192 / 2, 2 * 1024 / 2, 8192 / 2
    inner = 2 * eff.collective_latency_s + 1024 * (q + kv_cols + o) * 2 * 3 / 4 / (hw.nvlink_bytes_s * eff.nvlink)
    kv = 2 * 1024 * (1024 / 2) * 2
    attention = 1e-4
    ring_step = max(0.0, eff.collective_latency_s + kv / (hw.scaleout_bytes_s * eff.scaleout) - attention / 2)
    terms = cp_comm_terms(work, hw, eff, tokens, tp, cp, _arr(attention), _arr(attention), _arr(0), "hierarchical")
    assert terms.forward_s[0] == pytest.approx(inner + ring_step, rel=1e-12)


def test_the_search_takes_the_fastest_method_a_layout_can_run(shape_of, h100):
    hw, eff = h100
    work = analyse_model(shape_of("llama-3-70b"))
    tokens, tp, cp = _arr(1024, 1024, 1024), _arr(2, 8, 2), _arr(8, 8, 1)
    attention, rc = _arr(1e-4, 1e-4, 1e-4), _arr(0, 2, 0)
    auto = cp_comm_terms(work, hw, eff, tokens, tp, cp, attention, attention, rc)
    valid = cp_comm_valid(work, tp, cp, hw.nvlink_domain)
    for j in range(2):
        costs = {}
        for name, code in CP_COMM_CODES.items():
            if valid[code, j]:
                one = cp_comm_terms(work, hw, eff, tokens[j : j + 1], tp[j : j + 1], cp[j : j + 1],
                                    attention[:1], attention[:1], rc[j : j + 1], name)  # fmt: skip
                replays = 2.0 if rc[j] == 2 else 1.0
                costs[name] = one.forward_s[0] * replays + one.backward_s[0]
        best = min(costs, key=costs.get)
        assert CP_COMM_CODES[best] == auto.method[j]
        assert auto.forward_s[j] * (2.0 if rc[j] == 2 else 1.0) + auto.backward_s[j] == pytest.approx(costs[best])
    # Short chunks on a ring crossing systems: the all-to-all inside NVLink wins for tp 2 x cp 8.
    assert auto.method[0] == CP_COMM_CODES["hierarchical"]
    # tp 8 leaves one KV head per rank: ring or all-gather, and the ring never loses to the all-gather.
    assert auto.method[1] == CP_COMM_CODES["ring"]
    # No context parallelism: nothing exchanged.
    assert auto.forward_s[2] == 0.0 and auto.backward_s[2] == 0.0 and auto.method[2] == CP_COMM_CODES["ring"]


def _training(parallelism: dict, preset: str = "llama-3-70b", seq_len: int = 32768) -> dict:
    return {
        "workload": "training",
        "model": {"preset": preset, "seq_len": seq_len},
        "hardware": {"system": "dgx-h100"},
        "training": {"tokens": 1e11, "gpus": 256, "global_batch_tokens": 4 * 2**20, "parallelism": parallelism},
    }


def test_a_pinned_all_gather_costs_its_exposed_transfers_and_memory(plan):
    pins = {"tp": 8, "pp": 4, "cp": 4, "micro_batch": 1, "recompute": "selective", "interleave": 1}
    ring = plan(_training({**pins, "cp_comm": "ring"}))["training"]
    gather_plan = plan(_training({**pins, "cp_comm": "all_gather"}))
    gather = gather_plan["training"]
    assert ring["parallelism"]["cp_comm"] == "ring" and gather["parallelism"]["cp_comm"] == "all_gather"
    exposed = gather["step_breakdown_s"]["context_parallel_comm"]
    assert exposed > ring["step_breakdown_s"]["context_parallel_comm"] >= 0.0
    assert gather["step_time_s"] > ring["step_time_s"]
    # Working memory of one layer: gathered K and V and their gradients, 2 x cp x (2 x 8192 tokens x 128 x 2 B).
    working_gib = 2 * 4 * (2 * 8192 * 128 * 2) / 2**30
    assert gather["memory_per_gpu_gib"] - ring["memory_per_gpu_gib"] == pytest.approx(working_gib, rel=1e-6)
    entry = gather_plan["explain"]["training.step_breakdown_s.context_parallel_comm"]
    assert entry["inputs"]["method"] == "all-gather" and "all exposed" in entry["formula"]
    assert entry["inputs"]["exposed exchange per step (s)"] == pytest.approx(exposed)
    assert "Llama 3" in entry["source"]


def test_without_context_parallelism_no_method_is_reported(plan):
    result = plan(_training({"tp": 8, "pp": 4, "cp": 1}, seq_len=8192))
    assert result["training"]["parallelism"]["cp_comm"] is None
    assert "training.step_breakdown_s.context_parallel_comm" not in result["explain"]


def test_an_exchange_no_layout_can_run_is_a_plan_level_explanation(plan):
    # cp 16 cannot split the 8 KV heads whatever tp the search tries: valid as a request, no layout can run it.
    result = plan(_training({"cp": 16, "cp_comm": "all_to_all"}, seq_len=131072))
    problems = " ".join(result.get("problems", []))
    assert "training.parallelism.cp_comm, all-to-all" in problems and "KV heads" in problems
    assert "cp_comm '" not in problems and "all_to_all" not in problems


def test_a_pinned_exchange_means_context_parallelism(plan):
    # A pinned exchange asks for context parallelism: the search may not fall back to cp 1.
    result = plan(_training({"tp": 8, "pp": 4, "cp_comm": "ring"}, seq_len=32768))["training"]["parallelism"]
    assert result["cp"] > 1 and result["cp_comm"] == "ring"


@pytest.mark.parametrize(
    ("parallelism", "needle"),
    [
        ({"cp": 1, "cp_comm": "ring"}, "needs context parallelism"),
        ({"tp": 8, "cp": 2, "cp_comm": "all_to_all"}, "1 KV head"),
        ({"tp": 16, "cp": 2, "cp_comm": "all_to_all"}, "a copy of one KV head"),
        ({"tp": 2, "cp": 8, "cp_comm": "all_to_all"}, "4 KV heads"),
        ({"tp": 8, "cp": 2, "cp_comm": "hierarchical"}, "fewer than two"),
        ({"cp": 2, "cp_comm": "ulysses"}, ""),
        ({"cp": 2, "cp_comm": 2}, ""),
        ({"cp": 2, "cp_comm": None}, None),
    ],
)
def test_bad_methods_are_field_errors(catalog, parallelism, needle):
    body = _training(parallelism)
    if needle is None:
        validate_request(body, catalog)  # null is "leave it to the search"
        return
    with pytest.raises(RequestInvalid) as info:
        validate_request(body, catalog)
    field = "training.parallelism.cp_comm"
    assert field in info.value.errors
    assert needle in " ".join(info.value.errors[field])


def test_pinned_and_free_exchanges_share_the_remembered_grids(plan):
    """The search remembers each grid's activation floors; a pinned exchange keeps fewer layouts, after that
    pruning, so any order of requests in one process plans (a floor of the whole grid once met a smaller one)."""
    pins = {"cp": 4}  # tp free: an all-to-all keeps only the tp that leave cp 4 a split of the KV heads
    for method in ("ring", "all_to_all", None, "hierarchical", "all_to_all"):
        body = _training({**pins, "cp_comm": method} if method else pins)
        layout = plan(body)["training"]["parallelism"]
        assert layout["cp"] == 4 and (method is None or layout["cp_comm"] == method)


def test_windowed_layers_exchange_by_all_gather_or_all_to_all(catalog, h100):
    """GPT-OSS 120B: 18 of 36 layers windowed, 64 query heads and 8 KV heads of 64. With a pinned ring the full
    layers pass K and V round the ring (hidden here behind ample attention), while the windowed half takes the
    faster of the all-gather and the all-to-all, both exposed: at tp 1 x cp 2 the all-to-all (8 KV heads split
    in two) moves Q, K, V and the output once, 1/2 of it leaving the GPU; the all-gather one chunk's K and V."""
    hw, eff = h100
    body = {"workload": "training", "model": {"preset": "gpt-oss-120b"}, "training": {"tokens": 1e12, "gpus": 64}}
    work = analyse_model(validate_request(body, catalog).model)
    tokens, tp, cp, attention = _arr(2048), _arr(1), _arr(2), _arr(10.0)
    link = hw.nvlink_bytes_s * eff.nvlink  # tp x cp = 2 GPUs of one system
    lat = eff.collective_latency_s
    gather = lat + 2048 * (2 * 8 * 64) * 2 / link  # one chunk's K and V
    a2a = 2 * lat + 2048 * (4096 + 2 * 512 + 4096) * 2 / 2 / link  # Q, K, V and the output, half leaving
    windowed_f, windowed_b = min((gather, 2 * gather), (a2a, a2a), key=lambda fb: fb[0] + fb[1])
    ring = cp_comm_terms(work, hw, eff, tokens, tp, cp, attention, attention, _arr(0), "ring")
    assert ring.forward_s[0] == pytest.approx(0.5 * 0.0 + 0.5 * windowed_f, rel=1e-12)
    assert ring.backward_s[0] == pytest.approx(0.5 * windowed_b, rel=1e-12)
    assert ring.method[0] == CP_COMM_CODES["ring"]  # the method reported is the full layers'
    # A pinned all-gather is the windowed layers' method too: every layer pays it.
    pinned = cp_comm_terms(work, hw, eff, tokens, tp, cp, attention, attention, _arr(0), "all_gather")
    assert pinned.forward_s[0] == pytest.approx(gather, rel=1e-12)


def test_plans_report_the_windowed_layers_exchange(plan):
    """GPT-OSS 120B at 32K tokens on CP 4: the full layers take the search's fastest exchange, the windowed half
    the all-gather or the all-to-all, both named in the layout and the explain entry."""
    body = {"workload": "training", "model": {"preset": "gpt-oss-120b", "seq_len": 32768},
            "hardware": {"system": "gb200-nvl72"},
            "training": {"tokens": 1e11, "gpus": 64, "global_batch_tokens": 2**22,
                         "parallelism": {"cp": 4, "cp_comm": "ring"}}}  # fmt: skip
    result = plan(body)
    layout = result["training"]["parallelism"]
    assert layout["cp_comm"] == "ring" and layout["cp_comm_windowed"] in ("all_gather", "all_to_all")
    entry = result["explain"]["training.step_breakdown_s.context_parallel_comm"]
    assert entry["inputs"]["full-attention layers' method"] == "ring"
    assert entry["inputs"]["sliding-window layers' method"] == layout["cp_comm_windowed"].replace("_", "-")
    assert "50 % of the layers" in entry["formula"]
    # Llama 3 has no window: no second method.
    llama = plan(_training({"tp": 8, "pp": 4, "cp": 4}))["training"]["parallelism"]
    assert llama["cp_comm_windowed"] is None


def test_a_model_windowed_on_every_layer_refuses_the_ring(catalog, plan):
    model = {"preset": "llama-3-8b", "seq_len": 32768, "sliding_window": {"tokens": 4096}}
    body = {"workload": "training", "model": model, "hardware": {"system": "dgx-h100"},
            "training": {"tokens": 1e11, "gpus": 64, "parallelism": {"cp": 4, "cp_comm": "ring"}}}  # fmt: skip
    with pytest.raises(RequestInvalid) as info:
        validate_request(body, catalog)
    assert "every layer" in " ".join(info.value.errors["training.parallelism.cp_comm"])
    body["training"]["parallelism"] = {"cp": 4}
    layout = plan(body)["training"]["parallelism"]
    assert layout["cp_comm"] in ("all_gather", "all_to_all") and layout["cp_comm_windowed"] == layout["cp_comm"]


def test_the_full_layers_ring_hides_under_a_full_layers_attention(catalog, h100):
    """GPT-OSS's fused kernels read whole 128-key blocks: (18 x 4,096 + 18 x 512) / 36 = 2,304 positions a query
    on the average layer, 4,096 on a full one. The ring of the full layers hides under a full layer's attention,
    not the average's."""
    from engine.performance.step_time import FLASH_KEY_BLOCK_TOKENS, _full_layer_attention

    _, eff = h100
    body = {"workload": "training", "model": {"preset": "gpt-oss-120b"}, "training": {"tokens": 1e12, "gpus": 64}}
    work = analyse_model(validate_request(body, catalog).model)
    span = work.attention_span(4096, FLASH_KEY_BLOCK_TOKENS)
    # 18 full layers at 4,096 and 18 windowed at 2 x (ceil(127 / 128) + 1) x 128 = 512 blocks' positions.
    assert span == pytest.approx((18 * 4096 + 18 * 512) / 36)
    average_f, average_b = _arr(1e-3 + eff.kernel_overhead_s), _arr(2.5e-3)
    full_f, full_b = _full_layer_attention(work, eff, average_f, average_b)
    assert full_f[0] == pytest.approx(1e-3 * 4096 / span + eff.kernel_overhead_s, rel=1e-12)
    assert full_b[0] == pytest.approx(2.5e-3 * full_f[0] / average_f[0], rel=1e-12)
