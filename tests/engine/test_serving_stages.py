"""The KV cache a serving replica keeps per GPU: on the fullest pipeline stage rather than the average layer, and
whole on every tensor-parallel GPU for latent attention. Expected values are worked out by hand from the layer
split (vLLM's get_pp_indices), where the full-attention layers fall, and the models' published shapes."""

from __future__ import annotations

import pytest

from calibration.serving import constants_from
from engine import validate_request
from engine.assumptions.registry import Assumptions
from engine.performance.serving import ReplicaModel
from engine.workload.model import analyse_model, serving_stage_layers


def _shape(catalog, **model):
    body = {"workload": "training", "model": model, "training": {"tokens": 1e12, "gpus": 64}}
    return validate_request(body, catalog).model


def _replica(catalog, shape, tp: int, pp: int, prompt: int, output: int, kv_bytes: float = 2.0,
             weight_bytes: float = 2.0) -> ReplicaModel:  # fmt: skip
    work = analyse_model(shape)
    gpu = catalog.gpus["h100-sxm"]
    return ReplicaModel(work, gpu, tp, pp, prompt, output, weight_bytes, work.kv_bytes_per_token(kv_bytes),
                        gpu.bf16_dense_tflops * 1e12, constants_from(Assumptions()))  # fmt: skip


@pytest.mark.parametrize(
    ("layers", "pp", "expected"),
    [
        (126, 4, (31, 32, 32, 31)),  # 31 each, the 2 left over to the stages before the last
        (62, 4, (15, 16, 16, 15)),
        (80, 4, (20, 20, 20, 20)),
        (61, 8, (7, 7, 8, 8, 8, 8, 8, 7)),  # 5 left over: stages -2 to -6
        (36, 1, (36,)),
    ],
)
def test_layers_split_over_serving_stages_as_vllm_does(layers, pp, expected):
    assert serving_stage_layers(layers, pp) == expected
    assert sum(expected) == layers


def _fullest(work, context: float, pp: int) -> float:
    """Cached tokens summed over the layers of the fullest of `pp` serving stages."""
    return max(work.stage_cached_tokens(stage, context) for stage in work.serving_stages(pp))


def test_gemma3_fullest_stage_holds_three_full_attention_layers(catalog):
    """Gemma 3 27B on PP4: its 10 full-attention layers, spread evenly, fall at layers 3, 9, 15, 21, 27, 34, 40, 46,
    52, 58 (floor((j + 1/2) x 6.2)); the stages hold layers 0-14, 15-30, 31-46, 47-61, so 2, 3, 3 and 2 of them. A
    32,000-token sequence keeps 3 x 32,000 + 13 x 1,024 layer-tokens on the second stage, against the average
    stage's (10 x 32,000 + 52 x 1,024) / 4: 17 % more."""
    gemma = _shape(catalog, preset="gemma-3-27b")
    work = analyse_model(gemma)
    fullest = 3 * 32_000 + 13 * 1024
    assert _fullest(work, 32_000, 4) == pytest.approx(fullest)
    average = (10 * 32_000 + 52 * 1024) / 4
    assert fullest / average == pytest.approx(1.1715, abs=1e-4)
    # Short contexts: every layer keeps the whole context, so the stage with the most layers (16) is the fullest.
    assert _fullest(work, 800, 4) == pytest.approx(16 * 800)
    # One stage: all the layers, as the average layer times the layer count.
    assert _fullest(work, 32_000, 1) == pytest.approx(10 * 32_000 + 52 * 1024)

    m = _replica(catalog, gemma, 8, 4, 30_000, 2_000)
    # Per GPU: one layer's K and V per token (2 x 16 heads x 128 x 2 B = 8,192 B) over TP8's share of the 16 KV
    # heads, times the fullest stage's layer-tokens.
    assert m.kv_bytes_per_sequence_per_gpu() == pytest.approx(8192 / 8 * fullest)
    # A decode step reads it at the mean context, 31,000 tokens: the same stage, 3 x 31,000 + 13 x 1,024.
    assert m.kv_read_bytes_per_gpu(4) == pytest.approx(4 * 8192 / 8 * (3 * 31_000 + 13 * 1024))


def test_uneven_dense_stages_fill_by_their_layer_count(catalog):
    """Llama 3 405B on PP4 holds 32 of its 126 layers on the fullest stage, not 31.5."""
    shape = _shape(catalog, preset="llama-3-405b")
    m = _replica(catalog, shape, 8, 4, 4000, 1000)
    per_layer = 2 * 8 * 128 * 2 / 8  # K and V of 8 KV heads of 128, 2 B, one head per TP8 rank
    assert m.kv_bytes_per_sequence_per_gpu() == pytest.approx(per_layer * 32 * 5000)


def test_latent_attention_keeps_the_whole_latent_on_every_tensor_parallel_gpu(catalog):
    """DeepSeek-V3 caches a 512-wide latent and a 64-wide rotary key per layer and token (61 layers). Every head
    reads the same latent, so TP8 does not split it: each GPU keeps 61 x 576 x 2 B per token."""
    shape = _shape(catalog, preset="deepseek-v3")
    m = _replica(catalog, shape, 8, 1, 2000, 500)
    assert m.kv_tp_split == 1
    assert m.kv_bytes_per_sequence_per_gpu() == pytest.approx(61 * 576 * 2 * 2500)
    # A grouped-query model at the same TP splits its KV heads: Llama 3 70B, 8 heads over TP8.
    llama = _replica(catalog, _shape(catalog, preset="llama-3-70b"), 8, 1, 2000, 500)
    assert llama.kv_tp_split == 8
    assert llama.kv_bytes_per_sequence_per_gpu() == pytest.approx(80 * 2 * 128 * 2 * 2500)


def test_serving_plan_explains_the_fullest_stage(plan):
    body = {"workload": "inference", "model": {"preset": "gemma-3-27b"}, "hardware": {"system": "dgx-h100"},
            "inference": {"requests_per_s": 1, "prompt_tokens": 30_000, "output_tokens": 2_000,
                          "parallelism": {"tp": 4, "pp": 2}}}  # fmt: skip
    result = plan(body)
    entry = result["explain"]["inference.kv_bytes_per_token"]
    # PP2: 31 layers each; full layers 3, 9, 15, 21, 27 on the first, 34, 40, 46, 52, 58 on the second: 5 each.
    # The same cache on both; the first also holds the embedding, the last the head (tied: the same matrix on
    # both), so neither is lighter and the tie goes to the first.
    assert entry["inputs"]["its layers"] == 31 and entry["inputs"]["its full-attention layers"] == 5
    per_gpu = 8192 / 4 * (5 * 32_000 + 26 * 1024)
    assert entry["inputs"]["KV per sequence per GPU there (MiB)"] == pytest.approx(per_gpu / 2**20)
    assert "fewest sequences" in entry["formula"] and "None" not in str(entry)


def _deepseek_layer_params() -> dict[str, int]:
    """DeepSeek-V3's parameters by part (technical report section 4.2, with its 128 heads of 128 + 64 rotary, query
    latent 1,536, KV latent 512, values 128, 3 dense layers of FFN 18,432, 256 + 1 experts of 2,048), worked out
    from the shape alone."""
    h = 7168
    query = h * 1536 + 1536 + 1536 * 128 * (128 + 64)
    key_value = h * (512 + 64) + 512 + 512 * 128 * (128 + 128)
    attention = query + key_value + 128 * 128 * h
    return {
        "common": attention + 2 * h,  # attention and the two norms
        "dense_ffn": 3 * h * 18432,
        "expert_layer": h * 256 + 3 * h * 2048 * 257,  # router, 256 routed + 1 shared SwiGLU experts
        "router": h * 256,
        "latents": h * (1536 + 512 + 64),  # the query and KV down-projections vLLM keeps whole
        "embedding": 129280 * h,
        "head": 129280 * h + h,  # untied head and the final norm
    }


def test_deepseek_stages_hold_their_own_layers_and_the_whole_latent_projections(catalog):
    """PP2 splits 61 layers 31 + 30 (the extra one before the last). The first stage holds the 3 dense layers, 28
    expert layers and the embedding; the second 30 expert layers and the head. Each GPU keeps its stage's
    routers and latent down-projections whole; the rest is split over TP8."""
    p = _deepseek_layer_params()
    m = _replica(catalog, _shape(catalog, preset="deepseek-v3"), 8, 2, 2000, 500, kv_bytes=1.0, weight_bytes=1.0)
    assert [s.layers for s in m.stages] == [31, 30] and [s.dense_ffn for s in m.stages] == [3, 0]
    whole_0 = 28 * p["router"] + 31 * p["latents"]
    first = 31 * p["common"] + 3 * p["dense_ffn"] + 28 * p["expert_layer"] + p["embedding"]
    whole_1 = 30 * p["router"] + 30 * p["latents"]
    last = 30 * p["common"] + 30 * p["expert_layer"] + p["head"]
    # FP8 weights, 1 B each
    assert m.stage_weight_bytes[0] == pytest.approx((first - whole_0) / 8 + whole_0, rel=1e-12)
    assert m.stage_weight_bytes[1] == pytest.approx((last - whole_1) / 8 + whole_1, rel=1e-12)
    # The first stage is lighter by three narrow dense layers but caches 31 layers to the other's 30; the stage
    # that fits the fewest sequences sets the budget.
    usable = m.usable_bytes_per_gpu() - m.activation_bytes_per_gpu()
    per_layer_sequence = 576 * 1.0 * 2500  # latent + rotary key, 1 B each (FP8 cache), whole on every GPU
    fits = [(usable - m.stage_weight_bytes[0]) / (31 * per_layer_sequence),
            (usable - m.stage_weight_bytes[1]) / (30 * per_layer_sequence)]  # fmt: skip
    assert m.max_sequences_by_memory() == int(min(fits))
    assert m.binding_stage.index == fits.index(min(fits))
    # The replica's cache for 10 sequences: each stage's, on each of its 8 GPUs.
    assert m.kv_used_bytes_per_replica(10) == pytest.approx(10 * 8 * 61 * per_layer_sequence)
    # The fullest GPU with 10 sequences: the larger of weights + workspace + cache over the stages.
    act = m.activation_bytes_per_gpu()
    expected = max(m.stage_weight_bytes[0] + act + 10 * 31 * per_layer_sequence,
                   m.stage_weight_bytes[1] + act + 10 * 30 * per_layer_sequence)  # fmt: skip
    assert m.memory_bytes_per_gpu(10) == pytest.approx(expected)


def test_one_stage_holds_the_whole_model_as_before(catalog):
    """At pp 1 the stage is the model: Llama 3 70B's weights per GPU are its parameters / tp (embedding and untied
    head included), 70.55B / 4."""
    m = _replica(catalog, _shape(catalog, preset="llama-3-70b"), 4, 1, 2000, 500)
    assert m.weight_bytes_per_gpu() == pytest.approx(m.work.params / 4 * 2.0, rel=1e-12)


def test_latent_attention_decodes_against_the_latent(catalog):
    """DeepSeek-V3 decodes with the key and value up-projections absorbed: per cached token and layer each of 128
    heads scores 512 latent + 64 rotary values and sums 512 latent values, 2 x 128 x 1,088 FLOPs, against
    2 x 128 x (192 + 128) with the expanded keys and values."""
    work = analyse_model(_shape(catalog, preset="deepseek-v3"))
    per_token = 2.0 * work.compute_params_active
    assert work.decode_flops_per_token(4000) == pytest.approx(per_token + 2 * 61 * 128 * 1088 * 4000, rel=1e-12)
    llama = analyse_model(_shape(catalog, preset="llama-3-70b"))  # grouped-query: the expanded widths, 8192 each
    assert llama.decode_flops_per_token(4000) == pytest.approx(
        2.0 * llama.compute_params_active + 2 * 80 * (8192 + 8192) * 4000, rel=1e-12
    )
