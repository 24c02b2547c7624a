"""A serving plan's memory and batch figures say what they count: the memory a GPU holds is its breakdown's total,
the KV cache the planned load fills is reported beside it, and the whole fleet's batch is every replica's.

The reviewer's plan: Llama 3 70B at 10 requests/s, 1,000 prompt and 250 output tokens, TTFT 500 ms, TPOT 50 ms,
FP8, on DGX H100 (TP 2, 2 replicas). Expected values are worked by hand in the comments.
"""

from __future__ import annotations

import pytest

from tests.samples import INFERENCE_REQUEST

GIB = 1024**3

# The sample serving request (tests/samples.py) as the reviewer changed it: Llama 3 70B, 10 requests/s, TTFT 500 ms,
# FP8 (prompt and output tokens, TPOT and the DGX H100 as in the sample).
REQUEST = {
    **INFERENCE_REQUEST,
    "model": {"preset": "llama-3-70b"},
    "inference": {**INFERENCE_REQUEST["inference"], "requests_per_s": 10, "ttft_ms": 500, "precision": "fp8"},
}


@pytest.fixture(scope="module")
def served(catalog):
    from engine import run_plan, to_json, validate_request

    return to_json(run_plan(validate_request(REQUEST, catalog), catalog))


def test_the_reviewers_plan_shape(served):
    inf = served["inference"]
    assert (inf["parallelism"], inf["replicas"]) == ({"tp": 2, "pp": 1}, 2)


def test_memory_allocated_per_gpu_is_the_breakdowns_total(served):
    inf = served["inference"]
    parts = inf["memory_breakdown_gib"]
    # weights + activation workspace + KV cache budget + reserve: one pipeline stage, so the budget is what the
    # usable HBM leaves after weights and workspace and the reserve is the rest: the whole 80 GiB of an H100.
    assert set(parts) == {"weights", "activations", "kv_cache", "reserve"}
    total = parts["weights"] + parts["activations"] + parts["kv_cache"] + parts["reserve"]
    assert inf["memory_allocated_gib_per_gpu"] == pytest.approx(total, rel=1e-12)
    assert inf["memory_allocated_gib_per_gpu"] == pytest.approx(80.0, rel=1e-9)
    # the API's memory_per_gpu_gib keeps its meaning: what the planned load fills, the weights and workspace with
    # the cache in use (37.4 GiB here), not the cache as allocated
    in_use = parts["weights"] + parts["activations"] + inf["kv_cache_in_use_gib_per_gpu"]
    assert inf["memory_per_gpu_gib"] == pytest.approx(in_use, rel=1e-9)
    assert "inference.memory_allocated_gib_per_gpu" in served["explain"]


def test_kv_cache_in_use_is_what_the_planned_load_fills(served):
    inf = served["inference"]
    # KV per token at FP8: 2 x 80 layers x 8 KV heads x 128 x 1 byte = 163,840 B; TP 2 splits the 8 KV heads,
    # 81,920 B a token per GPU; a sequence keeps 1,000 + 250 = 1,250 tokens: 102,400,000 B per GPU.
    per_sequence = 2 * 80 * 8 * 128 * 1 / 2 * 1250
    assert per_sequence == 102_400_000
    in_use = inf["kv_cache_in_use_gib_per_gpu"]
    assert in_use == pytest.approx(inf["concurrency_per_replica"] * per_sequence / GIB, rel=1e-9)
    # one stage: the replica's cache in use is its 2 GPUs' (a 40-sequence load fills about 3.8 of 44 GiB)
    assert in_use * 2 == pytest.approx(inf["kv_cache_used_gib_per_replica"], rel=1e-9)
    assert 0 < in_use < inf["memory_breakdown_gib"]["kv_cache"]
    assert "inference.kv_cache_in_use_gib_per_gpu" in served["explain"]


def test_the_fleets_batch_is_every_replicas(served):
    inf = served["inference"]
    # 2 replicas x 41 sequences per replica = 82 over the fleet (the page said "batch in flight 41" for both)
    assert inf["batch_fleet"] == 2 * inf["batch"] == 2 * inf["batch_per_replica"]
    # Little's law over the fleet: 10 requests/s x 250 output tokens x TPOT in the decode batch
    assert inf["concurrency_fleet"] == pytest.approx(10 * 250 * inf["tpot_ms"] / 1000, rel=1e-6)
    assert inf["concurrency_fleet"] == pytest.approx(2 * inf["concurrency_per_replica"], rel=1e-12)
    assert "inference.batch_fleet" in served["explain"]
