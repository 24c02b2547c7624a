"""Inference sizing: KV bytes, Little's law, a hand-worked replica, and targets that cannot be met."""

from __future__ import annotations

import pytest

from planner.sizing.inference import little_law_concurrency, max_batch_for_tpot, replicas_for_rate
from planner.sizing.workload import analyse_model


def test_kv_bytes_per_token_llama(shape_of):
    # inference-calibration.md section 1: 2 x layers x kv_heads x head_dim x 2 bytes.
    assert analyse_model(shape_of("llama-3-8b")).kv_bytes_per_token(2) == 128 * 1024  # 2*32*8*128*2
    assert analyse_model(shape_of("llama-3-70b")).kv_bytes_per_token(2) == 320 * 1024  # 2*80*8*128*2
    assert analyse_model(shape_of("llama-3-405b")).kv_bytes_per_token(2) == 504 * 1024  # 2*126*8*128*2
    assert analyse_model(shape_of("llama-3-70b")).kv_bytes_per_token(1) == 160 * 1024


def test_little_law_matches_published_load():
    # inference-calibration.md 5d: C10 at QPS 2 with 5.4 s end-to-end -> ~11 requests in flight.
    assert little_law_concurrency(2, 5.4) == pytest.approx(10.8)


def test_replicas_by_little_law_hand_case():
    # A replica holding 20 sequences for 5 s each serves 20 / 5 = 4 req/s; planned at 50 % that is 2 req/s,
    # so 10 req/s needs 5 replicas; 10.1 req/s needs 6.
    assert replicas_for_rate(10, max_batch=20, e2e_s=5, utilization=0.5) == 5
    assert replicas_for_rate(10.1, max_batch=20, e2e_s=5, utilization=0.5) == 6
    assert replicas_for_rate(0.01, max_batch=20, e2e_s=5, utilization=0.5) == 1


def test_max_batch_for_tpot_bisection():
    # TPOT = 10 ms + 1 ms per sequence: a 50 ms target allows 40 sequences; memory may cap it lower.
    tpot = lambda b: 0.010 + 0.001 * b  # noqa: E731
    assert max_batch_for_tpot(tpot, 0.050, limit=256) == 40
    assert max_batch_for_tpot(tpot, 0.050, limit=12) == 12
    assert max_batch_for_tpot(tpot, 0.005, limit=256) == 0


LLAMA8_COMPUTE = 7_504_924_672  # 8,030,261,248 params - 525,336,576 input-embedding lookups
LLAMA8_WEIGHT_BYTES = 8_030_261_248 * 2


def test_hand_worked_replica_llama8b_h100(plan):
    p = plan(
        {
            "workload": "inference",
            "model": {"preset": "llama-3-8b"},
            "inference": {
                "requests_per_s": 10,
                "prompt_tokens": 1000,
                "output_tokens": 1000,
                "ttft_ms": 1000,
                "tpot_ms": 1000,
                "parallelism": {"tp": 1},
            },
            "hardware": {"system": "dgx-h100"},
            "assumptions": {"decode_mbu": 0.5, "prefill_mfu": 0.5, "decode_step_overhead_ms": 0},
        }
    )
    assert p["feasible"], p["problems"]
    inf = p["inference"]
    # TTFT = (2 N P + 4 L P^2 h) / (peak x MFU) = (2*7.5049e9*1000 + 4*32*1000^2*4096) / (989e12 * 0.5) = 31.41 ms.
    ttft = (2 * LLAMA8_COMPUTE * 1000 + 4 * 32 * 1000**2 * 4096) / (989e12 * 0.5)
    assert inf["ttft_ms"] == pytest.approx(ttft * 1000) and inf["ttft_ms"] == pytest.approx(31.41, abs=0.01)
    # KV memory: 80 GiB x 0.9 - 16.06 GB weights = 61.25 GB; / (128 KiB x 2000 tokens) = 233.6 -> 233 sequences.
    assert inf["max_batch_per_replica"] == 233
    # TPOT at 233: (16.06 GB + 233 x 1500 tokens x 128 KiB) / (3.35 TB/s x 0.5) = 36.94 ms (memory bound; the
    # compute leg is 7.4 ms). Capacity = 233 / (0.0314 + 1000 x 0.03694) = 6.30 req/s; x 0.7 -> 4.41; 10 / 4.41
    # = 2.27 -> 3 replicas.
    tpot233 = (LLAMA8_WEIGHT_BYTES + 233 * 1500 * 131072) / (3.35e12 * 0.5)
    capacity = 233 / (ttft + 1000 * tpot233)
    assert capacity == pytest.approx(6.30, abs=0.01)
    assert inf["replicas"] == 3 and inf["gpus"] == 3 and inf["gpus_per_replica"] == 1
    # Operating point: each replica carries 10/3 req/s, below capacity, so TPOT sits below the 233-batch value.
    assert inf["tpot_ms"] < tpot233 * 1000
    assert inf["concurrency_per_replica"] == pytest.approx(10 / 3 * (ttft + 1000 * inf["tpot_ms"] / 1000), rel=1e-6)
    assert inf["tokens_per_s"] == 10 * 1000
    assert p["cluster"]["systems"] == 1


def test_tpot_target_too_tight_names_bandwidth(plan):
    # Llama 3 8B BF16 on H100 at TP 8: 16.06 GB / 8 / (3.35 TB/s x 0.55) = 1.09 ms + 0.5 ms overhead > 1 ms.
    p = plan(
        {
            "workload": "inference",
            "model": {"preset": "llama-3-8b"},
            "inference": {"requests_per_s": 1, "prompt_tokens": 100, "output_tokens": 100, "tpot_ms": 1},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert p["feasible"] is False
    text = " ".join(p["problems"])
    assert "TPOT" in text and "bandwidth" in text
    assert "inference" not in p


def test_ttft_target_too_tight_names_compute(plan):
    p = plan(
        {
            "workload": "inference",
            "model": {"preset": "llama-3-70b"},
            "inference": {"requests_per_s": 1, "prompt_tokens": 100000, "output_tokens": 100, "ttft_ms": 10},
            "hardware": {"system": "dgx-h200"},
        }
    )
    assert not p["feasible"]
    assert "TTFT" in " ".join(p["problems"])


def test_weights_that_fit_no_gpu_name_memory(plan):
    # 405.9e9 x 2 B = 812 GB over tp 8 pp 1 = 94.5 GiB per GPU > 80 GiB x 0.9 usable on A100.
    p = plan(
        {
            "workload": "inference",
            "model": {"preset": "llama-3-405b"},
            "inference": {
                "requests_per_s": 1,
                "prompt_tokens": 1000,
                "output_tokens": 100,
                "parallelism": {"tp": 8, "pp": 1},
            },
            "hardware": {"system": "dgx-a100-80gb"},
        }
    )
    assert not p["feasible"]
    assert "memory" in " ".join(p["problems"])


def test_fp8_halves_weight_memory_and_kv(plan):
    body = {
        "workload": "inference",
        "model": {"preset": "llama-3-70b"},
        "inference": {"requests_per_s": 2, "prompt_tokens": 1000, "output_tokens": 500, "parallelism": {"tp": 4}},
        "hardware": {"system": "dgx-h100"},
    }
    bf16 = plan(body)["inference"]
    fp8 = plan({**body, "inference": {**body["inference"], "precision": "fp8"}})
    assert fp8["inference"]["weights_gib_per_gpu"] == pytest.approx(bf16["weights_gib_per_gpu"] / 2)
    assert fp8["inference"]["kv_bytes_per_token"] == 160 * 1024
    assert fp8["assumptions"]["kv_cache_bytes_per_element"]["default"] == 1.0
    assert fp8["inference"]["compute_precision"] == "fp8"


def test_moe_decode_reads_only_touched_experts(plan):
    # At batch ~1 Mixtral reads ~1/4 of its experts, so its TPOT is far below a dense 46.7B model's.
    body = {
        "inference": {"requests_per_s": 0.01, "prompt_tokens": 100, "output_tokens": 100, "parallelism": {"tp": 2}},
        "workload": "inference",
        "hardware": {"system": "dgx-h100"},
    }
    moe = plan({**body, "model": {"preset": "mixtral-8x7b"}})["inference"]
    dense = plan({**body, "model": {"preset": "mixtral-8x7b", "moe": {"experts": 8, "active": 8}}})["inference"]
    assert moe["tpot_ms"] < 0.5 * dense["tpot_ms"]
