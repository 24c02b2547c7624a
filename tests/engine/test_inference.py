"""Inference sizing: hand-worked formulas, physical limits, the search, and targets that cannot be met.

Expected values are derived by hand in the comments (inference-calibration.md section 2 formulas, hardware.md
peaks), never copied from engine output.
"""

from __future__ import annotations

import itertools

import pytest

from calibration.serving import constants_from
from engine.assumptions.registry import Assumptions
from engine.performance.serving import ReplicaModel
from engine.search.serving import little_law_concurrency, max_batch_for_tpot, replicas_for_rate
from engine.workload.model import analyse_model

LLAMA8_PARAMS = 8_030_261_248  # derived from the shape (inference-calibration.md section 1: 8.03B)
LLAMA8_COMPUTE = 7_504_924_672  # minus 128,256 x 4,096 input-embedding lookups
GIB = 1024**3

# Round, hand-checkable constants: MBU 0.5, no fixed costs, GEMM efficiency 0.5 x n / (n + 1) (~0.5 at n >= 1000).
HAND = {
    "decode_mbu": 0.5,
    "decode_step_overhead_ms": 0.0,
    "inference_allreduce_latency_us": 0.0,
    "prefill_mfu": 0.5,
    "prefill_half_mfu_tokens": 1.0,
    "inference_memory_utilization": 0.9,
    "max_batch_per_replica": 1000,
}


def _replica(
    catalog,
    preset_shape,
    gpu_id: str,
    tp: int,
    pp: int = 1,
    prompt: int = 1000,
    output: int = 1000,
    bytes_per_param: float = 2.0,
    kv_bytes: float = 2.0,
    overrides: dict | None = None,
) -> ReplicaModel:
    work = analyse_model(preset_shape)
    gpu = catalog.gpus[gpu_id]
    a = Assumptions(overrides=dict(overrides if overrides is not None else HAND))
    peak = gpu.bf16_dense_tflops if bytes_per_param >= 2 else gpu.fp8_dense_tflops
    return ReplicaModel(
        work,
        gpu,
        tp,
        pp,
        prompt,
        output,
        bytes_per_param,
        work.kv_bytes_per_token(kv_bytes),
        peak * 1e12,
        constants_from(a),
    )


def test_kv_bytes_per_token_llama(shape_of):
    # inference-calibration.md section 1: 2 x layers x kv_heads x head_dim x 2 bytes.
    assert analyse_model(shape_of("llama-3-8b")).kv_bytes_per_token(2) == 128 * 1024  # 2*32*8*128*2
    assert analyse_model(shape_of("llama-3-70b")).kv_bytes_per_token(2) == 320 * 1024  # 2*80*8*128*2
    assert analyse_model(shape_of("llama-3-405b")).kv_bytes_per_token(2) == 504 * 1024  # 2*126*8*128*2
    assert analyse_model(shape_of("llama-3-70b")).kv_bytes_per_token(1) == 160 * 1024


def test_little_law_matches_published_load():
    # inference-calibration.md 5d: C10 at QPS 2 with 5.4 s end-to-end -> ~11 requests in flight.
    assert little_law_concurrency(2, 5.4) == pytest.approx(10.8)


def test_replicas_for_rate_hand_case():
    # A replica sustaining 4 req/s planned at 50 % carries 2 req/s: 10 req/s -> 5 replicas, 10.1 -> 6, tiny -> 1.
    assert replicas_for_rate(10, 4, 0.5) == 5
    assert replicas_for_rate(10.1, 4, 0.5) == 6
    assert replicas_for_rate(0.01, 4, 0.5) == 1


def test_max_batch_bisection():
    # TPOT = 10 ms + 1 ms per sequence: a 50 ms target allows 40 sequences; the limit may cap it lower.
    meets = lambda b: 0.010 + 0.001 * b <= 0.050  # noqa: E731
    assert max_batch_for_tpot(meets, 256) == 40
    assert max_batch_for_tpot(meets, 12) == 12
    assert max_batch_for_tpot(lambda b: False, 256) == 0


def test_hand_worked_llama8b_h100_replica(catalog, shape_of):
    m = _replica(catalog, shape_of("llama-3-8b"), "h100-sxm", tp=1)
    # Memory: 80 GiB x 0.9 = 77,309,411,328 B; weights 8,030,261,248 x 2 = 16,060,522,496 B; workspace 8192 tokens
    # x (4096 + (2 x 14336 + 3 x 4096)) x 2 B = 738,197,504 B -> KV budget 60,510,691,328 B.
    assert m.kv_budget_bytes_per_gpu() == pytest.approx(60_510_691_328)
    # Each sequence reserves 2000 tokens x 128 KiB = 262,144,000 B -> 230.8 -> 230 sequences.
    assert m.max_sequences_by_memory() == 230
    # Decode step at batch 1: (16,060,522,496 + 1500 x 131,072) B / (3.35e12 x 0.5) = 9.7057 ms, bandwidth bound
    # (compute: 2 x 7.5e9 FLOPs / (989e12 x 0.25) = 0.06 ms).
    assert m.decode_step_s(1) * 1000 == pytest.approx(9.7057, rel=1e-4)
    # Batch 100: (16,060,522,496 + 100 x 1500 x 131,072) / 1.675e12 = 21.33 ms.
    assert m.decode_step_s(100) * 1000 == pytest.approx(21.3261, rel=1e-4)
    # Prefill of 1000 tokens alone: (2 x 7,504,924,672 x 1000 + 4 x 32 x 1000^2 x 4096) = 1.55341e13 FLOPs
    # / (989e12 x 0.5 x 1000/1001) = 31.445 ms (the 9.6 ms weight read is hidden under it).
    assert m.prefill_s(1000) * 1000 == pytest.approx(31.445, rel=1e-3)
    # Continuous batching at 100: replica time per output token = 21.326/100 ms + batched prefill (at 8192-token
    # efficiency, 31.417 ms) / 1000 = 0.21326 + 0.031417 ms -> 4,079 tok/s; user TPOT = 100 / 4,079 = 24.5 ms.
    p = m.point(100)
    assert p.tokens_per_s == pytest.approx(1000 / (0.213261 + 0.0314174), rel=1e-3)
    assert p.tpot_s * 1000 == pytest.approx(100 / 4087.0 * 1000, rel=2e-3)


def test_hand_worked_plan_llama8b(plan):
    p = plan(
        {
            "workload": "inference",
            "model": {"preset": "llama-3-8b"},
            "inference": {
                "requests_per_s": 10,
                "prompt_tokens": 1000,
                "output_tokens": 1000,
                "ttft_ms": 1000,
                "tpot_ms": 40,
                "parallelism": {"tp": 1},
            },
            "hardware": {"system": "dgx-h100"},
            "assumptions": HAND,
        }
    )
    assert p["feasible"], p["problems"]
    inf = p["inference"]
    # TPOT(B) ~= (16.06e9 + B x 196.6e6) / 1.675e12 + B x 0.0314 ms = 9.588 + 0.1488 B ms; <= 40 ms at B <= 204
    # (memory allows 230): capacity ~ 204 / 40 ms = 5,100 tok/s = 5.1 req/s; at 70 % that is 3.57 req/s per
    # replica, so 10 req/s needs 3 replicas.
    assert inf["limit"] == "TPOT"
    assert inf["capacity_batch_per_replica"] in (203, 204)
    assert inf["capacity_requests_per_s_per_replica"] == pytest.approx(5.1, rel=0.01)
    assert inf["replicas"] == 3 and inf["gpus"] == 3 and inf["gpus_per_replica"] == 1
    assert inf["tokens_per_s_per_gpu"] == pytest.approx(5100, rel=0.01)
    assert inf["tokens_per_s"] == pytest.approx(3 * 5100, rel=0.01)  # fleet capacity, not the demand
    assert inf["demand_tokens_per_s"] == 10 * 1000
    # The operating point carries 10/3 req/s each: below capacity, so TPOT sits below the target and Little's
    # law holds: batch = rate x output x TPOT.
    assert inf["tpot_ms"] < 40 and inf["ttft_ms"] < 1000
    assert inf["concurrency_per_replica"] == pytest.approx(10 / 3 * 1000 * inf["tpot_ms"] / 1000, rel=1e-3)
    assert inf["kv_bytes_per_token"] == 128 * 1024
    assert inf["spans_systems"] is False and inf["needs_scaleout_fabric"] is False
    assert p["explain"]["inference.tpot_ms"]["formula"] and p["explain"]["inference.tokens_per_s_per_gpu"]["inputs"]


def test_curve_rises_in_throughput_and_latency(plan):
    p = plan(
        {
            "workload": "inference",
            "model": {"preset": "llama-3-70b"},
            "inference": {"requests_per_s": 5, "prompt_tokens": 1000, "output_tokens": 500},
            "hardware": {"system": "dgx-h200"},
        }
    )
    curve = p["inference"]["curve"]
    assert [c["batch"] for c in curve][:4] == [1, 2, 4, 8]
    assert all(b["tokens_per_s_per_gpu"] > a["tokens_per_s_per_gpu"] for a, b in itertools.pairwise(curve))
    assert all(b["tpot_ms"] >= a["tpot_ms"] for a, b in itertools.pairwise(curve))
    assert any(c["meets_targets"] for c in curve) and not all(c["meets_targets"] for c in curve)


SYSTEMS = ["dgx-a100-80gb", "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72"]
CASES = [
    ("llama-3-8b", "bf16"),
    ("llama-3-70b", "bf16"),
    ("llama-3-70b", "fp8"),
    ("llama-3-70b", "int4"),
    ("mixtral-8x7b", "bf16"),
    ("llama-3-405b", "fp8"),
]


@pytest.mark.parametrize("system", SYSTEMS)
@pytest.mark.parametrize(("preset", "precision"), CASES)
def test_physical_limits_hold(plan, catalog, system, preset, precision):
    """TPOT >= weight bytes / (TP x HBM bandwidth); tokens/s per GPU <= peak / (2 x active params)."""
    p = plan(
        {
            "workload": "inference",
            "model": {"preset": preset},
            "inference": {
                "requests_per_s": 3,
                "prompt_tokens": 2000,
                "output_tokens": 400,
                "tpot_ms": 200,
                "ttft_ms": 5000,
                "precision": precision,
            },
            "hardware": {"system": system},
        }
    )
    if not p["feasible"]:
        assert p["problems"]
        return
    inf, model = p["inference"], p["model"]
    gpu = catalog.gpu_of(catalog.systems[system])
    bytes_per_param = {"bf16": 2.0, "fp8": 1.0, "int4": 0.5}[precision]  # 0.5 = a floor below INT4 + scales
    tp = inf["parallelism"]["tp"]
    # MoE reads at least the dense part plus the active experts' share; params x active/total is a lower bound.
    weights = model["params"] * bytes_per_param * (model["active_params"] / model["params"])
    floor_ms = weights / (tp * gpu.hbm_tbps * 1e12) * 1000
    peak = {
        "bf16": gpu.bf16_dense_tflops,
        "fp8": gpu.fp8_dense_tflops or gpu.bf16_dense_tflops,
        "int4": gpu.bf16_dense_tflops,
    }[precision] * 1e12
    roofline = peak / (2 * model["compute_params_active"])
    for point in [{"tpot_ms": inf["tpot_ms"], "tokens_per_s_per_gpu": inf["tokens_per_s_per_gpu"]}, *inf["curve"]]:
        assert point["tpot_ms"] >= floor_ms
        assert point["tokens_per_s_per_gpu"] <= roofline
    # Capacity planning: the fleet at the utilisation target carries the demand; latencies meet the targets.
    assert inf["tokens_per_s"] * inf["utilization_target"] >= inf["demand_tokens_per_s"] * (1 - 1e-9)
    assert inf["tpot_ms"] <= 200 and inf["ttft_ms"] <= 5000


def test_70b_bf16_never_fits_one_80gb_gpu(plan):
    # 70.6e9 params x 2 B = 141 GB > 80 GB before any KV cache.
    for system in ("dgx-h100", "dgx-a100-80gb"):
        p = plan(
            {
                "workload": "inference",
                "model": {"preset": "llama-3-70b"},
                "inference": {
                    "requests_per_s": 1,
                    "prompt_tokens": 100,
                    "output_tokens": 100,
                    "parallelism": {"tp": 1, "pp": 1},
                },
                "hardware": {"system": system},
                "assumptions": {"inference_memory_utilization": 1.0},
            }
        )
        assert p["feasible"] is False
        cand = p["candidates"][0]
        assert cand["limit"] == "memory" and "memory" in cand["reason"]
        assert cand["closest"]["memory_needed_gib_per_gpu"] > 70.6e9 * 2 / GIB  # 131.5 GiB of weights alone
        assert cand["closest"]["memory_usable_gib_per_gpu"] == 80.0


def test_pipeline_only_when_tp_domain_cannot_hold_the_model(plan):
    # 405B BF16 = 812 GB; over 8 x 80 GB H100 (640 GB) it cannot fit at TP 8, so PP 2 (16 GPUs, two systems).
    p = plan(
        {
            "workload": "inference",
            "model": {"preset": "llama-3-405b"},
            "inference": {"requests_per_s": 1, "prompt_tokens": 1000, "output_tokens": 200, "tpot_ms": 200},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert p["feasible"], p["problems"]
    inf = p["inference"]
    assert inf["parallelism"]["pp"] >= 2 and inf["gpus_per_replica"] >= 16
    assert inf["spans_systems"] is True and inf["needs_scaleout_fabric"] is True
    # 70B FP8 fits at TP <= 8 on H100, so no pipeline stage is proposed.
    q = plan(
        {
            "workload": "inference",
            "model": {"preset": "llama-3-70b"},
            "inference": {"requests_per_s": 1, "prompt_tokens": 1000, "output_tokens": 200, "precision": "fp8"},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert q["inference"]["parallelism"]["pp"] == 1


def test_pinned_shape_is_respected(plan):
    p = plan(
        {
            "workload": "inference",
            "model": {"preset": "llama-3-70b"},
            "inference": {
                "requests_per_s": 4,
                "prompt_tokens": 1000,
                "output_tokens": 200,
                "parallelism": {"tp": 8, "pp": 1},
            },
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert p["inference"]["parallelism"] == {"tp": 8, "pp": 1} and p["inference"]["gpus"] % 8 == 0


def test_tpot_target_too_tight_names_bandwidth_and_closest(plan):
    # Llama 3 8B BF16 on H100, best case TP 8: 16.06 GB / 8 / 3.35 TB/s = 0.60 ms even at 100 % bandwidth,
    # so a 0.5 ms target is physically impossible.
    p = plan(
        {
            "workload": "inference",
            "model": {"preset": "llama-3-8b"},
            "inference": {"requests_per_s": 1, "prompt_tokens": 100, "output_tokens": 100, "tpot_ms": 0.5},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert p["feasible"] is False and "inference" not in p
    text = " ".join(p["problems"])
    assert "TPOT" in text and "bandwidth" in text
    cand = p["candidates"][0]
    assert cand["limit"] == "TPOT"
    assert cand["closest"]["tpot_ms"] >= 16.06e9 / 8 / 3.35e12 * 1000


def test_ttft_target_too_tight_names_compute(plan):
    # 100k-token prompt on 70B: 2 x 69.5e9 x 1e5 = 1.4e16 FLOPs / (8 x 989e12) = 1.8 s even at 100 % of peak.
    p = plan(
        {
            "workload": "inference",
            "model": {"preset": "llama-3-70b"},
            "inference": {"requests_per_s": 1, "prompt_tokens": 100000, "output_tokens": 100, "ttft_ms": 10},
            "hardware": {"system": "dgx-h200"},
        }
    )
    assert not p["feasible"]
    cand = p["candidates"][0]
    assert "TTFT" in cand["limit"] and cand["closest"]["ttft_ms"] > 1800


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


def test_moe_memory_for_all_experts_decode_for_touched(plan):
    # Mixtral 8x7B: memory holds all 46.7B params, but at batch ~1 decode reads ~2/8 of the experts.
    body = {
        "inference": {"requests_per_s": 0.01, "prompt_tokens": 100, "output_tokens": 100, "parallelism": {"tp": 2}},
        "workload": "inference",
        "hardware": {"system": "dgx-h100"},
    }
    moe = plan({**body, "model": {"preset": "mixtral-8x7b"}})["inference"]
    dense = plan({**body, "model": {"preset": "mixtral-8x7b", "moe": {"experts": 8, "active": 8}}})["inference"]
    assert moe["weights_gib_per_gpu"] == pytest.approx(dense["weights_gib_per_gpu"])
    assert moe["tpot_ms"] < 0.5 * dense["tpot_ms"]
