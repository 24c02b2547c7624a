"""Training memory accounting: 16 B/param, ZeRO-1 sharding and Korthikanti activation terms, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from engine.performance.memory import GIB, activation_bytes_per_layer, params_per_gpu, training_memory
from engine.request.spec import ModelSpec
from engine.workload.model import analyse_model

# A tiny MHA model with a plain 4h FFN, trained with dropout (Korthikanti's setting): h = 64, a = 4, f = 256, s = 128.
TINY = ModelSpec(
    layers=2, hidden=64, heads=4, kv_heads=4, ffn_hidden=256, vocab=1000, seq_len=128, ffn_gated=False, dropout=True
)
# The same model trained without dropout, as Llama-style runs are: no masks are kept.
TINY_NO_DROPOUT = TINY.model_copy(update={"dropout": False})
# Params by hand: attention 2*64^2 + 2*64*64 = 16,384; FFN 2*64*256 = 32,768; norms 2*64 = 128
# -> 49,280 per layer x 2 = 98,560; embedding + untied head 2*1000*64 = 128,000; final norm 64.
TINY_PARAMS = 98_560 + 128_000 + 64


def test_tiny_param_count():
    assert analyse_model(TINY).params == TINY_PARAMS == 226_624


def test_sixteen_bytes_per_param_without_sharding():
    mem = training_memory(
        analyse_model(TINY),
        tp=1,
        pp=1,
        dp=1,
        micro_batch=1,
        micro_batches=1,
        recompute="full",
        hbm_gib=80,
        reserve_fraction=0.0,
    )
    state = (mem.weights_gib + mem.gradients_gib + mem.optimizer_gib) * GIB
    assert state == pytest.approx(16 * 226_624)  # 2 weights + 2 grads + 12 fp32 master/m/v


def test_zero1_shards_only_the_optimizer():
    mem = training_memory(
        analyse_model(TINY),
        tp=1,
        pp=1,
        dp=8,
        micro_batch=1,
        micro_batches=1,
        recompute="full",
        hbm_gib=80,
        reserve_fraction=0.1,
    )
    state = (mem.weights_gib + mem.gradients_gib + mem.optimizer_gib) * GIB
    assert state == pytest.approx((4 + 12 / 8) * 226_624)  # ZeRO-1: 4 + 12/Nd bytes per parameter
    assert mem.reserve_gib == pytest.approx(8.0)


def test_tensor_parallel_splits_model_state():
    work = analyse_model(TINY)
    assert params_per_gpu(work, tp=4, pp=1) == pytest.approx(226_624 / 4)


def test_korthikanti_selective_is_34sbh_over_t():
    # TP + SP + selective recompute: 34 s b h / t = 34 * 128 * 2 * 64 / 2 = 278,528 bytes.
    assert activation_bytes_per_layer(analyse_model(TINY), micro_batch=2, tp=2, recompute="selective") == 278_528


def test_korthikanti_no_recompute_keeps_scores():
    # TP + SP, no recompute: s b h / t x (34 + 5 a s / h) = 8192 x (34 + 5*4*128/64) = 8192 x 74 = 606,208.
    assert activation_bytes_per_layer(analyse_model(TINY), micro_batch=2, tp=2, recompute="none") == 606_208


def test_full_recompute_keeps_layer_input():
    # 2 s b h, sharded over t by sequence parallelism: 2 * 128 * 2 * 64 / 2 = 16,384.
    assert activation_bytes_per_layer(analyse_model(TINY), micro_batch=2, tp=2, recompute="full") == 16_384


def test_without_dropout_no_masks_are_kept():
    # Korthikanti's 34 s b h less the two 1-byte masks (2 s b h): 32 s b h / t = 32 * 128 * 2 * 64 / 2 = 262,144.
    work = analyse_model(TINY_NO_DROPOUT)
    assert activation_bytes_per_layer(work, micro_batch=2, tp=2, recompute="selective") == 262_144
    # Unfused attention keeps only the softmax output, 2 a s^2 b (not 5: no mask, no dropped-out copy):
    # s b h / t x (32 + 2 a s / h) = 8192 x (32 + 2*4*128/64) = 8192 x 48 = 393,216.
    assert activation_bytes_per_layer(work, micro_batch=2, tp=2, recompute="none") == 393_216
    # Full recompute keeps the layer input either way.
    assert activation_bytes_per_layer(work, micro_batch=2, tp=2, recompute="full") == 16_384


def test_gqa_and_gated_generalisation():
    # GQA with 1 KV head of 4: attention keeps Q (2h), the output projection's input (2h) and K, V (2 x 2h/4):
    # 5h instead of MHA's 8h; norm inputs (4h) and the QKV and FC1 inputs (4h) are 8h (no dropout masks); a fused SwiGLU
    # keeps its gate+up output (4f) and its output (2f) = 6 s b f instead of 4 s b f.
    # Per token: 5*64 + 8*64 + 6*256 = 320 + 512 + 1,536 = 2,368.
    gqa = ModelSpec(layers=2, hidden=64, heads=4, kv_heads=1, ffn_hidden=256, vocab=1000, seq_len=128, ffn_gated=True)
    assert activation_bytes_per_layer(analyse_model(gqa), micro_batch=1, tp=1, recompute="selective") == (128 * 2_368)


def test_pipeline_first_stage_holds_pp_micro_batches():
    work = analyse_model(TINY)
    per_layer = 278_528  # selective, b = 2, t = 2 (above)
    full = training_memory(
        work, tp=2, pp=2, dp=1, micro_batch=2, micro_batches=8, recompute="selective", hbm_gib=80, reserve_fraction=0
    )
    # 1 layer per stage x min(pp = 2, m = 8) micro-batches in flight.
    assert full.activations_gib * GIB == pytest.approx(per_layer * 1 * 2)
    short = training_memory(
        work, tp=2, pp=2, dp=1, micro_batch=2, micro_batches=1, recompute="selective", hbm_gib=80, reserve_fraction=0
    )
    assert short.activations_gib * GIB == pytest.approx(per_layer)


def test_unfused_attention_reads_and_writes_dropout_only_when_trained_with_it(catalog):
    """Without FlashAttention the softmax reads and writes each score (2 + 2 B); dropout adds a read, a write and
    a 1-byte mask (5 B). TINY's forward on one 128-token sequence at tp 1 has 4 heads x 128 x 128 = 65,536 scores,
    so the two models' attention forward differs by exactly 5 x 65,536 B at the HBM's effective bandwidth."""
    import dataclasses

    from engine.assumptions.registry import Assumptions
    from engine.performance.step_time import _layer_forward, efficiency_for, hardware_for

    system = catalog.systems["dgx-a100-80gb"]
    gpu = catalog.gpu_of(system)
    hw = hardware_for(gpu, system, "bf16")
    eff = dataclasses.replace(efficiency_for(gpu, "bf16", Assumptions()), flash_attention=False)
    one = np.array([1.0])
    with_dropout = _layer_forward(analyse_model(TINY), hw, eff, one, one, one, one).attention
    without = _layer_forward(analyse_model(TINY_NO_DROPOUT), hw, eff, one, one, one, one).attention
    assert with_dropout[0] - without[0] == pytest.approx(5 * 65_536 / (hw.hbm_bytes_s * eff.hbm), rel=1e-9)
