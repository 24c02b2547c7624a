"""Sliding-window (local) attention: GPT-OSS (every other layer, a 128-token window) and Gemma 3 (five layers in six,
1,024 tokens).

Expected values are worked out by hand from the published configurations (OpenAI, 'gpt-oss-120b & gpt-oss-20b Model
Card', arXiv 2508.10925, Table 1; Gemma Team, 'Gemma 3 Technical Report', arXiv 2503.19786, Table 1; the
config.json files), by counting the attended positions query by query, and against NVIDIA's published model TFLOP/s
for GPT-OSS 120B (Megatron-Bridge performance summary, 26.08 container), not read off the code.
"""

from __future__ import annotations

import pytest

from calibration.serving import constants_from
from engine import run_plan, to_json, validate_request
from engine.assumptions.registry import Assumptions
from engine.performance.serving import ReplicaModel
from engine.request.validation import RequestInvalid
from engine.workload.model import analyse_model


def _model(catalog, **model):
    body = {"workload": "training", "model": model, "training": {"tokens": 1e12, "gpus": 64}}
    return validate_request(body, catalog).model


def _causal_window_positions(seq: int, window: int) -> int:
    """Positions a causal windowed layer attends to over one sequence, counted query by query."""
    return sum(min(i + 1, window) for i in range(seq))


@pytest.mark.parametrize(
    ("preset", "layers", "experts", "total", "active_without_input_embedding"),
    [("gpt-oss-120b", 36, 128, 116.83e9, 5.13e9), ("gpt-oss-20b", 24, 32, 20.91e9, 3.61e9)],
)
def test_gpt_oss_parameters_against_the_model_card(
    catalog, preset, layers, experts, total, active_without_input_embedding
):
    work = analyse_model(_model(catalog, preset=preset))
    h, vocab = 2880, 201_088
    # By hand: Q and O 2,880 x 64 heads x 64, K and V 2,880 x 8 x 64, with biases; SwiGLU experts of 2,880 with
    # biases (gate and up 2 x 2,880, down 2,880); a router; two RMSNorm weights counted with a bias each (the
    # planner's GPT-style norms); untied embedding and head; a final norm (with bias).
    attention = 2 * h * 4096 + 2 * h * 512 + (4096 + 1024 + h)
    expert = 3 * h * h + 3 * h
    per_layer_dense = attention + h * experts + 4 * h
    embeddings = 2 * vocab * h + 2 * h
    assert work.params == pytest.approx(layers * (per_layer_dense + experts * expert) + embeddings, rel=1e-12)
    assert work.params == pytest.approx(total, rel=0.001)
    # The card counts active parameters without the input embedding, which is the planner's compute count.
    assert work.compute_params_active == pytest.approx(active_without_input_embedding, rel=0.005)
    assert work.windowed_layers == layers // 2


def test_gemma3_parameters_against_the_report(catalog):
    work = analyse_model(_model(catalog, preset="gemma-3-27b"))
    # Table 1: 25,600M non-embedding parameters (62 layers of 5,376, 32 + 16 heads of 128, GeGLU 21,504).
    per_layer = 2 * 5376 * 32 * 128 + 2 * 5376 * 16 * 128 + 3 * 5376 * 21504 + 2 * 5376
    assert work.layer_params() == pytest.approx(per_layer, rel=1e-12)
    assert 62 * per_layer == pytest.approx(25_600e6, rel=0.001)
    assert work.windowed_layers == 52


@pytest.mark.parametrize(("seq", "window"), [(4096, 128), (32768, 1024), (1000, 999), (8192, 4096)])
def test_attention_span_counts_the_positions_a_windowed_layer_attends_to(catalog, seq, window):
    """All layers windowed: the span (full-square convention, 2 x the causal mean) is twice the positions counted
    query by query over the sequence, to within the w / seq the closed form rounds away."""
    shape = _model(catalog, layers=4, hidden=512, heads=8, ffn_hidden=1024, vocab=1000, seq_len=seq,
                   sliding_window={"tokens": window})  # fmt: skip
    counted = 2.0 * _causal_window_positions(seq, window) / seq
    assert analyse_model(shape).attention_span(seq) == pytest.approx(counted, abs=1.0 + window / seq)


def test_gpt_oss_span_by_hand(catalog):
    work = analyse_model(_model(catalog, preset="gpt-oss-120b"))
    # 18 full layers at 4,096, 18 windowed at 2 x 128 - 128^2 / 4,096 = 252.
    assert work.attention_span(4096) == pytest.approx((18 * 4096 + 18 * 252) / 36)
    # A window covering the sequence is full attention.
    assert work.attention_span(100) == pytest.approx(100.0)


def test_window_no_shorter_than_the_sequence_changes_nothing(catalog):
    base = dict(layers=8, hidden=1024, heads=16, kv_heads=4, ffn_hidden=4096, vocab=32000, seq_len=4096)
    plain = analyse_model(_model(catalog, **base))
    wide = analyse_model(_model(catalog, **base, sliding_window={"tokens": 4096}))
    assert wide.training_flops_per_token() == plain.training_flops_per_token()
    assert wide.prefill_flops(4096) == plain.prefill_flops(4096)
    assert wide.cached_tokens(4096) == plain.cached_tokens(4096) == 4096


def test_gpt_oss_flops_match_nvidia_model_tflops(catalog):
    """NVIDIA's 26.08 row: 1,077 model TFLOP/s per GPU at 33,024 tokens/s per GPU, i.e. 3.261e10 FLOPs a token.
    The planner's count with the attention term halved for the causal mask (NVIDIA's convention) lands within
    0.5 % (the router's 13M parameters are the rest); costing the windowed layers as full attention would be 3 %
    high."""
    work = analyse_model(_model(catalog, preset="gpt-oss-120b"))
    nvidia = 1077e12 / 33_024
    attention = work.training_flops_per_token() - 6.0 * work.compute_params_active
    assert 6.0 * work.compute_params_active + attention / 2.0 == pytest.approx(nvidia, rel=0.005)
    full = 6.0 * work.compute_params_active + 6.0 * 36 * 4096 * (4096 + 4096) / 2.0
    assert full / nvidia - 1.0 > 0.025


def test_decode_and_prefill_flops_by_hand(catalog):
    work = analyse_model(_model(catalog, preset="gemma-3-27b"))
    width = 32 * 128 * 2  # query-key + value widths
    # Decode at 20,000 cached tokens: 10 global layers read all, 52 local layers their 1,024.
    decode = 2.0 * work.compute_params_active + 2.0 * width * (10 * 20_000 + 52 * 1024)
    assert work.decode_flops_per_token(20_000) == pytest.approx(decode, rel=1e-12)
    # Prefill of 8,192 tokens: 2 x ISL x (10 x 8,192 + 52 x (2 x 1,024 - 1,024^2 / 8,192)) x widths.
    prefill = 2.0 * work.compute_params_active * 8192 + 2.0 * 8192 * (10 * 8192 + 52 * (2048 - 128)) * width
    assert work.prefill_flops(8192) == pytest.approx(prefill, rel=1e-12)


def _replica(catalog, shape, prompt: int, output: int) -> ReplicaModel:
    work = analyse_model(shape)
    gpu = catalog.gpus["h100-sxm"]
    constants = constants_from(Assumptions())
    return ReplicaModel(work, gpu, 2, 1, prompt, output, 2.0, work.kv_bytes_per_token(2.0),
                        gpu.bf16_dense_tflops * 1e12, constants)  # fmt: skip


def test_kv_cache_of_a_windowed_model_stops_at_the_window(catalog):
    gemma = _model(catalog, preset="gemma-3-27b")
    unwindowed = gemma.model_copy(update={"sliding_window": None})
    m, plain = _replica(catalog, gemma, 30_000, 2_000), _replica(catalog, unwindowed, 30_000, 2_000)
    per_token = 2 * 62 * 16 * 128 * 2  # K and V, 62 layers, 16 KV heads of 128, 2 bytes
    assert m.kv_bytes_per_token == plain.kv_bytes_per_token == per_token
    # A 32,000-token sequence: 10 layers keep 32,000 tokens, 52 keep 1,024; TP2 splits the KV heads.
    assert m.kv_bytes_per_sequence_per_gpu() == pytest.approx(per_token / 62 * (10 * 32_000 + 52 * 1024) / 2)
    assert plain.kv_bytes_per_sequence_per_gpu() == pytest.approx(per_token * 32_000 / 2)
    assert m.max_sequences_by_memory() > 4 * plain.max_sequences_by_memory()
    # A decode step reads the cache at the mean context (prompt + half the output = 31,000 tokens).
    assert m.kv_read_bytes_per_gpu(10) == pytest.approx(10 * per_token / 62 * (10 * 31_000 + 52 * 1024) / 2)


def test_serving_plan_reports_the_windowed_cache(catalog, plan):
    body = {"workload": "inference", "model": {"preset": "gemma-3-27b"}, "hardware": {"system": "dgx-h100"},
            "inference": {"requests_per_s": 2, "prompt_tokens": 30_000, "output_tokens": 2_000}}  # fmt: skip
    inference = plan(body)["inference"]
    per_sequence = 2 * 62 * 16 * 128 * 2 / 62 * (10 * 32_000 + 52 * 1024)  # KV bytes, FP16 cache
    if inference["gpus_per_replica"] <= 16:  # the KV heads split, not replicated
        used = inference["kv_cache_used_gib_per_replica"] * 2**30
        assert used == pytest.approx(inference["concurrency_per_replica"] * per_sequence, rel=1e-9)
    formula = plan(body)["explain"]["inference.kv_bytes_per_token"]["formula"]
    assert "window" in formula


def test_training_plan_explains_the_span(plan):
    body = {"workload": "training", "model": {"preset": "gpt-oss-120b"}, "hardware": {"system": "gb200-nvl72"},
            "training": {"tokens": 1e12, "gpus": 64}}  # fmt: skip
    result = plan(body)
    entry = result["explain"]["training.total_flops"]
    assert entry["inputs"]["windowed layers"] == 18 and entry["inputs"]["window (tokens)"] == 128
    assert entry["inputs"]["positions an average layer attends to"] == pytest.approx(2174.0)
    assert "window" in entry["formula"]


@pytest.mark.parametrize(
    ("window", "field"),
    [
        ({"tokens": 0}, "model.sliding_window.tokens"),
        ({"tokens": -5}, "model.sliding_window.tokens"),
        ({"tokens": "128"}, "model.sliding_window.tokens"),
        ({"tokens": 128, "layers": -1}, "model.sliding_window.layers"),
        ({"tokens": 128, "layers": 37}, "model.sliding_window.layers"),
        ({"tokens": 128, "every": 2}, "model.sliding_window.every"),
    ],
)
def test_bad_windows_are_field_errors(catalog, window, field):
    body = {"workload": "training", "model": {"preset": "gpt-oss-120b", "sliding_window": window},
            "training": {"tokens": 1e12, "gpus": 64}}  # fmt: skip
    with pytest.raises(RequestInvalid) as info:
        validate_request(body, catalog)
    assert field in info.value.errors


def test_run_plan_end_to_end_for_gpt_oss_serving(catalog):
    body = {
        "workload": "inference",
        "model": {"preset": "gpt-oss-120b"},
        "hardware": {"system": "dgx-h100"},
        "inference": {"requests_per_s": 5, "prompt_tokens": 4000, "output_tokens": 1000, "precision": "fp8"},
    }
    result = to_json(run_plan(validate_request(body, catalog), catalog))
    assert result["feasible"], result.get("problems")


def test_a_partial_window_overrides_the_presets_field_by_field(catalog):
    wider = _model(catalog, preset="gpt-oss-120b", sliding_window={"tokens": 256})
    assert (wider.sliding_window.tokens, wider.sliding_window.layers) == (256, 18)
    off = analyse_model(_model(catalog, preset="gpt-oss-120b", sliding_window={"layers": 0}))
    assert off.windowed_layers == 0 and off.attention_span(4096) == 4096.0 and off.cached_tokens(9000) == 9000.0


def test_a_shorter_preset_names_where_its_window_layers_come_from(catalog):
    body = {"workload": "training", "model": {"preset": "gpt-oss-120b", "layers": 12},
            "training": {"tokens": 1e12, "gpus": 64}}  # fmt: skip
    with pytest.raises(RequestInvalid) as info:
        validate_request(body, catalog)
    assert any("preset" in m for m in info.value.errors["model.sliding_window.layers"])


def test_tiled_kernels_pay_whole_key_blocks(catalog):
    """A 128-token window in 128-key tiles: a query block reads its own block and the one before, 256 keys a query,
    512 in the full-square convention; a 1,024-token window reads 9 blocks (2,304). Full layers are unchanged."""
    work = analyse_model(_model(catalog, preset="gpt-oss-120b"))
    assert work.attention_span(4096, 128) == pytest.approx((18 * 4096 + 18 * 512) / 36)
    gemma = analyse_model(_model(catalog, preset="gemma-3-27b"))
    assert gemma.attention_span(32768, 128) == pytest.approx((10 * 32768 + 52 * 2304) / 62)
    assert gemma.attention_span(1000, 128) == pytest.approx(1000.0)  # the window covers the sequence


def test_an_explicit_shape_needs_the_window_size(catalog):
    body = {
        "workload": "training",
        "model": {
            "layers": 4,
            "hidden": 512,
            "heads": 8,
            "ffn_hidden": 1024,
            "vocab": 1000,
            "seq_len": 2048,
            "sliding_window": {"layers": 2},
        },
        "training": {"tokens": 1e9, "gpus": 8},
    }
    with pytest.raises(RequestInvalid) as info:
        validate_request(body, catalog)
    assert "model.sliding_window.tokens" in info.value.errors
