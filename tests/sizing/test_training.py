"""Training sizing: hand-computed time to train, deadline rounding, pinned layouts, infeasible requests."""

from __future__ import annotations

import math

import pytest

# Llama 3 8B by hand (see test_workload): compute params = 8,030,261,248 - 128,256 x 4,096 = 7,504,924,672.
LLAMA8_COMPUTE_PARAMS = 7_504_924_672
# FLOPs per token = 6 N + 12 l s h = 6 x 7,504,924,672 + 12 x 32 x 8192 x 4096.
LLAMA8_FLOPS_PER_TOKEN = 6 * LLAMA8_COMPUTE_PARAMS + 12 * 32 * 8192 * 4096
H100_ACHIEVED = 989e12 * 0.40  # dense BF16 peak x default MFU


def test_time_to_train_on_fixed_gpus(plan):
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-8b"},
            "training": {"tokens": 1e12, "gpus": 64},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert p["feasible"]
    t = p["training"]
    days = LLAMA8_FLOPS_PER_TOKEN * 1e12 / (64 * H100_ACHIEVED) / 86_400  # about 26.5 days
    assert t["days"] == pytest.approx(days, rel=1e-9)
    assert t["days"] == pytest.approx(26.47, abs=0.01)
    assert t["gpus"] == 64 and t["mfu"] == 0.40
    assert t["model_tflops_per_gpu"] == pytest.approx(395.6)
    assert t["tokens_per_s"] == pytest.approx(64 * H100_ACHIEVED / LLAMA8_FLOPS_PER_TOKEN)
    par = t["parallelism"]
    assert par["tp"] * par["pp"] * par["dp"] == 64
    assert t["memory_per_gpu_gib"] <= 80
    assert set(t["memory_breakdown_gib"]) == {"weights", "gradients", "optimizer", "activations", "reserve"}


def test_deadline_rounds_up_to_whole_systems(plan):
    total = LLAMA8_FLOPS_PER_TOKEN * 1e12
    # Choose the deadline so the ideal count is 100.3 GPUs: the cluster must round up to 13 DGX = 104 GPUs.
    deadline = total / (100.3 * H100_ACHIEVED * 86_400)
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-8b"},
            "training": {"tokens": 1e12, "deadline_days": deadline},
            "hardware": {"system": "dgx-h100"},
        }
    )
    t = p["training"]
    assert t["gpus"] == 104
    assert p["cluster"]["systems"] == 13 and p["cluster"]["gpus"] == 104
    assert t["days"] == pytest.approx(total / (104 * H100_ACHIEVED) / 86_400)
    assert t["days"] <= deadline
    par = t["parallelism"]
    assert par["tp"] * par["pp"] * par["dp"] == 104


def test_mfu_override_scales_time_exactly(plan):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-8b"},
        "training": {"tokens": 1e12, "gpus": 64},
        "hardware": {"system": "dgx-h100"},
    }
    base = plan(body)["training"]["days"]
    faster = plan({**body, "assumptions": {"training_mfu": 0.5}})
    assert faster["training"]["days"] == pytest.approx(base * 0.40 / 0.5)
    assert faster["assumptions"]["training_mfu"]["value"] == 0.5
    assert faster["assumptions"]["training_mfu"]["default"] == 0.40


def test_pinned_parallelism_is_respected(plan):
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-70b"},
            "training": {
                "tokens": 1e12,
                "gpus": 64,
                "parallelism": {"tp": 8, "pp": 2, "micro_batch": 1, "recompute": "full"},
            },
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert p["feasible"]
    assert p["training"]["parallelism"] == {"tp": 8, "pp": 2, "dp": 4, "micro_batch": 1, "recompute": "full"}


def test_pinned_tp_outside_nvlink_domain_is_infeasible(plan):
    # GPT-3 has 96 heads, so tp = 16 divides them, but a DGX H100 NVLink domain is 8 GPUs.
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "gpt-3-175b"},
            "training": {"tokens": 300e9, "gpus": 1024, "parallelism": {"tp": 16}},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert not p["feasible"]
    assert "NVLink domain" in " ".join(p["problems"])
    assert "training" not in p


def test_405b_on_one_a100_is_infeasible_on_memory(plan):
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-405b"},
            "training": {"tokens": 1e9, "gpus": 1, "parallelism": {"tp": 1, "pp": 1}},
            "hardware": {"system": "dgx-a100-80gb"},
        }
    )
    assert p["feasible"] is False
    text = " ".join(p["problems"])
    assert "memory" in text
    # 405.9e9 params x 16 B = 6.5 TB per GPU, i.e. thousands of GiB against 80 GiB.
    assert "80 GiB" in text
    for absent in ("training", "cluster", "power", "cooling"):
        assert absent not in p


def test_fp8_needs_fp8_tensor_cores(plan):
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-8b"},
            "training": {"tokens": 1e12, "gpus": 64, "precision": "fp8"},
            "hardware": {"system": "dgx-a100-80gb"},
        }
    )
    assert not p["feasible"] and "FP8" in " ".join(p["problems"])
    h100 = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-8b"},
            "training": {"tokens": 1e12, "gpus": 64, "precision": "fp8"},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert h100["training"]["model_tflops_per_gpu"] == pytest.approx(1979 * 0.28)


def test_deadline_beyond_cluster_cap_names_the_limit(plan):
    # 405B on 15T tokens in 5 days needs ~230k H100s at MFU 0.4, above the default 131,072-GPU cap. The global
    # batch (2^28 tokens = 32,768 sequences) is large enough that it is not the binding limit.
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-405b"},
            "training": {"tokens": 15e12, "deadline_days": 5, "global_batch_tokens": 2**28},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert not p["feasible"]
    text = " ".join(p["problems"])
    assert "max_cluster_gpus=131072" in text
    flops_per_token = 6 * (405_853_388_800 - 128_256 * 16_384) + 12 * 126 * 8192 * 16_384
    best_days = 15e12 * flops_per_token / (131_072 * H100_ACHIEVED) / 86_400
    assert f"{best_days:.1f} days" in text


def test_405b_batch_limit_matches_llama3_practice(plan):
    # With tp = 8 and m >= pp micro-batches, usable GPUs = 8 x sequences: Llama 3 405B's 16M-token batch
    # (2,048 sequences of 8,192) feeds at most 16,384 GPUs - the size Meta trained it on.
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-405b"},
            "training": {"tokens": 15e12, "deadline_days": 5, "global_batch_tokens": 16 * 2**20},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert not p["feasible"]
    assert "caps data parallelism at 16384 GPUs" in " ".join(p["problems"])


def test_global_batch_caps_data_parallelism(plan):
    # 8 sequences of 8192 tokens can feed at most dp = 8; with tp = 1 that is 8 GPUs, far from the deadline.
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-8b"},
            "training": {"tokens": 1e12, "deadline_days": 1, "global_batch_tokens": 8 * 8192},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert not p["feasible"]
    assert "global batch" in " ".join(p["problems"])


def test_step_time_consistent_with_batch(plan):
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-70b"},
            "training": {"tokens": 1e12, "gpus": 256},
            "hardware": {"system": "dgx-h100"},
        }
    )
    t = p["training"]
    tokens_per_step = t["global_batch_sequences"] * 8192
    assert t["step_time_s"] == pytest.approx(tokens_per_step / t["tokens_per_s"])
    assert t["global_batch_sequences"] <= 512 and math.isclose(t["mfu"], 0.4)
