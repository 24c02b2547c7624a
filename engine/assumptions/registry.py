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
_INFERENCE_FIT = (
    "Fitted with the other inference constants (calibration/serving.py, make accuracy) on "
    "inference-calibration.md rows C1-C9, 5b and 5c; C10-C12 and the section 7 grid are held out. See docs/accuracy.md."
)
_INFER = ("inference",)
_BOTH = ("training", "inference")

ASSUMPTIONS: dict[str, Assumption] = {
    a.name: a
    for a in [
        _a(
            "gemm_efficiency_ampere",
            0.729,
            "fraction of dense peak",
            0.05,
            1.0,
            _TRAIN,
            "Fraction of the dense peak a large GEMM reaches on A100 (Ampere); smaller GEMMs lose more to "
            "kernel_overhead_us. The step-time model's main compute constant.",
            "Calibrated (scripts/accuracy.py, calibration/training.py) on Korthikanti et al. 2022 Table 5, "
            "both recompute modes (training-calibration.md 3b); Narayanan 2021 Table 1 (3a) is held out. See "
            "docs/accuracy.md.",
        ),
        _a(
            "gemm_efficiency_hopper",
            0.583,
            "fraction of dense peak",
            0.05,
            1.0,
            _TRAIN,
            "Fraction of the dense peak a large GEMM reaches on H100/H200 (Hopper).",
            "Calibrated on the llm-foundry 70B / 64 x H100 row (training-calibration.md 3c); the 7B, 13B and 30B "
            "rows are held out. See docs/accuracy.md.",
        ),
        _a(
            "gemm_efficiency_blackwell",
            0.583,
            "fraction of dense peak",
            0.05,
            1.0,
            _TRAIN,
            "Fraction of the dense peak a large GEMM reaches on B200/B300 (Blackwell).",
            "Not calibrated: no public Blackwell training measurement is in the reference data, so the Hopper "
            "value is carried over. Override when measured.",
        ),
        _a(
            "fp8_gemm_efficiency_ratio",
            0.80,
            "ratio",
            0.1,
            1.0,
            _TRAIN,
            "GEMM efficiency in FP8 relative to BF16 (scaling/casting kernels and less mature tiles); attention and "
            "element-wise work stay in BF16 in any case.",
            "Not calibrated (the reference data are BF16 only). Judgement: FP8 end-to-end speed-ups of 1.3-1.5x "
            "over BF16 are usual, which this ratio plus the BF16 attention reproduces for 8B-70B models.",
        ),
        _a(
            "flash_attention_efficiency_ratio",
            0.75,
            "ratio",
            0.1,
            1.5,
            _TRAIN,
            "Speed of the fused (flash) attention kernel relative to a GEMM of the same FLOPs.",
            "Judgement from the FlashAttention-2 paper (Dao 2023): forward 50-73 % of A100 peak against ~80 % for "
            "large cuBLAS GEMMs, i.e. ~0.75.",
        ),
        _a(
            "flash_attention",
            1,
            "0 or 1",
            0,
            1,
            _TRAIN,
            "1 = fused attention (scores never stored: no 5as/h activation term, causal half of the square "
            "computed); 0 = unfused softmax attention as in Megatron-LM 2021-2022.",
            "Every current training stack uses fused attention. The Megatron calibration rows (3a, 3b) predate it "
            "and are evaluated with 0; llm-foundry (3c) used it.",
            integer=True,
        ),
        _a(
            "sequence_parallel",
            1,
            "0 or 1",
            0,
            1,
            _TRAIN,
            "1 = sequence parallelism alongside tensor parallelism (norms, dropouts and their activations sharded "
            "over tp; same collective volume); 0 = tensor parallelism only.",
            "Korthikanti et al. 2022; on by default in Megatron-Core. Narayanan 2021 (3a) and Korthikanti's full-"
            "recompute baseline (3b) ran without it.",
            integer=True,
        ),
        _a(
            "hbm_efficiency",
            0.80,
            "fraction of HBM bandwidth",
            0.05,
            1.0,
            _TRAIN,
            "Fraction of HBM bandwidth memory-bound kernels (norms, residuals, softmax, optimizer) reach.",
            "Judgement: STREAM-like kernels reach 80-90 % of HBM bandwidth on A100/H100; 0.8 allows for small "
            "tensors.",
        ),
        _a(
            "nvlink_efficiency",
            0.75,
            "fraction of NVLink bandwidth",
            0.05,
            1.0,
            _BOTH,
            "Achieved bus bandwidth of NVLink collectives as a fraction of the per-direction NVLink bandwidth.",
            "nccl-tests all-reduce bus bandwidth on 8-GPU NVSwitch systems: ~230 of 300 GB/s (A100), ~360 of 450 "
            "GB/s (H100), i.e. 0.75-0.8.",
        ),
        _a(
            "scaleout_efficiency",
            0.80,
            "fraction of NIC line rate",
            0.05,
            1.0,
            _TRAIN,
            "Achieved bandwidth of collectives over the compute fabric as a fraction of the NICs' line rate.",
            "Judgement: nccl-tests over InfiniBand typically reach 80-90 % of line rate at large message sizes.",
        ),
        _a(
            "kernel_overhead_us",
            4.0,
            "microseconds per kernel",
            0.0,
            1000.0,
            _TRAIN,
            "Fixed launch and tail time per GPU kernel; makes small operations reach a smaller fraction of peak.",
            "Judgement: CUDA kernel launch plus wave-quantisation tail of a few microseconds.",
        ),
        _a(
            "collective_latency_us",
            10.0,
            "microseconds per collective",
            0.0,
            10000.0,
            _TRAIN,
            "Fixed latency of one collective or point-to-point transfer.",
            "Judgement: NCCL small-message latency on NVLink/InfiniBand is ~5-20 us.",
        ),
        _a(
            "dp_overlap_fraction",
            0.8,
            "fraction",
            0.0,
            1.0,
            _TRAIN,
            "Share of the backward pass that data-parallel gradient (and ZeRO-3 parameter) collectives can hide "
            "behind.",
            "Judgement: Megatron-LM and FSDP overlap bucketed collectives with the backward; the first buckets "
            "cannot overlap.",
        ),
        _a(
            "grad_reduce_bytes_per_param",
            2.0,
            "bytes per parameter",
            1.0,
            4.0,
            _TRAIN,
            "Bytes per gradient element in the data-parallel reduction.",
            "BF16 gradient reduction (FSDP mixed precision, Megatron-Core default); 4 for FP32 reduction.",
        ),
        _a(
            "storage_write_gbyte_s_per_gpu",
            0.08,
            "GB/s per GPU",
            0.001,
            100.0,
            _TRAIN,
            "Aggregate checkpoint write bandwidth of the storage system, per GPU of the job.",
            "facility.md section 8: H100 SuperPOD 'Better' storage tier, 20 GB/s write per 256-GPU SU = 0.08 GB/s "
            "per GPU.",
        ),
        _a(
            "checkpoint_bytes_per_param",
            14.0,
            "bytes per parameter",
            2.0,
            32.0,
            _TRAIN,
            "Checkpoint size per parameter (bf16 weights 2 + fp32 master 4 + Adam m 4 + v 4).",
            "facility.md section 8 (checkpoints): 14 B/param.",
        ),
        _a(
            "restart_minutes",
            15.0,
            "minutes",
            0.0,
            1440.0,
            _TRAIN,
            "Time from a failure to training again: detection, rescheduling onto spares, loading the checkpoint, "
            "warm-up.",
            "Judgement; cloud-pricing.md uses R = 30 min for whole-instance replacement, a training cluster with "
            "hot spares and automated restart does better.",
        ),
        _a(
            "node_mtbf_hours",
            0,
            "hours per system",
            0,
            10_000_000,
            _TRAIN,
            "Mean time between job-interrupting failures of one system; 0 = each system's catalog value "
            "(node_mtbf_hours, with its source).",
            "Catalog default derived from the Llama 3 paper (419 interruptions in 54 days on 16,384 H100).",
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
            "(m >= value x pp), so the pipeline fills; the bubble itself is in the step time.",
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
            0.971,
            "fraction of HBM",
            0.1,
            1.0,
            _INFER,
            "Share of each GPU's HBM the serving engine may use for weights, the activation workspace and the KV "
            "cache; what is left after weights and workspace is the KV budget (usable KV fraction).",
            "Fitted (KV-starved row C4 and C5/C6 bind it). Consistent with TensorRT-LLM handing 0.95 of the memory "
            "left after weights to the KV cache (inference-calibration.md section 2); vLLM's default is 0.90 of all "
            "HBM, so override to 0.9 to plan for vLLM. " + _INFERENCE_FIT,
        ),
        _a(
            "decode_mbu",
            0.648,
            "fraction of HBM bandwidth",
            0.05,
            1.0,
            _INFER,
            "Fraction of HBM bandwidth decode kernels reach on the bytes a step reads (weights / tp + KV). The "
            "effective utilisation a user measures is lower and falls with TP and GPU speed, because all-reduce "
            "latency and fixed costs are added on top (docs/accuracy.md lists the derived curve).",
            "Fitted; inference-calibration.md 5b derives 41-61 % effective MBU from lightly loaded decode. "
            + _INFERENCE_FIT,
        ),
        _a(
            "decode_step_overhead_ms",
            0.0,
            "ms per engine iteration",
            0.0,
            1000.0,
            _INFER,
            "Fixed CPU / launch / synchronisation time per engine iteration, on top of the roofline.",
            "Fitted to 0: the TP1 decode points (5b: 8B at 6-8 ms) leave no room for a fixed cost beyond "
            "decode_mbu, so fixed costs show up only through inference_allreduce_latency_us at TP > 1. "
            + _INFERENCE_FIT,
        ),
        _a(
            "prefill_mfu",
            0.619,
            "fraction of dense peak",
            0.01,
            1.0,
            _INFER,
            "GEMM efficiency reached with many tokens in flight (long prompts, batched prefill, large decode "
            "batches); the efficiency at n tokens is prefill_mfu x n / (n + prefill_half_mfu_tokens).",
            "Fitted; inference-calibration.md 5c implies 45-67 % for FP16 2K prompts, ~10 % at 128 tokens. "
            + _INFERENCE_FIT,
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
            "inference_allreduce_latency_us",
            18.6,
            "microseconds per all-reduce",
            0.0,
            1000.0,
            _INFER,
            "Fixed latency of one tensor-parallel all-reduce during serving (two per layer per engine iteration); "
            "with decode_step_overhead_ms it is why bandwidth utilisation falls as TP rises.",
            "Fitted. " + _INFERENCE_FIT,
        ),
        _a(
            "prefill_half_mfu_tokens",
            230.0,
            "tokens",
            1.0,
            100000.0,
            _INFER,
            "Tokens in flight at which a GEMM reaches half of prefill_mfu: efficiency = prefill_mfu x n / (n + this). "
            "Gives prefill MFU by prompt length and the compute ceiling of decode at batch n.",
            "Fitted. " + _INFERENCE_FIT,
        ),
        _a(
            "prefill_chunk_tokens",
            8192,
            "tokens",
            64,
            1_000_000,
            _INFER,
            "Prompt tokens one engine iteration processes (longer prompts are chunked; under load prompts from many "
            "requests are batched up to it). Sizes the activation workspace and the batched prefill efficiency.",
            "TensorRT-LLM default max_num_tokens 8192 (perf-overview engine builds).",
            integer=True,
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

# The physical build's assumptions (fabric, storage, facility) are kept in their own module and merged here, so
# one registry validates and reports every override. Imported after the Assumption class exists (it uses it).
from engine.assumptions.build import BUILD_ASSUMPTIONS  # noqa: E402

ASSUMPTIONS.update({a.name: a for a in BUILD_ASSUMPTIONS})


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
