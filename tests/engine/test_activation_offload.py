"""Activation offload to host or Grace memory (Megatron-Core's layer-level cpu_offloading): what stays on the GPU,
what the host link costs, where the grid allows it, which requests are refused, and a search that picks it.

Every expected figure is worked out by hand in the test from the formulas' statement (layout_terms docstrings) and
Korthikanti et al.'s activation terms, never read back from the engine.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine import run_plan, to_json, validate_request
from engine.catalog.hardware import load_catalog
from engine.performance.layout_terms import activation_offload_time_s, layers_on_gpu
from engine.performance.memory import GIB, MemoryOptions
from engine.request.validation import RequestInvalid
from engine.search.grid import GridOptions, layout_grid
from engine.search.layout_build import activation_offload_options

CATALOG = load_catalog()


def test_layers_on_gpu_keep_one_offloaded_layer_in_transit() -> None:
    counts = np.array([[80.0, 0.0, 0.0, 0.0], [80.0, 0.0, 0.0, 0.0]])
    kept = layers_on_gpu(counts, np.array([20.0, 0.0]))
    # 80 - 20 + 1 = 61 layers' activations on the GPU; without offload all 80; empty positions stay empty.
    assert kept.tolist() == [[61.0, 0.0, 0.0, 0.0], [80.0, 0.0, 0.0, 0.0]]


def test_offload_time_is_the_unhidden_share_or_what_compute_cannot_cover() -> None:
    memory = MemoryOptions(host_link_bytes_s=225e9, activation_offload_overlap=0.5)
    # 20 layers x 2 GB over 225 GB/s = 0.17778 s each way. Plenty of compute (79 other layers x 10 ms forward,
    # x 20 ms backward): only the unhidden half shows, 0.08889 s each way, 0.17778 s in all.
    plenty = activation_offload_time_s(np.array([20.0]), 2e9, 80.0, 0.010, 0.020, memory)
    assert plenty[0] == pytest.approx(2 * 0.5 * 40e9 / 225e9, rel=1e-12)
    # Little compute: forward hides 79 x 1 ms = 0.079 s, so 0.17778 - 0.079 = 0.09878 s shows forward; backward
    # (79 x 2 ms = 0.158 s) still leaves the unhidden half, 0.08889 s.
    scarce = activation_offload_time_s(np.array([20.0]), 2e9, 80.0, 0.001, 0.002, memory)
    assert scarce[0] == pytest.approx((40e9 / 225e9 - 0.079) + 0.5 * 40e9 / 225e9, rel=1e-12)
    # No offload, no time.
    assert activation_offload_time_s(np.array([0.0]), 2e9, 80.0, 0.001, 0.002, memory)[0] == 0.0


def test_searched_offload_counts_are_quarters_of_the_layers() -> None:
    assert activation_offload_options(80, None) == (0, 20, 40, 60)
    assert activation_offload_options(126, None) == (0, 32, 63, 94)  # 31.5 -> 32, 63, 94.5 -> 94 (half to even)
    assert activation_offload_options(2, None) == (0, 1)  # at least one, one fewer than all at most
    assert activation_offload_options(80, 0) == (0,)
    assert activation_offload_options(80, 40) == (40,)


def test_grid_pairs_offload_only_with_one_stage_and_no_recompute() -> None:
    opt = GridOptions((1,), (1, 2), (1,), (0, 1, 2), (1,), (1,), 1, None, None, act_offloads=(0, 20))
    g = layout_grid(80, opt)
    offloaded = g["act_offload"] > 0
    assert offloaded.sum() == 1  # (pp 1, recompute none) is the only pairing
    assert g["pp"][offloaded].tolist() == [1] and g["recompute"][offloaded].tolist() == [0]
    # Every layout without offload is still there: 2 pipeline degrees x 3 recompute modes.
    assert (~offloaded).sum() == 6


def _request(memory: dict, parallelism: dict) -> dict:
    return {
        "workload": "training",
        "model": {"preset": "llama-3-405b"},
        "hardware": {"system": "gb200-nvl72"},
        "training": {
            "tokens": 1e12,
            "gpus": 128,
            "global_batch_tokens": 64 * 8192,
            "precision": "fp8",
            "parallelism": {"tp": 2, "cp": 1, "micro_batch": 1, "zero_stage": 3, **parallelism},
            "memory": {"fp8_activations": True, **memory},
        },
    }


@pytest.mark.parametrize(
    ("memory", "parallelism", "words"),
    [
        ({"activation_offload_layers": 40}, {"pp": 4}, "needs pp 1"),
        ({"activation_offload_layers": 40}, {"recompute": "full"}, "needs recompute none"),
        ({"activation_offload_layers": 126}, {}, "must be below model.layers (126)"),
        ({"activation_offload_layers": 40}, {"interleave": 2}, "no interleaving"),
        ({"activation_offload_layers": -1}, {}, "must be >= 0"),
        ({"activation_offload_layers": 2.5}, {}, "must be a whole number"),
    ],
)
def test_layouts_that_cannot_offload_are_field_errors(memory: dict, parallelism: dict, words: str) -> None:
    with pytest.raises(RequestInvalid) as caught:
        validate_request(_request(memory, parallelism), CATALOG)
    text = str(caught.value)
    assert "training.memory.activation_offload_layers" in text
    assert words in text


def _training(memory: dict, parallelism: dict) -> dict:
    return to_json(run_plan(validate_request(_request(memory, parallelism), CATALOG), CATALOG))["training"]


def test_memory_falls_by_one_layers_activations_per_layer_offloaded() -> None:
    """Llama 3.1 405B, TP2 with sequence parallelism, one 8,192-token sequence, FP8 copies of the GEMM inputs:
    Korthikanti's stored bytes per token and layer at 16 bits, without dropout masks (Llama trains without
    dropout), are 8h / sp + ((4 + 4 kv/a) h + 6 d_ff) / tp = (131,072 + 389,120) / 2 = 260,096 (h 16,384, kv/a
    8/128, d_ff 53,248); the FP8 recipe saves 2h / sp + h / tp + d_ff / tp = 51,200 of them, leaving 208,896 B, or
    8,192 x 208,896 B = 1.59375 GiB per layer."""
    per_layer_gib = 8192 * 208_896 / GIB
    assert per_layer_gib == pytest.approx(1.59375)
    acts = {n: _training({"activation_offload_layers": n}, {"pp": 1})["memory_breakdown_gib"]["activations"]
            for n in (40, 60)}  # fmt: skip
    assert acts[40] - acts[60] == pytest.approx(20 * per_layer_gib, rel=1e-9)


def test_the_search_keeps_activations_in_grace_memory_when_that_beats_recompute() -> None:
    """On 128 GB200 GPUs at TP2 and one stage, 405B's 126 layers of activations (200.8 GiB) do not fit a 186 GiB
    GPU; the search may recompute every layer or keep some layers' activations on the Grace CPU. With 63 layers
    offloaded a micro-batch copies 63 x 1.7113 GB = 107.8 GB each way at 225 GB/s, 0.4792 s each way, at least
    half of it exposed (0.4792 s in all), well under the third more compute full recompute costs."""
    chosen = _training({}, {"pp": 1})
    par = chosen["parallelism"]
    assert par["recompute"] == "none" and par["activation_offload_layers"] > 0
    recomputed = _training({"activation_offload_layers": 0}, {"pp": 1})
    assert recomputed["parallelism"]["recompute"] == "full"
    assert chosen["step_time_s"] < recomputed["step_time_s"]
    n = par["activation_offload_layers"]
    copy_s = n * 8192 * 208_896 / 225e9
    # One micro-batch per step (64 sequences over 64 data-parallel ranks); with this much compute per layer the
    # floor (the unhidden half, each way) binds.
    assert chosen["micro_batches_per_step"] == 1
    assert chosen["step_breakdown_s"]["activation_offload"] == pytest.approx(copy_s, rel=1e-9)


def test_a_pinned_offload_beyond_the_host_memory_is_refused_with_the_reason() -> None:
    """120 of 405B's layers at 1.59375 GiB each would fill 191.25 GiB of host memory per GPU, more than the 167.6
    GiB a GB200 GPU may give them (three quarters of 36 x 480 GB of LPDDR5X over 72 GPUs): no layout is kept (not
    even as the closest miss), and the plan says why."""
    assert 120 * 1.59375 > 0.75 * 36 * 480e9 / 72 / GIB > 63 * 1.59375
    plan = to_json(
        run_plan(validate_request(_request({"activation_offload_layers": 120}, {"pp": 1}), CATALOG), CATALOG)
    )
    assert not plan["feasible"]
    text = " ".join(plan["problems"])
    assert "activation offload" in text and "training.memory.activation_offload_layers" in text
    # 63 layers (100.4 GiB) stay within it and are planned.
    assert _training({"activation_offload_layers": 63}, {"pp": 1})["parallelism"]["activation_offload_layers"] == 63


def test_host_overflow_counts_the_experts_over_their_own_ranks_by_hand() -> None:
    """Optimizer offload keeps 12 B of fp32 state plus the 2 B gradient per parameter a GPU updates on the host:
    4e9 dense parameters sharded over 8 ranks and 20e9 expert parameters over the 1 rank holding them (ep = dp x cp)
    need 14 x (0.5e9 + 20e9) = 287 GB; with 100 GiB allowed, 287e9 - 107.37e9 B stay in HBM. Without offload only
    the offloaded activations count, here none."""
    from engine.performance.layout_terms import host_overflow_bytes

    memory = MemoryOptions(host_offload_bytes=100 * GIB)
    args = (np.array([4e9]), np.array([20e9]))
    ranks = (np.array([1]), np.array([8.0]), np.array([1.0]), np.array([0.0]))  # zero, dpc, edp, activations
    offloaded = host_overflow_bytes(memory, *args, np.array([1]), *ranks)
    assert offloaded[0] == pytest.approx(14 * 20.5e9 - 100 * GIB, rel=1e-12)
    assert host_overflow_bytes(memory, *args, np.array([0]), *ranks)[0] == 0.0
