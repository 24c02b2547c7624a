"""Named engine assumptions: every efficiency constant lives here with its default, unit and justification.

A plan reports the value it used for each one and the user can override any of them through the request's
`assumptions` object, so no constant is hidden in a formula.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ASSUMPTIONS", "KV_BYTES_BY_PRECISION", "Assumption", "Assumptions"]

# Bytes per KV-cache element by serving precision: FP8/FP4 serving stacks keep an FP8 KV cache (TensorRT-LLM
# perf-overview notes), weight-only INT8/INT4 keep a 16-bit cache.
KV_BYTES_BY_PRECISION = {"bf16": 2.0, "fp8": 1.0, "int8": 2.0, "int4": 2.0, "fp4": 1.0}


@dataclass(frozen=True)
class Assumption:
    """One overridable constant; `stages` says which chains use it so plans list only what they used."""

    name: str
    default: float
    unit: str
    source: str
    description: str
    minimum: float
    maximum: float
    stages: tuple[str, ...]
    integer: bool = False


def _a(
    name: str,
    default: float,
    unit: str,
    minimum: float,
    maximum: float,
    stages: tuple[str, ...],
    description: str,
    source: str,
    integer: bool = False,
) -> Assumption:
    return Assumption(name, default, unit, source, description, minimum, maximum, stages, integer)


_TRAIN = ("training",)
_INFER = ("inference",)
_BOTH = ("training", "inference")

ASSUMPTIONS: dict[str, Assumption] = {
    a.name: a
    for a in [
        _a(
            "training_mfu",
            0.40,
            "fraction of dense BF16 peak",
            0.01,
            1.0,
            _TRAIN,
            "Model FLOPs utilisation for BF16 training (6ND + attention FLOPs over GPUs x peak); applied alike to "
            "selective and full recompute, as the data show no clear MFU gap (llm-foundry's 42.6 % is full recompute).",
            "training-calibration.md: llm-foundry 70B on 64 H100 42.6 %, 7B-30B 39.8-46.4 %; Korthikanti 2022 "
            "selective recompute 41.5-56.3 % on A100. 0.40 sits at the low end, typical of a first production run.",
        ),
        _a(
            "training_mfu_fp8",
            0.28,
            "fraction of dense FP8 peak",
            0.01,
            1.0,
            _TRAIN,
            "MFU for FP8 training, measured against the FP8 dense peak.",
            "Not calibrated (the reference data are BF16 only). Attention, norms and communication stay in BF16, so "
            "end-to-end FP8 speed-ups over BF16 of ~1.3-1.5x are usual: 0.40 x 1.4 / 2 = 0.28. Override when measured.",
        ),
        _a(
            "training_memory_reserve_fraction",
            0.10,
            "fraction of HBM",
            0.0,
            0.9,
            _TRAIN,
            "HBM held back from the model state and activations (CUDA context, NCCL buffers, allocator fragmentation).",
            "Judgement, consistent with serving stacks leaving 5-10 % of HBM unused (vLLM gpu_memory_utilization 0.9, "
            "TensorRT-LLM kv_cache_free_gpu_mem_fraction 0.9-0.95; inference-calibration.md section 2).",
        ),
        _a(
            "max_tensor_parallel",
            8,
            "GPUs",
            1,
            72,
            _BOTH,
            "Largest tensor-parallel degree considered; TP always stays inside one NVLink domain as well.",
            "Megatron-LM (Narayanan 2021) takeaway: TP no larger than the GPUs per node; all calibration runs use "
            "TP <= 8 (training-calibration.md sections 2-3).",
            integer=True,
        ),
        _a(
            "min_microbatches_per_stage",
            1,
            "micro-batches per pipeline stage",
            1,
            64,
            _TRAIN,
            "A pipelined layout is only proposed when each step has at least this many micro-batches per stage "
            "(m >= value x pp), so the pipeline fills; the bubble (pp - 1) / m is reported but not yet in the "
            "step time.",
            "Narayanan 2021 bubble (p - 1)/m; the calibration runs use m = 8p (training-calibration.md section 3), "
            "Llama 3 405B ran with m = pp; 1 is the loosest sensible rule.",
            integer=True,
        ),
        _a(
            "max_cluster_gpus",
            131072,
            "GPUs",
            1,
            1_000_000,
            _BOTH,
            "Largest cluster the planner will propose before declaring a target infeasible.",
            "Judgement: about the size of the largest single training clusters announced to date (~100k GPUs).",
            integer=True,
        ),
        _a(
            "inference_memory_utilization",
            0.90,
            "fraction of HBM",
            0.1,
            1.0,
            _INFER,
            "Share of each GPU's HBM the serving engine may use for weights plus KV cache.",
            "vLLM default gpu_memory_utilization 0.9; TensorRT-LLM gives 0.90-0.95 of the memory left after weights "
            "to the KV cache (inference-calibration.md section 2).",
        ),
        _a(
            "decode_mbu",
            0.55,
            "fraction of HBM bandwidth",
            0.05,
            1.0,
            _INFER,
            "Model bandwidth utilisation during decode (bytes read per step / (TPOT x HBM bandwidth)).",
            "inference-calibration.md 5b: derived MBU 41-61 % from lightly loaded decode. With decode_step_overhead_ms "
            "0.5 this reproduces the 5b TPOT points within -23 % .. +16 % (H100/H200, TP1-TP4).",
        ),
        _a(
            "decode_step_overhead_ms",
            0.5,
            "ms per decode step",
            0.0,
            1000.0,
            _INFER,
            "Fixed per-step CPU/launch/synchronisation time added to the bandwidth-bound decode time.",
            "Judgement: small because the 5b MBU derivation already folds most overhead into MBU; inference-"
            "calibration.md section 2 item 3 names the term.",
        ),
        _a(
            "prefill_mfu",
            0.35,
            "fraction of dense peak",
            0.01,
            1.0,
            _INFER,
            "MFU during prefill (prompt processing); also bounds decode once it turns compute-bound.",
            "inference-calibration.md 5c: batch-1 TTFT implies 21-35 % (FP8, 4-8 GPUs) to 45-67 % (FP16, 2K prompts); "
            "short prompts (~128 tokens) reach only ~10 %, so short-prompt TTFT is optimistic.",
        ),
        _a(
            "serving_utilization_target",
            0.70,
            "fraction of replica capacity",
            0.05,
            1.0,
            _INFER,
            "Planned load as a share of the maximum request rate a replica sustains at the latency targets.",
            "inference-calibration.md 5d: TTFT stays flat up to ~12 of ~16 req/s (75 % of saturation) and then "
            "explodes into queueing; 0.70 stays below that knee.",
        ),
        _a(
            "max_batch_per_replica",
            256,
            "sequences",
            1,
            65536,
            _INFER,
            "Largest number of sequences one replica decodes together.",
            "vLLM default max_num_seqs 256 (also used in the Lambda vLLM runs, inference-calibration.md section 7).",
            integer=True,
        ),
        _a(
            "kv_cache_bytes_per_element",
            2.0,
            "bytes",
            0.25,
            4.0,
            _INFER,
            "Bytes per KV-cache element. Default depends on precision: bf16/int8/int4 2 (16-bit cache), fp8/fp4 1.",
            "TensorRT-LLM perf-overview: FP8 quantisation also sets the KV cache to FP8 (inference-calibration.md "
            "section 3); weight-only INT8/INT4 keep a 16-bit cache.",
        ),
        _a(
            "int4_bytes_per_param",
            0.53125,
            "bytes per parameter",
            0.25,
            2.0,
            _INFER,
            "INT4 weight storage including group scales.",
            "4-bit weights plus a 16-bit scale and 16-bit zero point per group of 128 (GPTQ/AWQ layout): "
            "(4 + 32/128) / 8 = 0.53125 B; inference-calibration.md section 2 item 2 ('~0.5 plus scales').",
        ),
        _a(
            "fp4_bytes_per_param",
            0.5625,
            "bytes per parameter",
            0.25,
            2.0,
            _INFER,
            "FP4 (NVFP4) weight storage including block scales.",
            "NVFP4: 4-bit values with an FP8 scale per 16-element block: (4 + 8/16) / 8 = 0.5625 B; "
            "inference-calibration.md section 2 item 2.",
        ),
        _a(
            "cooling_air_max_kw",
            20.0,
            "kW per rack",
            1.0,
            500.0,
            _BOTH,
            "Highest rack load cooled by room air (CRAH, no containment).",
            "facility.md section 4 suggested engine default (raised-floor air ~10-20 kW per rack).",
        ),
        _a(
            "cooling_containment_max_kw",
            41.0,
            "kW per rack",
            1.0,
            500.0,
            _BOTH,
            "Highest rack load cooled by air with hot/cold-aisle containment.",
            "facility.md section 4: containment ~30-40 kW and a practical air ceiling near 41 kW; NVIDIA's air-cooled "
            "40.8 kW DGX H100 rack (4 systems) assumes containment, so 41 rather than the suggested 40 keeps it air.",
        ),
        _a(
            "cooling_rdhx_max_kw",
            75.0,
            "kW per rack",
            1.0,
            500.0,
            _BOTH,
            "Highest rack load cooled by active rear-door heat exchangers; above it direct liquid cooling is needed.",
            "facility.md section 4: active RDHx ~40-75 kW per rack (HPE/Motivair bands up to 75 kW).",
        ),
        _a(
            "liquid_residual_air_fraction",
            0.15,
            "fraction of IT heat",
            0.0,
            1.0,
            _BOTH,
            "Share of a direct-liquid-cooled rack's heat that still leaves in air (fans, NICs, PSUs, switches).",
            "facility.md section 4 (10-20 % residual air) and hardware.md section 2 (NVL72 liquid share 85 %).",
        ),
        _a(
            "pue_air",
            1.5,
            "ratio",
            1.0,
            3.0,
            _BOTH,
            "PUE used when the site gives none and the racks are room-air cooled.",
            "facility.md section 6: air-cooled enterprise 1.5 (Uptime global average 1.55-1.59).",
        ),
        _a(
            "pue_air_containment",
            1.4,
            "ratio",
            1.0,
            3.0,
            _BOTH,
            "PUE used when the site gives none and the racks need containment.",
            "facility.md section 6: modern air with containment 1.3-1.4 (upper end used).",
        ),
        _a(
            "pue_rdhx",
            1.3,
            "ratio",
            1.0,
            3.0,
            _BOTH,
            "PUE used when the site gives none and racks use rear-door heat exchangers.",
            "Judgement between facility.md section 6's containment (1.3-1.4) and liquid (1.15-1.25) bands.",
        ),
        _a(
            "pue_liquid",
            1.2,
            "ratio",
            1.0,
            3.0,
            _BOTH,
            "PUE used when the site gives none and racks are direct-liquid cooled.",
            "facility.md section 6: liquid-cooled AI hall 1.15-1.25 (mid-point).",
        ),
    ]
}


@dataclass
class Assumptions:
    """Resolved assumption values for one plan: defaults, then per-request defaults, then user overrides.

    It records which names were read so the plan lists exactly the assumptions behind its figures.
    """

    overrides: dict[str, float] = field(default_factory=dict)
    request_defaults: dict[str, float] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)

    def default(self, name: str) -> float:
        """The default for this request (some defaults depend on the request, e.g. KV bytes on precision)."""
        return self.request_defaults.get(name, ASSUMPTIONS[name].default)

    def __getitem__(self, name: str) -> float:
        self.used.add(name)
        value = self.overrides.get(name, self.default(name))
        return int(value) if ASSUMPTIONS[name].integer else float(value)

    def report(self) -> dict[str, dict[str, object]]:
        """`{name: {value, default, unit, source, description}}` for every assumption read, sorted by name."""
        out: dict[str, dict[str, object]] = {}
        for name in sorted(self.used):
            spec = ASSUMPTIONS[name]
            out[name] = {
                "value": self[name],
                "default": int(self.default(name)) if spec.integer else float(self.default(name)),
                "overridden": name in self.overrides,
                "unit": spec.unit,
                "source": spec.source,
                "description": spec.description,
            }
        return out
