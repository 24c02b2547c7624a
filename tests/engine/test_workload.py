"""Parameter counts and FLOPs against published sizes and the reference formulas."""

from __future__ import annotations

import pytest

from engine.request.spec import ModelSpec, MoeSpec
from engine.workload.model import analyse_model, bytes_per_param


def preset_shape(catalog, preset_id: str) -> ModelSpec:
    p = catalog.models[preset_id]
    moe = MoeSpec(experts=p.moe_experts, active=p.moe_active) if p.moe_experts else None
    return ModelSpec(
        layers=p.layers,
        hidden=p.hidden,
        heads=p.heads,
        kv_heads=p.kv_heads,
        ffn_hidden=p.ffn_hidden,
        vocab=p.vocab,
        seq_len=p.seq_len,
        preset=p.id,
        ffn_gated=p.ffn_gated,
        tied_embeddings=p.tied_embeddings,
        learned_positions=p.learned_positions,
        biases=p.biases,
        moe=moe,
    )


def gpt_shape(layers: int, hidden: int, heads: int, vocab: int = 51200, seq_len: int = 2048) -> ModelSpec:
    """Megatron GPT block: MHA, plain 4h FFN, tied embeddings, learned positions, biases."""
    return ModelSpec(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=heads,
        ffn_hidden=4 * hidden,
        vocab=vocab,
        seq_len=seq_len,
        ffn_gated=False,
        tied_embeddings=True,
        learned_positions=True,
        biases=True,
    )


# Narayanan et al. 2021 Table 1 (training-calibration.md 3a): published size, heads, hidden, layers.
NARAYANAN_ROWS = [
    (1.7e9, 24, 2304, 24),
    (18.4e9, 48, 6144, 40),
    (145.6e9, 96, 12288, 80),
    (310.1e9, 128, 16384, 96),
    (529.6e9, 128, 20480, 105),
    (1008e9, 160, 25600, 128),
]


@pytest.mark.parametrize(("published", "heads", "hidden", "layers"), NARAYANAN_ROWS)
def test_narayanan_table1_sizes(published, heads, hidden, layers):
    params = analyse_model(gpt_shape(layers, hidden, heads)).params
    # Eq. 2: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)); our count adds only the final LayerNorm (2h).
    eq2 = 12 * layers * hidden**2 * (1 + 13 / (12 * hidden) + (51200 + 2048) / (12 * layers * hidden))
    assert params == pytest.approx(eq2 + 2 * hidden, rel=1e-12)
    # The table prints sizes to one decimal in billions; 1.652B prints as 1.7B.
    assert round(params / 1e9, 1) == pytest.approx(published / 1e9)
    if published >= 10e9:
        assert params == pytest.approx(published, rel=0.01)


def test_gpt3_total_compute_matches_brown_2020():
    work = analyse_model(gpt_shape(96, 12288, 96, vocab=50257))
    assert work.params == pytest.approx(175e9, rel=0.01)
    # 6ND with D = 300B tokens vs the reported 3.14e23 FLOPs (Brown et al. 2020 Table D.1): within 0.5 %.
    six_nd = 6 * work.compute_params_active * 300e9
    assert six_nd == pytest.approx(3.14e23, rel=0.005)
    # The engine's total adds the attention term 12 l s h per token (training-calibration.md section 2).
    attention = 12 * 96 * 2048 * 12288 * 300e9
    assert work.training_flops(300e9) == pytest.approx(six_nd + attention, rel=1e-12)


def test_llama_3_8b_hand_count(catalog):
    work = analyse_model(preset_shape(catalog, "llama-3-8b"))
    # Per layer: q,o 2 x 4096^2 = 33,554,432; k,v 2 x 4096 x 1024 = 8,388,608;
    # SwiGLU 3 x 4096 x 14336 = 176,160,768; RMSNorm weights 2 x 4096 = 8,192 -> 218,112,000 x 32 layers.
    # Untied embedding + head 2 x 128256 x 4096 = 1,050,673,152; final norm 4,096.
    assert work.params == 218_112_000 * 32 + 1_050_673_152 + 4_096 == 8_030_261_248
    # Input embedding lookups cost no FLOPs: compute params = total - 128256 x 4096.
    assert work.compute_params_active == 8_030_261_248 - 525_336_576


@pytest.mark.parametrize(
    ("preset", "published"),
    [
        ("llama-3-8b", 8.03e9),
        ("llama-3-70b", 70.6e9),
        ("llama-3-405b", 405.9e9),
        ("mixtral-8x22b", 141e9),
        ("bloom-176b", 176_247_271_424),  # bigscience/bloom on Hugging Face: 176,247,271,424 parameters
        ("starcoder-15b", 15.5e9),  # StarCoder (arXiv 2305.06161): 15.5B parameters
    ],
)
def test_published_sizes(catalog, preset, published):
    # inference-calibration.md section 1 (recomputed from shapes, agree to 0.1 %); Mistral's announcement.
    assert analyse_model(preset_shape(catalog, preset)).params == pytest.approx(published, rel=0.003)


def test_starcoder_counted_by_hand(catalog):
    # GPT-BigCode shape (bigcode/starcoderbase config.json): hidden 6,144, 40 layers, multi-query attention with one
    # key/value head of 128, GELU FFN of 4 x hidden, biases on every linear layer and LayerNorm.
    d, kv = 6144, 128
    attention = (d * d + d) + (d * 2 * kv + 2 * kv) + (d * d + d)  # query, shared key/value, output
    ffn = (d * 4 * d + 4 * d) + (4 * d * d + d)
    norms = 2 * 2 * d
    per_layer = attention + ffn + norms
    assert per_layer == 379_128_064
    # Token embeddings (tied with the output head), 8,192 learned positions, final LayerNorm.
    total = 40 * per_layer + 49152 * d + 8192 * d + 2 * d
    assert analyse_model(preset_shape(catalog, "starcoder-15b")).params == total == 15_517_456_384


def test_mixtral_total_and_active(catalog):
    work = analyse_model(preset_shape(catalog, "mixtral-8x7b"))
    # Jiang et al. 2024: 46.7B total, 12.9B active (2 of 8 experts).
    assert work.params == pytest.approx(46.7e9, rel=0.002)
    assert work.active_params == pytest.approx(12.9e9, rel=0.002)
    assert analyse_model(preset_shape(catalog, "mixtral-8x22b")).active_params == pytest.approx(39e9, rel=0.01)


def test_declared_params_override_scales_consistently(catalog):
    shape = preset_shape(catalog, "llama-3-8b")
    declared = analyse_model(ModelSpec(**{**shape.__dict__, "params": 16e9}))
    assert declared.params == 16e9
    assert declared.params_derived == pytest.approx(8.03e9, rel=0.001)
    assert declared.compute_params_active / declared.params == pytest.approx(
        (8_030_261_248 - 525_336_576) / 8_030_261_248
    )


def test_bytes_per_param():
    assert bytes_per_param("bf16", 0.53125, 0.5625) == 2
    assert bytes_per_param("fp8", 0.53125, 0.5625) == 1
    assert bytes_per_param("int8", 0.53125, 0.5625) == 1
    assert bytes_per_param("int4", 0.53125, 0.5625) == 0.53125
    assert bytes_per_param("fp4", 0.53125, 0.5625) == 0.5625


@pytest.mark.parametrize(
    ("preset", "by_hand"),
    [
        # Llama 2 7B: attention 4 x 4,096^2 = 67,108,864; SwiGLU 3 x 4,096 x 11,008 = 135,266,304; two norms 8,192
        # -> 202,383,360 a layer x 32; untied embedding and head 2 x 32,000 x 4,096; final norm 4,096.
        ("llama-2-7b", 32 * 202_383_360 + 2 * 32_000 * 4096 + 4096),  # 6,738,415,616 (the model card's 6.74B)
        # Llama 2 70B: Q, O 2 x 8,192^2 + K, V 2 x 8,192 x 1,024 = 150,994,944; SwiGLU 3 x 8,192 x 28,672 =
        # 704,643,072; norms 16,384 -> 855,654,400 a layer x 80; 2 x 32,000 x 8,192; 8,192.
        ("llama-2-70b", 80 * 855_654_400 + 2 * 32_000 * 8192 + 8192),  # 68,976,648,192
        # Nemotron-4 340B: Q, O 2 x 18,432^2 + K, V 2 x 18,432 x 1,536 = 736,100,352; squared-ReLU FFN 2 x 18,432 x
        # 73,728 = 2,717,908,992; norms 36,864 -> 3,454,046,208 a layer x 96; 2 x 256,000 x 18,432; 18,432.
        ("nemotron-4-340b", 96 * 3_454_046_208 + 2 * 256_000 * 18_432 + 18_432),  # 341,025,638,400
        # SmolLM3 3B: Q, O 2 x 2,048^2 + K, V 2 x 2,048 x 512 = 10,485,760; SwiGLU 3 x 2,048 x 11,008 = 67,633,152;
        # norms 4,096 -> 78,123,008 a layer x 36; tied 128,256 x 2,048; 2,048.
        ("smollm3-3b", 36 * 78_123_008 + 128_256 * 2048 + 2048),  # 3,075,098,624
        # Falcon 180B: Q, O 2 x 14,848^2 + K, V 2 x 14,848 x 512 = 456,130,560; GELU FFN 2 x 14,848 x 59,392 =
        # 1,763,704,832; norms 29,696 -> 2,219,865,088 a layer x 80; tied 65,024 x 14,848; 14,848.
        ("falcon-180b", 80 * 2_219_865_088 + 65_024 * 14_848 + 14_848),  # 178,554,698,240 (the card's 180B)
        # Phi-4: Q, O 2 x 5,120^2 + K, V 2 x 5,120 x 1,280 = 65,536,000; SwiGLU 3 x 5,120 x 17,920 = 275,251,200;
        # norms 10,240 -> 340,797,440 a layer x 40; untied 2 x 100,352 x 5,120; 5,120.
        ("phi-4", 40 * 340_797_440 + 2 * 100_352 * 5120 + 5120),  # 14,659,507,200 (the card's 14B)
        # DeepSeek LLM 67B: Q, O 2 x 8,192^2 + K, V 2 x 8,192 x 1,024 = 150,994,944; SwiGLU 3 x 8,192 x 22,016 =
        # 541,065,216; norms 16,384 -> 692,076,544 a layer x 95; untied 2 x 102,400 x 8,192; 8,192.
        ("deepseek-llm-67b", 95 * 692_076_544 + 2 * 102_400 * 8192 + 8192),  # 67,425,001,472 (the paper's 67B)
    ],
)
def test_added_presets_counted_by_hand(catalog, preset, by_hand):
    assert analyse_model(preset_shape(catalog, preset)).params == by_hand
