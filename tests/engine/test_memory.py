"""Training memory accounting: 16 B/param, ZeRO-1 sharding and Korthikanti activation terms, by hand."""

from __future__ import annotations

import pytest

from engine.performance.memory import GIB, activation_bytes_per_layer, params_per_gpu, training_memory
from engine.request.spec import ModelSpec
from engine.workload.model import analyse_model

# A tiny MHA model with a plain 4h FFN (Korthikanti's setting): h = 64, a = 4, f = 256, s = 128.
TINY = ModelSpec(layers=2, hidden=64, heads=4, kv_heads=4, ffn_hidden=256, vocab=1000, seq_len=128, ffn_gated=False)
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


def test_gqa_and_gated_generalisation():
    # GQA with 1 KV head of 4: attention keeps (7 + 4 * 1/4) sbh = 8 sbh instead of 11 sbh; a fused SwiGLU keeps
    # its gate+up output (4f) and its output (2f) = 6 s b f instead of 4 s b f.
    # Per token: 8*64 + 7*64 (norms 4h, MLP input 2h, dropout mask h) + 6*256 = 512 + 448 + 1,536 = 2,496.
    gqa = ModelSpec(layers=2, hidden=64, heads=4, kv_heads=1, ffn_hidden=256, vocab=1000, seq_len=128, ffn_gated=True)
    assert activation_bytes_per_layer(analyse_model(gqa), micro_batch=1, tp=1, recompute="selective") == (128 * 2_496)


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
