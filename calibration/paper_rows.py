"""Steady-state rows from the papers and tables of 2021-2023 (Narayanan 2021, Korthikanti 2022, MosaicML
llm-foundry), each converted from its published figure on its own basis (HFU-style TFLOP/s, iteration time, MFU)
into seconds per step. Data: reference/training-calibration.md sections 3a-3c.
"""

from __future__ import annotations

from calibration.row_schema import H100_PEAK_TFLOPS, CalibrationRow
from engine.request.spec import ModelSpec, TrainingParallelism

__all__ = ["PAPER_ROWS", "mpt_shape"]


def _plain_4h(layers: int, hidden: int, heads: int, *, vocab: int, gpt: bool, seq_len: int = 2048) -> ModelSpec:
    """MHA, d_ff = 4h, no gate, tied head; `gpt` adds GPT's biases, learned positions and dropout (Megatron-LM's
    defaults of 2021-2022, hidden and attention dropout 0.1, which the papers' runs kept)."""
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
        learned_positions=gpt,
        biases=gpt,
        dropout=gpt,
    )


def _gpt(layers: int, hidden: int, heads: int) -> ModelSpec:
    """Megatron GPT shape of 3a/3b: vocab 51,200, seq 2048, d_ff = 4h, biases, learned positions, tied head."""
    return _plain_4h(layers, hidden, heads, vocab=51_200, gpt=True)


def mpt_shape(layers: int, hidden: int, heads: int, seq_len: int = 2048) -> ModelSpec:
    """MPT shape of 3c (llm-foundry yamls): vocab 50,368, d_ff = 4h GELU, no biases, ALiBi, tied head."""
    return _plain_4h(layers, hidden, heads, vocab=50_368, gpt=False, seq_len=seq_len)


def _narayanan(
    label: str, heads: int, hidden: int, layers: int, tp: int, pp: int, gpus: int, batch: int, tflops: float
) -> CalibrationRow:
    """3a: TFLOP/s per GPU counts the recompute pass (96 B s l h^2 (1 + s/6h + V/16lh)); convert to seconds."""
    s, v = 2048, 51_200
    flops = 96.0 * batch * s * layers * hidden**2 * (1 + s / (6 * hidden) + v / (16 * layers * hidden))
    step = flops / (gpus * tflops * 1e12)
    return CalibrationRow(
        id=f"3a-{label}",
        dataset="3a",
        role="held out",
        model=_gpt(layers, hidden, heads),
        system="dgx-a100-80gb",
        gpus=gpus,
        batch_sequences=batch,
        parallelism=TrainingParallelism(tp=tp, pp=pp, dp=gpus // (tp * pp), recompute="full", zero_stage=0),
        software={"flash_attention": 0, "sequence_parallel": 0},
        published_step_s=step,
        published_metric=f"{tflops:g} TFLOP/s/GPU",
        basis="HFU-style TFLOP/s (96 B s l h^2 formula, recompute counted) -> s/iteration",
        notes="micro-batch and interleaving not published: searched",
    )


def _korthikanti(
    label: str,
    heads: int,
    hidden: int,
    layers: int,
    pp: int,
    batch: int,
    interleave: int,
    full_s: float,
    selective_s: float,
    mfu: float,
) -> list[CalibrationRow]:
    """3b: TP 8, DP 1, micro-batch 1 except 22B (4); iteration seconds for both recompute modes."""
    gpus = 8 * pp
    mb = 4 if label == "22B" else 1
    out = []
    for mode, step, software, metric in (
        ("full", full_s, {"flash_attention": 0, "sequence_parallel": 0}, f"{full_s:g} s/iteration"),
        (
            "selective",
            selective_s,
            # Megatron-LM of 2022 had sequence parallelism but no TP communication overlap (added with Transformer
            # Engine's userbuffers in 2023).
            {"flash_attention": 0, "sequence_parallel": 1, "tp_comm_overlap_fraction": 0},
            f"{selective_s:g} s/iteration (MFU {mfu:.1%})",
        ),
    ):
        out.append(
            CalibrationRow(
                id=f"3b-{label}-{mode}",
                dataset="3b",
                role="fit",
                model=_gpt(layers, hidden, heads),
                system="dgx-a100-80gb",
                gpus=gpus,
                batch_sequences=batch,
                parallelism=TrainingParallelism(
                    tp=8, pp=pp, dp=1, micro_batch=mb, recompute=mode, interleave=interleave, zero_stage=0
                ),
                software=software,
                published_step_s=step,
                published_metric=metric,
                basis="iteration time (s)",
                notes="full recompute without sequence parallelism; selective with it (Korthikanti Table 5)",
            )
        )
    return out


def _foundry(
    label: str,
    layers: int,
    hidden: int,
    heads: int,
    gpus: int,
    mb: int,
    batch: int,
    recompute: str,
    n_params: float,
    mfu: float,
    role: str,
) -> CalibrationRow:
    """3c: MFU on llm-foundry's basis (6 N + 12 l s h per token, N = NumParams) -> seconds per step."""
    s = 2048
    tokens_per_s_per_gpu = mfu * H100_PEAK_TFLOPS * 1e12 / (6 * n_params + 12 * layers * s * hidden)
    step = batch * s / (gpus * tokens_per_s_per_gpu)
    return CalibrationRow(
        id=f"3c-{label}",
        dataset="3c",
        role=role,
        model=mpt_shape(layers, hidden, heads),
        system="dgx-h100",
        gpus=gpus,
        batch_sequences=batch,
        parallelism=TrainingParallelism(tp=1, pp=1, dp=gpus, micro_batch=mb, recompute=recompute, zero_stage=3),
        software={"flash_attention": 1, "sequence_parallel": 0},
        published_step_s=step,
        published_metric=f"MFU {mfu:.1%} ({tokens_per_s_per_gpu:,.0f} tokens/s/GPU)",
        basis="MFU (llm-foundry formula) -> s/step",
        notes=f"FSDP full shard, micro-batch {mb}, global batch {batch}",
    )


PAPER_ROWS: list[CalibrationRow] = [
    _narayanan("1.7B", 24, 2304, 24, 1, 1, 32, 512, 137),
    _narayanan("18.4B", 48, 6144, 40, 8, 1, 256, 1024, 135),
    _narayanan("145.6B", 96, 12288, 80, 8, 8, 1536, 2304, 148),
    _narayanan("310.1B", 128, 16384, 96, 8, 16, 1920, 2160, 155),
    _narayanan("529.6B", 128, 20480, 105, 8, 35, 2520, 2520, 163),
    _narayanan("1008B", 160, 25600, 128, 8, 64, 3072, 3072, 163),
    *_korthikanti("22B", 64, 6144, 48, 1, 4, 1, 1.42, 1.10, 0.415),
    *_korthikanti("175B", 96, 12288, 96, 8, 64, 3, 18.13, 13.75, 0.514),
    *_korthikanti("530B", 128, 20480, 105, 35, 280, 3, 49.05, 37.83, 0.560),
    *_korthikanti("1T", 160, 25600, 128, 64, 512, 1, 94.42, 71.49, 0.563),
    _foundry("70B", 80, 8192, 64, 64, 8, 2048, "full", 64_862_437_376, 0.4257, "fit"),
    _foundry("30B", 48, 7168, 56, 32, 14, 1344, "full", 29_975_214_080, 0.4392, "held out"),
    _foundry("13B", 40, 5120, 40, 8, 2, 16, "none", 12_853_954_560, 0.3979, "held out"),
    _foundry("7B", 32, 4096, 32, 8, 6, 48, "none", 6_658_859_008, 0.4644, "held out"),
]
