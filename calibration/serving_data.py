"""The published serving measurements the inference model is fitted to and checked against, as data.

Why apart from the fit (`calibration/serving.py`): these are transcriptions of published tables
(reference/inference-calibration.md sections 1, 3, 5b, 5c and 7: each row's model, precision, GPU, TP/PP, ISL/OSL,
load and engine batch cap, and the published figure), checked against their sources; the fit and the comparison
read them and change for other reasons.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.catalog.hardware import Gpu
from engine.request.spec import ModelSpec

__all__ = ["ENGINE_BATCH_CAP", "INFERENCE_ROWS", "L40S", "MODELS", "InferenceRow"]

# L40S is not an orderable system in the catalog (no NVLink, PCIe only) but rows C3 and the section 7 grid use it.
L40S = Gpu(
    id="l40s",
    name="NVIDIA L40S",
    bf16_dense_tflops=362.0,
    fp8_dense_tflops=733.0,
    fp4_dense_tflops=None,
    hbm_gib=48.0,
    hbm_tbps=0.864,
    scaleup_gbyte_s=64.0,  # PCIe Gen4 x16, both directions
    tdp_w=350.0,
    confidence="vendor figure via faithful reproduction",
    source="NVIDIA L40S datasheet (via reference/hardware.md section 1)",
    as_of="2023-08-08",
    generation="ada",
)

# Engine batch caps: vLLM's max_num_seqs default (256); TensorRT-LLM's trtllm-bench builds pick large batches,
# 2048 is taken here [U: the build's chosen max_batch_size is not printed in perf-overview].
ENGINE_BATCH_CAP = {"trtllm": 2048, "vllm": 256}


def _llama(layers: int, hidden: int, heads: int, kv_heads: int, ffn: int, vocab: int) -> ModelSpec:
    return ModelSpec(
        layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, ffn_hidden=ffn, vocab=vocab, seq_len=8192
    )


# inference-calibration.md section 1.
MODELS: dict[str, ModelSpec] = {
    "llama-3.1-8b": _llama(32, 4096, 32, 8, 14336, 128_256),
    "llama-3.1-70b": _llama(80, 8192, 64, 8, 28672, 128_256),
    "llama-3.1-405b": _llama(126, 16384, 128, 8, 53248, 128_256),
    "llama-2-70b": _llama(80, 8192, 64, 8, 28672, 32_000),
    "llama-2-7b": _llama(32, 4096, 32, 32, 11008, 32_000),
    # GPT-J: plain GELU FFN 4h [U], biases, rotary (no learned positions), untied head.
    "gpt-j-6b": ModelSpec(
        layers=28,
        hidden=4096,
        heads=16,
        kv_heads=16,
        ffn_hidden=16384,
        vocab=50_400,
        seq_len=2048,
        ffn_gated=False,
        biases=True,
    ),
}


@dataclass(frozen=True)
class InferenceRow:
    """One published figure and the configuration that produced it.

    kind: "offline" (output tok/s, all requests at once), "tpot_rate" / "ttft_rate" (ms at `load` req/s),
    "tpot_batch" (ms per token of a static batch of `load` sequences), "ttft_batch1" (ms, one request alone).
    """

    id: str
    section: str
    role: str  # "fit" | "held out"
    kind: str
    model: str
    precision: str
    gpu: str
    tp: int
    prompt_tokens: int
    output_tokens: int
    published: float
    engine: str = "trtllm"
    load: float = 0.0
    pp: int = 1
    steps_per_schedule: int = 1  # published engine setting (vLLM --num-scheduler-steps)

    @property
    def unit(self) -> str:
        return "tok/s" if self.kind == "offline" else "ms"


def _off(
    rid: str,
    sec: str,
    role: str,
    model: str,
    prec: str,
    gpu: str,
    tp: int,
    isl: int,
    osl: int,
    pub: float,
    engine: str = "trtllm",
    steps: int = 1,
) -> InferenceRow:
    return InferenceRow(
        rid, sec, role, "offline", model, prec, gpu, tp, isl, osl, pub, engine, steps_per_schedule=steps
    )


_ROWS: list[InferenceRow] = [
    # Section 3: offline throughput (fit C1-C9).
    _off("C1", "3", "fit", "llama-3.1-8b", "fp8", "h100-sxm", 1, 1000, 1000, 15220),
    _off("C2", "3", "fit", "llama-3.1-8b", "bf16", "a100-80gb-sxm", 1, 1000, 1000, 3786.83),
    _off("C3", "3", "fit", "llama-3.1-8b", "fp8", "l40s", 1, 1000, 1000, 4054.71),
    _off("C4", "3", "fit", "llama-3.1-70b", "fp8", "h100-sxm", 1, 1000, 1000, 839.97),
    _off("C5", "3", "fit", "llama-3.1-70b", "fp8", "h100-sxm", 2, 1000, 1000, 4390.53),
    _off("C6", "3", "fit", "llama-3.1-70b", "fp8", "h200-sxm", 1, 1000, 1000, 2823.45),
    _off("C7", "3", "fit", "llama-3.1-70b", "bf16", "a100-80gb-sxm", 4, 1000, 1000, 1921.77),
    _off("C8", "3", "fit", "llama-3.1-70b", "fp4", "b200-hgx", 1, 1000, 1000, 7007),
    _off("C9", "3", "fit", "llama-3.1-405b", "fp8", "h200-sxm", 8, 1000, 1000, 3330),
    # 5b: lightly loaded decode (fit). TRT QPS 2 rows use the 467/256 online mix.
    InferenceRow("5b-8b-h100", "5b", "fit", "tpot_rate", "llama-3.1-8b", "bf16", "h100-sxm", 1, 467, 256, 8, load=2),
    InferenceRow("5b-8b-h200", "5b", "fit", "tpot_rate", "llama-3.1-8b", "bf16", "h200-sxm", 1, 467, 256, 6, load=2),
    InferenceRow("5b-70b-h100", "5b", "fit", "tpot_rate", "llama-3.1-70b", "bf16", "h100-sxm", 4, 467, 256, 21, load=2),
    InferenceRow("5b-70b-h200", "5b", "fit", "tpot_rate", "llama-3.1-70b", "bf16", "h200-sxm", 4, 467, 256, 18, load=2),
    # NIM concurrency 1: prompt/output lengths not in the stored copy; 1000/1000 assumed [U] (KV is small here).
    InferenceRow(
        "5b-70b-fp8-nim", "5b", "fit", "tpot_batch", "llama-3.1-70b", "fp8", "h100-sxm", 2, 1000, 1000, 18.58, load=1
    ),
    InferenceRow(
        "5b-70b-vllm-b8",
        "5b",
        "fit",
        "tpot_batch",
        "llama-3.1-70b",
        "bf16",
        "h200-sxm",
        4,
        32,
        128,
        2077.53 / 128,
        engine="vllm",
        load=8,
    ),
    InferenceRow(
        "5b-8b-vllm-b8",
        "5b",
        "fit",
        "tpot_batch",
        "llama-3.1-8b",
        "bf16",
        "h200-sxm",
        1,
        32,
        128,
        833.42 / 128,
        engine="vllm",
        load=8,
    ),
    # 5c: batch-1 first-token latency (fit).
    InferenceRow("5c-70b-h100x8", "5c", "fit", "ttft_batch1", "llama-2-70b", "fp8", "h100-sxm", 8, 2048, 1, 85.1),
    InferenceRow("5c-70b-h200x4", "5c", "fit", "ttft_batch1", "llama-2-70b", "fp8", "h200-sxm", 4, 2048, 1, 103.0),
    InferenceRow(
        "5c-70b-a100x8", "5c", "fit", "ttft_batch1", "llama-2-70b", "bf16", "a100-80gb-sxm", 8, 2048, 1, 249.2
    ),
    InferenceRow("5c-70b-h100x4-128", "5c", "fit", "ttft_batch1", "llama-2-70b", "fp8", "h100-sxm", 4, 128, 1, 19.6),
    InferenceRow("5c-gptj-h100", "5c", "fit", "ttft_batch1", "gpt-j-6b", "fp8", "h100-sxm", 1, 2048, 1, 23.8),
    InferenceRow("5c-gptj-a100", "5c", "fit", "ttft_batch1", "gpt-j-6b", "bf16", "a100-80gb-sxm", 1, 2048, 1, 136.4),
    InferenceRow("5c-7b-a100", "5c", "fit", "ttft_batch1", "llama-2-7b", "bf16", "a100-80gb-sxm", 1, 2048, 1, 132.4),
    # Held out: C10 (TRT v0.14 online, 467/256) at 12 req/s achieved and saturated.
    InferenceRow(
        "C10-ttft-2", "3", "held out", "ttft_rate", "llama-3.1-70b", "bf16", "h100-sxm", 4, 467, 256, 62, load=2
    ),
    InferenceRow(
        "C10-tpot-12", "3", "held out", "tpot_rate", "llama-3.1-70b", "bf16", "h100-sxm", 4, 467, 256, 66, load=12
    ),
    InferenceRow(
        "C10-ttft-12", "3", "held out", "ttft_rate", "llama-3.1-70b", "bf16", "h100-sxm", 4, 467, 256, 175, load=12
    ),
    _off("C10-sat", "3", "held out", "llama-3.1-70b", "bf16", "h100-sxm", 4, 467, 256, 4103),
    # C11/C12: vLLM 0.6.0 on ShareGPT; 202 prompt tokens (vLLM v0.6.0 blog's sample) [U], 194 output (derived).
    _off("C11-offline", "3", "held out", "llama-3.1-70b", "bf16", "h100-sxm", 4, 202, 194, 3700.64, "vllm", 10),
    InferenceRow(
        "C11-tpot-4",
        "3",
        "held out",
        "tpot_rate",
        "llama-3.1-70b",
        "bf16",
        "h100-sxm",
        4,
        202,
        194,
        23.58,
        engine="vllm",
        load=4,
        steps_per_schedule=10,
    ),
    InferenceRow(
        "C11-tpot-8",
        "3",
        "held out",
        "tpot_rate",
        "llama-3.1-70b",
        "bf16",
        "h100-sxm",
        4,
        202,
        194,
        29.15,
        engine="vllm",
        load=8,
        steps_per_schedule=10,
    ),
    InferenceRow(
        "C11-ttft-4",
        "3",
        "held out",
        "ttft_rate",
        "llama-3.1-70b",
        "bf16",
        "h100-sxm",
        4,
        202,
        194,
        179.15,
        engine="vllm",
        load=4,
        steps_per_schedule=10,
    ),
    _off("C12-offline", "3", "held out", "llama-3.1-8b", "bf16", "a100-80gb-sxm", 1, 202, 194, 4132.37, "vllm", 10),
    InferenceRow(
        "C12-tpot-4",
        "3",
        "held out",
        "tpot_rate",
        "llama-3.1-8b",
        "bf16",
        "a100-80gb-sxm",
        1,
        202,
        194,
        14.14,
        engine="vllm",
        load=4,
        steps_per_schedule=10,
    ),
    InferenceRow(
        "C12-tpot-8",
        "3",
        "held out",
        "tpot_rate",
        "llama-3.1-8b",
        "bf16",
        "a100-80gb-sxm",
        1,
        202,
        194,
        17.09,
        engine="vllm",
        load=8,
        steps_per_schedule=10,
    ),
    InferenceRow(
        "C12-ttft-4",
        "3",
        "held out",
        "ttft_rate",
        "llama-3.1-8b",
        "bf16",
        "a100-80gb-sxm",
        1,
        202,
        194,
        100.48,
        engine="vllm",
        load=4,
        steps_per_schedule=10,
    ),
]

# Section 7: TensorRT-LLM v0.17 offline grid, FP8 unless A100 (FP16). Columns 128/128, 128/2048, 2048/2048,
# 5000/500, 20000/2000; the 1000/1000 column is the fitted C rows (or held out where no C row exists).
_GRID_COLUMNS = ((128, 128), (128, 2048), (1000, 1000), (2048, 2048), (5000, 500), (20000, 2000))
_GRID: list[tuple[str, int, str, tuple[float | None, ...]]] = [
    ("llama-3.1-8b", 1, "h200-sxm", (29526, 25399, 17538, 11969, 3988, 1804)),
    ("llama-3.1-8b", 1, "h100-sxm", (28837, 21109, None, 9488, 3559, 1401)),
    ("llama-3.1-8b", 1, "a100-80gb-sxm", (6627, 5256, None, 2424, 825, 330)),
    ("llama-3.1-8b", 1, "l40s", (9105, 5366, None, 2225, 981, 328)),
    ("llama-3.1-70b", 1, "h200-sxm", (4021, 4166, None, 1914, 560, 280)),
    ("llama-3.1-70b", 1, "h100-sxm", (3378, 912, None, None, 245, None)),
    ("llama-3.1-70b", 2, "h200-sxm", (6823, 8290, 5165, 4184, 1025, 641)),
    ("llama-3.1-70b", 2, "h100-sxm", (6645, 6170, None, 2898, 920, 443)),
    ("llama-3.1-70b", 2, "a100-80gb-sxm", (1314, 531, 473, 261, 121, None)),
    ("llama-3.1-70b", 4, "h200-sxm", (11099, 14156, 8911, 7130, 1812, 1200)),
    ("llama-3.1-70b", 4, "h100-sxm", (11128, 11512, 7431, 5480, 1603, 920)),
    ("llama-3.1-70b", 4, "a100-80gb-sxm", (2733, 2811, None, 1394, 393, 212)),
    ("llama-3.1-70b", 4, "l40s", (1524, 1943, 1209, 970, 250, 162)),
    ("llama-3.1-70b", 8, "h200-sxm", (15356, 21196, 13181, 11142, 2718, 1920)),
    ("llama-3.1-70b", 8, "h100-sxm", (14731, 17062, 11451, 8802, 2457, 1513)),
    ("llama-3.1-70b", 8, "a100-80gb-sxm", (4718, 5242, 3320, 2554, 696, 413)),
    ("llama-3.1-405b", 8, "h200-sxm", (3874, 5938, 3400, 2941, 669, 535)),
]
for _model, _tp, _gpu, _values in _GRID:
    for (_isl, _osl), _value in zip(_GRID_COLUMNS, _values, strict=True):
        if _value is not None:
            _prec = "bf16" if _gpu == "a100-80gb-sxm" else "fp8"
            _name = f"7-{_model.removeprefix('llama-3.1-')}-tp{_tp}-{_gpu.split('-')[0]}-{_isl}/{_osl}"
            _ROWS.append(_off(_name, "7", "held out", _model, _prec, _gpu, _tp, _isl, _osl, float(_value)))

INFERENCE_ROWS: tuple[InferenceRow, ...] = tuple(_ROWS)
