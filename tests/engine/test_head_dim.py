"""A head size decoupled from hidden / heads (Qwen3: 32 query heads of 128 on a hidden size of 2,048).

Expected values are worked out by hand from the published configurations (Qwen Team, 'Qwen3 Technical Report',
arXiv 2505.09388, Table 2; the Qwen/Qwen3-30B-A3B and Qwen3-235B-A22B config.json files) and checked against the
published totals (30.5B / 3.3B and 235B / 22B) and against NVIDIA's published model TFLOP/s per GPU for the same
runs (Megatron-Bridge performance summary, 26.04.01 container), not read off the code.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine import run_plan, to_json, validate_request
from engine.assumptions.registry import Assumptions
from engine.performance.memory import activation_terms
from engine.performance.moe_terms import attention_gemms
from engine.performance.roofline import efficiency_for, gemm_time, hardware_for
from engine.request.validation import RequestInvalid
from engine.workload.model import analyse_model

VOCAB = 151_936


def _model(catalog, **model):
    body = {"workload": "training", "model": model, "training": {"tokens": 1e12, "gpus": 64}}
    return validate_request(body, catalog).model


def _by_hand(layers: int, hidden: int, heads: int, experts_width: int) -> tuple[int, int]:
    """(total, active) parameters: Q hidden x heads*128, O back, K and V hidden x 4*128, 128 SwiGLU experts (8
    active) of the given width, a router, two RMSNorm weights a layer, untied embedding and head, a final norm."""
    attention = 2 * hidden * heads * 128 + 2 * hidden * 4 * 128
    expert = 3 * hidden * experts_width
    per_layer_dense = attention + hidden * 128 + 2 * hidden
    embeddings = 2 * VOCAB * hidden + hidden
    total = layers * (per_layer_dense + 128 * expert) + embeddings
    active = layers * (per_layer_dense + 8 * expert) + embeddings
    return total, active


@pytest.mark.parametrize(
    ("preset", "layers", "hidden", "heads", "width", "published_total", "published_active"),
    [
        ("qwen3-30b-a3b", 48, 2048, 32, 768, 30.5e9, 3.3e9),
        ("qwen3-235b-a22b", 94, 4096, 64, 1536, 235e9, 22e9),
    ],
)
def test_qwen3_parameters_by_hand_and_against_the_published_totals(
    catalog, preset, layers, hidden, heads, width, published_total, published_active
):
    work = analyse_model(_model(catalog, preset=preset))
    total, active = _by_hand(layers, hidden, heads, width)
    assert work.head_dim == 128
    assert work.params == pytest.approx(total, rel=1e-12)
    assert work.active_params == pytest.approx(active, rel=1e-12)
    # The report rounds: 30.5B / 3.3B and 235B / 22B (QK-norm weights, 256 a layer, are left out).
    assert work.params == pytest.approx(published_total, rel=0.01)
    assert work.active_params == pytest.approx(published_active, rel=0.02)


@pytest.mark.parametrize(
    ("preset", "model_tflops_per_gpu", "tokens_per_s_per_gpu"),
    [("qwen3-30b-a3b", 206, 8_960), ("qwen3-235b-a22b", 253, 1_712)],
)
def test_training_flops_match_nvidia_model_flops_with_the_causal_half(
    catalog, preset, model_tflops_per_gpu, tokens_per_s_per_gpu
):
    """NVIDIA counts causal attention at half the square; the planner's model FLOPs count the full square. Halving
    the attention term must land on NVIDIA's figure: 206 TFLOP/s at 8,960 tokens/s is 22.99 GFLOP a token."""
    work = analyse_model(_model(catalog, preset=preset))
    s = work.shape
    attention_full = 6.0 * s.layers * s.seq_len * (2 * s.heads * 128)
    causal = work.training_flops_per_token() - attention_full / 2.0
    assert causal == pytest.approx(model_tflops_per_gpu * 1e12 / tokens_per_s_per_gpu, rel=0.01)


def test_an_explicit_head_dim_equal_to_hidden_over_heads_changes_nothing(catalog):
    plain = analyse_model(_model(catalog, preset="llama-3-70b"))
    explicit = analyse_model(_model(catalog, preset="llama-3-70b", head_dim=128))
    assert explicit.params == plain.params
    assert explicit.training_flops_per_token() == plain.training_flops_per_token()
    tokens, tp = np.array([8192.0]), np.array([4.0])
    assert activation_terms(explicit, tokens, tp, tp)[1] == pytest.approx(activation_terms(plain, tokens, tp, tp)[1])


def test_attention_projections_use_the_heads_width(catalog):
    """QKV: 4,096 tokens x 2,048 -> 4,096 + 2 x 512 columns; output 4,096 -> 2,048, on one H100 in BF16."""
    work = analyse_model(_model(catalog, preset="qwen3-30b-a3b"))
    system = catalog.systems["dgx-h100"]
    gpu = catalog.gpu_of(system)
    hw, eff = hardware_for(gpu, system, "bf16"), efficiency_for(gpu, "bf16", Assumptions())
    tokens, tp = np.array([4096.0]), np.array([1.0])
    expected = gemm_time(tokens, 2048.0, np.array([4096.0 + 1024.0]), hw, eff) + gemm_time(
        tokens, np.array([4096.0]), 2048.0, hw, eff
    )
    assert attention_gemms(work, hw, eff, tokens, tp) == pytest.approx(expected)


def test_activation_memory_counts_query_and_output_at_the_heads_width(catalog):
    """Korthikanti's 34 s b h at d_ff = 4h, generalised: 8 h (norm inputs, QKV and FFN inputs; Qwen3 trains
    without dropout, so no masks) + 2 x 4,096 (Q) + 2 x 4,096 (output projection input) + 2 x 512 x 2 (K, V) +
    6 x 8 x 768 (SwiGLU of 8 experts) bytes a token, no parallelism, selective recompute."""
    work = analyse_model(_model(catalog, preset="qwen3-30b-a3b"))
    per_token = 8 * 2048 + 2 * 4096 + 2 * 4096 + 4 * 512 + 6 * 8 * 768
    one = np.array([1.0])
    assert activation_terms(work, np.array([4096.0]), one, one)[1] == pytest.approx(4096 * per_token)


def test_heads_need_not_divide_hidden_when_head_dim_is_given(catalog):
    shape = {"layers": 4, "hidden": 1000, "heads": 12, "kv_heads": 4, "ffn_hidden": 4000, "vocab": 1000,
             "seq_len": 1024}  # fmt: skip
    with pytest.raises(RequestInvalid) as caught:
        _model(catalog, **shape)
    assert "model.heads" in str(caught.value) and "unless model.head_dim is given" in str(caught.value)
    assert analyse_model(_model(catalog, **shape, head_dim=96)).head_dim == 96


@pytest.mark.parametrize("bad", [0, -128, 2.5, "128", 1e9])
def test_a_bad_head_dim_is_a_field_error(catalog, bad):
    with pytest.raises(RequestInvalid) as caught:
        _model(catalog, preset="qwen3-30b-a3b", head_dim=bad)
    assert "model.head_dim" in str(caught.value)


@pytest.mark.parametrize("workload", ["training", "inference"])
def test_qwen3_plans_end_to_end(catalog, workload):
    """Both paths run a decoupled head size; serving's KV cache is 2 x 48 layers x 4 heads x 128 x 2 B a token."""
    body = {"workload": workload, "model": {"preset": "qwen3-30b-a3b"}, "hardware": {"system": "dgx-h100"}}
    if workload == "training":
        body["training"] = {"tokens": 1e11, "gpus": 16}
    else:
        body["inference"] = {"requests_per_s": 5, "prompt_tokens": 1024, "output_tokens": 256}
    plan = to_json(run_plan(validate_request(body, catalog), catalog))
    assert not plan.get("problems"), plan.get("problems")
    if workload == "inference":
        work = analyse_model(validate_request(body, catalog).model)
        assert work.kv_bytes_per_token(2.0) == 2 * 48 * 4 * 128 * 2


def test_head_dim_with_latent_attention_is_a_field_error(catalog):
    with pytest.raises(RequestInvalid) as caught:
        _model(catalog, preset="deepseek-v3", head_dim=128)
    assert "model.head_dim" in str(caught.value) and "model.mla" in str(caught.value)


def test_full_recompute_replays_attention_at_the_heads_width(catalog):
    """Full recompute adds one forward: 2 x (compute params - LM head) + 2 x 48 x 4,096 x (4,096 + 4,096)."""
    from engine.search.training import hardware_flops_per_token

    work = analyse_model(_model(catalog, preset="qwen3-30b-a3b"))
    extra = 2.0 * (work.compute_params_active - VOCAB * 2048) + 2.0 * 48 * 4096 * 8192
    got = hardware_flops_per_token(work, "full", True) - work.training_flops_per_token()
    assert got == pytest.approx(extra)


@pytest.mark.parametrize(
    ("preset", "layers", "hidden", "heads", "ffn", "published"),
    [("qwen3-8b", 36, 4096, 32, 12288, 8.2e9), ("qwen3-32b", 64, 5120, 64, 25600, 32.8e9)],
)
def test_dense_qwen3_parameters_by_hand(catalog, preset, layers, hidden, heads, ffn, published):
    """Q and O hidden x heads*128, K and V hidden x 8*128, a SwiGLU FFN, two norms a layer, untied embeddings."""
    per_layer = 2 * hidden * heads * 128 + 2 * hidden * 8 * 128 + 3 * hidden * ffn + 2 * hidden
    total = layers * per_layer + 2 * VOCAB * hidden + hidden
    work = analyse_model(_model(catalog, preset=preset))
    assert work.params == pytest.approx(total, rel=1e-12)
    assert work.params == pytest.approx(published, rel=0.005)
