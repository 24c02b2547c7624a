"""The published whole runs the planner is checked against: each as the plan request a user would write for it.

Why a module of its own: the rows are data with their sources (paper, table, configuration file) and the reasons
each run is expressed as it is (its published layout and the software of its time); the evaluation and the fit
that read them live in calibration/whole_run.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CKPT",
    "LLAMA2_GPUS",
    "UNCOUNTED_RUNS",
    "WHOLE_RUN_ROWS",
    "UncountedRun",
    "WholeRunRow",
    "preset_request",
]

# Llama 2's GPU counts are not published; the rows use 2,048 A100 (256 DGX A100), the count LLaMA (1) published
# for its 65B run and a slice Meta's 16,000-GPU Research SuperCluster readily supplies. The planner's GPU-hours
# move by a few per cent between 1K and 4K GPUs.
LLAMA2_GPUS = 2048


@dataclass(frozen=True)
class WholeRunRow:
    id: str
    source: str
    request: dict[str, Any]
    published: float
    unit: str  # "gpu_hours" or "days"
    excludes_failures: bool  # the published figure leaves failures out (Pythia: iteration time x iterations)
    notes: str


def _shape(layers: int, hidden: int, heads: int, kv: int, ffn: int, vocab: int, seq: int, **flags: bool) -> dict:
    return {
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "kv_heads": kv,
        "ffn_hidden": ffn,
        "vocab": vocab,
        "seq_len": seq,
        **flags,
    }


def _request(
    model: dict,
    system: str,
    gpus: int,
    tokens: float,
    batch_tokens: int,
    parallelism: dict | None = None,
    software: dict[str, float] | None = None,
) -> dict[str, Any]:
    """A run's plan request; `software` fixes the stack of the run's time where its configuration publishes it
    (as the throughput rows do), so a 2022 run is not credited with kernels and overlaps it did not have."""
    training = {"tokens": tokens, "gpus": gpus, "global_batch_tokens": batch_tokens, "checkpointing": CKPT}
    if parallelism:
        training["parallelism"] = parallelism
    request = {
        "workload": "training",
        "model": model,
        "hardware": {"system": system},
        # Published runs keep the recovery the planner calibrated them with (checkpoints to storage, written
        # asynchronously), not the mode `auto` would pick today.
        "training": training,
    }
    if software:
        request["assumptions"] = dict(software)
    return request


def preset_request(
    preset: str, system: str, gpus: int, tokens: float, precision: str, parallelism: dict, **assumptions: float
) -> dict[str, Any]:
    """A published run of a catalog preset: the preset's own published batch schedule, the run's layout and
    precision, and any assumption the run's report fixes (DeepSeek-V3's all-to-all overlap)."""
    request: dict[str, Any] = {
        "workload": "training",
        "model": {"preset": preset},
        "hardware": {"system": system},
        "training": {
            "tokens": tokens,
            "gpus": gpus,
            "checkpointing": CKPT,
            "precision": precision,
            "parallelism": parallelism,
        },
    }
    if assumptions:
        request["assumptions"] = assumptions
    return request


CKPT = "asynchronous"
_LLAMA2 = "Touvron et al. 2023, 'Llama 2', arXiv 2307.09288, Tables 1-2"
_LLAMA1 = (
    "Touvron et al. 2023, 'LLaMA: Open and Efficient Foundation Language Models', arXiv 2302.13971, Tables 2 and 15"
)
_MPT = "Databricks/MosaicML, 'Introducing MPT-7B', 2023-05-05"
_PYTHIA = "Biderman et al. 2023, 'Pythia', arXiv 2304.01373, Appendix D Table 5"
_NEOX = {"ffn_gated": False, "biases": True}
# Pythia's published training configurations (EleutherAI/pythia, models/12B/pythia-12b.yml and
# models/6.9B/pythia-6.9b.yml): tensor parallel 4 (12B) or 2 (6.9B), no pipeline, micro-batch 8 with 2
# accumulation steps, every layer's activations recomputed ("checkpoint-activations", one layer per checkpoint)
# and DeepSpeed ZeRO stage 1. A whole run is predicted with the layout the run used, as the throughput rows are:
# the search's best layout is not what a 2022 run chose (it skips the full recompute, a third more compute).
# No context parallelism (GPT-NeoX had none). The same configs fix the stack: FlashAttention ("attention-config":
# flash), Megatron-style tensor-parallel all-reduces without sequence parallelism and so without overlapping them
# (GPT-NeoX of 2022 had neither; "partition-activations" only shards the saved activations).
_PYTHIA_LAYOUT = {"pp": 1, "cp": 1, "micro_batch": 8, "recompute": "full", "zero_stage": 1}
_PYTHIA_SOFTWARE = {"flash_attention": 1, "sequence_parallel": 0, "tp_comm_overlap_fraction": 0}
# MPT-7B's published training configuration (mosaicml/llm-foundry, scripts/train/yamls/pretrain/mpt-7b.yaml):
# FSDP FULL_SHARD, activation checkpointing on every block, no tensor or context parallelism. Its device
# micro-batch of 8 is a ceiling: the published run's 1,760 sequences per step on 440 GPUs give each GPU 4, taken
# in one micro-step (a pinned 8 would make the planner double the batch to keep every GPU's micro-batch full).
_MPT_LAYOUT = {"tp": 1, "pp": 1, "cp": 1, "micro_batch": 4, "recompute": "full", "zero_stage": 3}
_LLAMA3 = (
    "Llama Team, AI @ Meta, 'The Llama 3 Herd of Models', arXiv 2407.21783 (2024-07-23), sections 3.3-3.4 and "
    "Table 4; meta-llama Llama 3.1 model card (2024-07-23), training GPU-hours"
)
_BLOOM = (
    "Luccioni, Viguier and Ligozat, 'Estimating the Carbon Footprint of BLOOM, a 176B Parameter Language Model' "
    "(JMLR 24(253), 2023; arXiv 2211.02001), Table 1; BigScience Workshop, 'BLOOM' (arXiv 2211.05100), section 3.4"
)
# BLOOM's published training script (bigscience-workshop/bigscience, train/tr11-176B-ml/tr11-176B-ml.slurm): 48
# nodes of 8 A100-80GB, TP4 PP12 (so DP8), micro-batch 2, every layer recomputed ("--checkpoint-activations"),
# BF16 with DeepSpeed's ZeRO-1-equivalent BF16 optimizer, no interleaving (DeepSpeed's pipeline engine has none),
# and Megatron-DeepSpeed's stack of 2022: fused softmax kernels rather than FlashAttention, plain tensor-parallel
# all-reduces without sequence parallelism, nothing overlapped.
_BLOOM_LAYOUT = {"tp": 4, "pp": 12, "cp": 1, "micro_batch": 2, "recompute": "full", "zero_stage": 1, "interleave": 1}
_MEGATRON_DEEPSPEED_2022 = {"flash_attention": 0, "sequence_parallel": 0, "tp_comm_overlap_fraction": 0}
_STARCODER = (
    "Li et al., 'StarCoder: may the source be with you!' (arXiv 2305.06161, May 2023), sections 5.6-5.7: "
    "StarCoderBase's 320,256 A100 GPU-hours for 1T tokens"
)
# StarCoderBase's published layout (the paper, section 5.6): 512 A100-80GB in 64 nodes, tensor and pipeline
# parallel 4 each (16 GPUs a replica), data parallel 32, micro-batch 1 with 16 accumulation steps. BigCode's
# Megatron-LM configurations for the model (bigcode-project/Megatron-LM, 2023) add sequence parallelism,
# selective recompute ("--recompute-activations"), the distributed optimizer (ZeRO-1) and no interleaving; the
# paper adds FlashAttention for the 8K context and gradients reduced in FP32 under BF16 ("10 % lower throughput
# than FP16"). No tensor-parallel overlap: Megatron-LM of early 2023 had none.
_STARCODER_LAYOUT = {
    "tp": 4,
    "pp": 4,
    "cp": 1,
    "micro_batch": 1,
    "recompute": "selective",
    "zero_stage": 1,
    "interleave": 1,
}
_MEGATRON_2023_FP32_GRADS = {
    "flash_attention": 1,
    "sequence_parallel": 1,
    "tp_comm_overlap_fraction": 0,
    "grad_reduce_bytes_per_param": 4,
}
_DEEPSEEK = "DeepSeek-AI, 'DeepSeek-V3 Technical Report', arXiv 2412.19437, Table 1 and sections 3.1-3.3"
_SMOLLM3 = (
    "Hugging Face, 'SmolLM3: smol, multilingual, long-context reasoner' (blog, 2025-07-08), training "
    "configuration; HuggingFaceTB/SmolLM3-3B-checkpoints (global batch 2,359,296 tokens)"
)
_GRANITE = (
    "Granite Team, IBM, 'Granite 3.0 Language Models' (technical report with the models' release, 2024-10-21; PDF "
    "of 2024-11-09), sections 4.2-4.3 and Table 7: "
    "H100 80GB (Blue Vela), 12T tokens for the dense models and 10T for the MoE models at 4M tokens a step"
)
# Granite 3.0's dense layouts as the report gives them (section 4.3): 3D parallelism with ZeRO-1 sharding of the
# optimizer over data parallelism, the 1F1B schedule (interleaving not mentioned: plain 1F1B taken), stages of equal
# compute with the embedding and the LM head on the end stages (40 layers: 10 a stage), tensor parallelism only
# inside a server.
_GRANITE_8B_LAYOUT = {"tp": 4, "pp": 4, "cp": 1, "interleave": 1, "zero_stage": 1, "first_stage_layers": 10,
                      "last_stage_layers": 10}  # fmt: skip
_GRANITE_2B_LAYOUT = {"tp": 2, "pp": 1, "cp": 1, "zero_stage": 1}
_PHI4 = (
    "Microsoft, microsoft/phi-4 model card (Hugging Face, 2024-12-12): 1,920 H100-80G, 21 days, 9.8T tokens; "
    "Abdin et al., 'Phi-4 Technical Report' (arXiv 2412.08905, 2024-12-12), section 3"
)
# SmolLM3-3B's shape (HuggingFaceTB/SmolLM3-3B config.json): 36 layers of 2,048, 16 query heads sharing 4
# key/value heads, SwiGLU FFN of 11,008, 128,256-token vocabulary with tied embeddings, 4,096-token pre-training
# sequences (every fourth layer without rotary positions, which costs nothing the planner counts).
_SMOLLM3_SHAPE = (36, 2048, 16, 4, 11008, 128_256, 4096)


def _pythia(label: str, shape: tuple[int, ...], gpus: int, tp: int, hours: float) -> WholeRunRow:
    """A Pythia row (App. D Table 5: GPU-hours from iteration time x iterations, failures excluded) on A100-40GB,
    300B tokens at 1,024 x 2,048 tokens per step, with its published layout (`_PYTHIA_LAYOUT` and its TP)."""
    model = _shape(*shape, 50304, 2048, **_NEOX)
    return WholeRunRow(
        f"pythia-{label}",
        _PYTHIA,
        _request(model, "dgx-a100-40gb", gpus, 300e9, 1024 * 2048, {"tp": tp, **_PYTHIA_LAYOUT}, _PYTHIA_SOFTWARE),
        hours,
        "gpu_hours",
        True,
        f"{gpus} A100-40GB, GPT-NeoX (2022); failures excluded; published layout TP{tp}, micro-batch 8, full "
        "recompute, ZeRO-1, FlashAttention, tensor-parallel all-reduces without sequence parallelism "
        "(EleutherAI/pythia configs)",
    )


WHOLE_RUN_ROWS: list[WholeRunRow] = [
    *(
        WholeRunRow(
            f"llama2-{label}",
            _LLAMA2,
            _request(_shape(*shape, 32_000, 4096), "dgx-a100-80gb", LLAMA2_GPUS, 2e12, 4 * 1024 * 1024),
            hours,
            "gpu_hours",
            False,
            f"GPU count not published: {LLAMA2_GPUS} assumed; A100-80GB at 350-400 W",
        )
        for label, shape, hours in (
            ("7b", (32, 4096, 32, 32, 11008), 184_320),
            ("13b", (40, 5120, 40, 40, 13824), 368_640),
            ("34b", (48, 8192, 64, 8, 22016), 1_038_336),
            ("70b", (80, 8192, 64, 8, 28672), 1_720_320),
        )
    ),
    *(
        WholeRunRow(
            f"llama1-{label}",
            _LLAMA1,
            _request(_shape(*shape, 32_000, 2048), "dgx-a100-80gb", LLAMA2_GPUS, tokens, 4 * 1024 * 1024),
            hours,
            "gpu_hours",
            False,
            "2,048 A100-80GB (the paper's figure for 65B, assumed for the others); layout not published",
        )
        for label, shape, tokens, hours in (
            ("7b", (32, 4096, 32, 32, 11008), 1e12, 82_432),
            ("13b", (40, 5120, 40, 40, 13824), 1e12, 135_168),
            ("33b", (60, 6656, 52, 52, 17920), 1.4e12, 530_432),
            ("65b", (80, 8192, 64, 64, 22016), 1.4e12, 1_022_362),
        )
    ),
    WholeRunRow(
        "mpt-7b",
        _MPT,
        _request(
            _shape(32, 4096, 32, 32, 16384, 50432, 2048, ffn_gated=False, tied_embeddings=True),
            "dgx-a100-40gb",
            440,
            1e12,
            1760 * 2048,
            _MPT_LAYOUT,
        ),
        9.5,
        "days",
        False,
        "440 A100-40GB, wall clock including 4 hardware-failure restarts; published layout FSDP full shard, "
        "4 sequences per GPU per step (1,760 on 440), every layer recomputed (llm-foundry mpt-7b.yaml)",
    ),
    _pythia("12b", (36, 5120, 40, 40, 20480), 256, 4, 72_300),
    _pythia("6.9b", (32, 4096, 32, 32, 16384), 128, 2, 33_500),
    WholeRunRow(
        "bloom-176b",
        _BLOOM,
        preset_request("bloom-176b", "dgx-a100-80gb", 384, 366e9, "bf16", _BLOOM_LAYOUT, **_MEGATRON_DEEPSPEED_2022),
        1_082_990,
        "gpu_hours",
        False,
        "384 A100-80GB (48 HPE Apollo 6500 nodes of Jean Zay, March-July 2022; the catalog's DGX A100 80GB stands "
        "in), 366B tokens, the published batch ramp; published layout TP4 PP12 DP8, micro-batch 2, every layer "
        "recomputed, Megatron-DeepSpeed of 2022 (no FlashAttention, no sequence parallelism; the script also ran "
        "with CUDA_LAUNCH_BLOCKING=1 against hangs)",
    ),
    WholeRunRow(
        "starcoder-15b",
        _STARCODER,
        preset_request(
            "starcoder-15b", "dgx-a100-80gb", 512, 1e12, "bf16", _STARCODER_LAYOUT, **_MEGATRON_2023_FP32_GRADS
        ),
        320_256,
        "gpu_hours",
        False,
        "512 A100-80GB, BF16 with FP32 gradient reduction, 1T tokens at 512 x 8,192 tokens per step; published "
        "layout TP4 PP4 DP32, micro-batch 1, sequence parallelism, selective recompute, FlashAttention (Megatron-LM "
        "of 2023)",
    ),
    WholeRunRow(
        "deepseek-v3",
        _DEEPSEEK,
        # DualPipe overlaps nearly all expert all-to-all time with computation (section 3.2.1).
        preset_request(
            "deepseek-v3",
            "hgx-h800",
            2048,
            14.8e12,
            "fp8",
            # DualPipe's own overlap (below), not Megatron-Core's combined 1F1B
            {"tp": 1, "pp": 16, "ep": 64, "cp": 1, "ep_overlap": False},
            moe_dispatch_overlap=0.95,
            moe_permute_in_dispatch=1,
        ),
        2_664_000,
        "gpu_hours",
        False,
        "2,048 H800, FP8, PP16 EP64 ZeRO-1, DualPipe (all-to-all overlap 0.95, its kernels on 20 of 132 SMs and "
        "placing tokens for the experts themselves, per the report); pre-training only "
        "(2.664M of the 2.788M H800 GPU-hours); published batch schedule",
    ),
    WholeRunRow(
        "smollm3-3b",
        _SMOLLM3,
        _request(_shape(*_SMOLLM3_SHAPE, tied_embeddings=True), "dgx-h100", 384, 11.2e12, 2_359_296),
        24.0,
        "days",
        False,
        "384 H100, 11.2T tokens in three 4K-context stages at 2,359,296 tokens per step, Hugging Face's nanotron "
        "(2025); layout not published: searched; the blog's 24 days, the two long-context stages after them "
        "left out",
    ),
    WholeRunRow(
        "phi-4",
        _PHI4,
        preset_request("phi-4", "dgx-h100", 1920, 9.8e12, "bf16", {}),
        21.0,
        "days",
        False,
        "1,920 H100, 9.8T tokens at the published 5,760 x 4,096 tokens per step, BF16 taken (not published); "
        "layout not published: searched; the card's 21 days and 9.8T tokens, taken as pre-training at 4K "
        "context (the report's 250B-token mid-training at 16K and the post-training may sit inside them: 2.5 % "
        "of the tokens, counted at 4K if so)",
    ),
    WholeRunRow(
        "granite3-8b",
        _GRANITE,
        preset_request("granite-3.0-8b", "dgx-h100", 768, 12e12, "bf16", _GRANITE_8B_LAYOUT),
        832_102,
        "gpu_hours",
        False,
        "768 H100, 12T tokens in two stages at 4M tokens a step, BF16 taken (not published); published layout TP4 "
        "PP4 with ZeRO-1, DP48 (plain 1F1B and 10 layers a stage taken: the report names the 1F1B schedule and "
        "equal stages with the embedding and the LM head on the end ones); the report's 832,102 GPU-hours (Table 7, "
        "from which it computes energy; whether restarts are in them is not said)",
    ),
    WholeRunRow(
        "granite3-2b",
        _GRANITE,
        preset_request("granite-3.0-2b", "dgx-h100", 256, 12e12, "bf16", _GRANITE_2B_LAYOUT),
        192_030,
        "gpu_hours",
        False,
        "256 H100, 12T tokens in two stages at 4M tokens a step, BF16 taken (not published); published layout TP2 "
        "with ZeRO-1, DP128; the report's 192,030 GPU-hours (Table 7)",
    ),
    WholeRunRow(
        "llama3-405b",
        _LLAMA3,
        preset_request("llama-3-405b", "dgx-h100", 16384, 15.6e12, "bf16", {"tp": 8, "pp": 16, "cp": 1}),
        30_840_000,
        "gpu_hours",
        False,
        "16,384 H100 (700 W), BF16, TP8 PP16 DP128 (the paper's Table 4 layout at 41 % MFU), 15.6T tokens with "
        "the published batch schedule; the model card's 30.84M GPU-hours (the paper: more than 90 % effective "
        "training time); the paper trained on 'up to' 16K GPUs, the row holds 16,384 throughout",
    ),
]


@dataclass(frozen=True)
class UncountedRun:
    """A published whole run checked but not fitted: its GPU count (and batch) is unpublished, so the planner's
    figure is shown at several plausible counts instead of one guess; or (one count) a run whose steady state the
    planner has not validated for its kind of model, whose gap is not the production efficiency's. It is reported
    beside the fitted rows so a reader sees where the planner disagrees with a famous figure, not used to move any
    constant."""

    id: str
    source: str
    preset: str
    system: str
    tokens: float
    published: float
    unit: str
    gpu_counts: tuple[int, ...]
    notes: str
    parallelism: dict[str, int] = field(default_factory=dict)  # the published layout, where there is one


_LLAMA31_CARD = "meta-llama Llama 3.1 model card (2024-07-23), training GPU-hours"
_FALCON = (
    "Technology Innovation Institute, tiiuae/falcon-180B model card (2023-09-06): up to 4,096 A100 40GB, TP8 PP8 "
    "DP64 with ZeRO, 3.5T tokens; Hugging Face, 'Spread Your Wings: Falcon 180B is here' (blog, 2023-09-06): "
    "~7,000,000 GPU hours on Amazon SageMaker"
)
_DEEPSEEK_V2 = (
    "DeepSeek-AI, 'DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language Model' (arXiv "
    "2405.04434, 2024-05-07), section 3: on DeepSeek's H800 cluster, 172.8K GPU-hours for each trillion "
    "tokens of DeepSeek-V2 and 300.6K for DeepSeek 67B"
)
UNCOUNTED_RUNS: list[UncountedRun] = [
    UncountedRun(
        "llama3.1-8b",
        _LLAMA31_CARD,
        "llama-3-8b",
        "dgx-h100",
        15e12,
        1_460_000,
        "gpu_hours",
        (1024, 2048, 4096, 8192, 16384),
        "GPU count and batch not published (the planner's 4M-token default); 1.46M GPU-hours for 15T tokens is "
        "14 % MFU by 6ND: the planner comes near it only when the 4M-token batch (512 sequences) is spread over "
        "8-16K GPUs (up to 16K trained the 405B), a sixteenth of a sequence or less per GPU a step; on 1-4K H100 "
        "its steady state for the 8B is 35-51 % MFU",
    ),
    UncountedRun(
        "llama3.1-70b",
        _LLAMA31_CARD,
        "llama-3-70b",
        "dgx-h100",
        15e12,
        7_000_000,
        "gpu_hours",
        (2048, 4096, 8192, 16384),
        "GPU count and batch not published (the planner's 4M-token default); 7.0M GPU-hours for 15T tokens is "
        "26 % MFU by 6ND",
    ),
    UncountedRun(
        "falcon-180b",
        _FALCON,
        "falcon-180b",
        "aws-p4d",
        3.5e12,
        7_000_000,
        "gpu_hours",
        (2048, 3072, 4096),
        "'up to 4,096' A100 40GB on SageMaker (p4d: 400 Gbps of EFA per 8 GPUs), the published TP8 PP8 pinned; "
        "~7M GPU-hours (one significant figure) for 3.5T tokens is 48 % MFU by 6ND over the whole run, above "
        "the planner's steady state for the layout (47 % at 3,072 GPUs, 44 % at 4,096; at 3,072 the data-parallel "
        "traffic of 2.9B parameters per GPU, the end stages with the embedding, over that EFA leaves 1.2 s of a "
        "10.2 s step exposed): like Llama 3 405B, the run went at least at benchmark pace, which the production "
        "efficiency fitted on the other runs does not expect",
        {"tp": 8, "pp": 8, "cp": 1},
    ),
    UncountedRun(
        "granite3-1b-a400m",
        _GRANITE,
        "granite-3.0-1b-a400m",
        "dgx-h100",
        10e12,
        71_171,
        "gpu_hours",
        (128,),
        "128 H100, data parallelism alone with ZeRO-1 (published); 10T tokens; 71,171 GPU-hours (Table 7). A "
        "fine-grained MoE of 400M active parameters (32 experts of 512, 8 active): about 10 % MFU by 6ND over the "
        "run. Not fitted: the planner's steady state for such small experts is not validated (it is 20-44 % fast "
        "on NVIDIA's older containers for Qwen3 30B-A3B and GPT-OSS, below), so the gap would move a dense run's "
        "production efficiency for a cause that is the MoE step's",
        {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "zero_stage": 1},
    ),
    UncountedRun(
        "granite3-3b-a800m",
        _GRANITE,
        "granite-3.0-3b-a800m",
        "dgx-h100",
        10e12,
        133_308,
        "gpu_hours",
        (256,),
        "256 H100, data parallelism alone with ZeRO-1 (published); 10T tokens; 133,308 GPU-hours (Table 7). A "
        "fine-grained MoE of 800M active parameters (40 experts of 512, 8 active); not fitted, for the reason above",
        {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "zero_stage": 1},
    ),
    UncountedRun(
        "deepseek-v2",
        _DEEPSEEK_V2,
        "deepseek-v2",
        "hgx-h800",
        8.1e12,
        1_399_680,
        "gpu_hours",
        (1024, 2048),
        "GPU count not published; 8.1T tokens at the paper's 172.8K GPU-hours a trillion (1.40M GPU-hours); the "
        "published layout pinned: 16 pipeline stages, 8 expert-parallel ranks, ZeRO-1, no tensor parallelism "
        "(section 3.1), BF16, the published batch ramp; its zero-bubble pipelining is not a schedule the planner "
        "costs, so interleaving is searched in its place, and Megatron-Core's expert all-to-all overlap is left off "
        "(not DeepSeek's stack)",
        {"tp": 1, "pp": 16, "ep": 8, "cp": 1, "zero_stage": 1, "ep_overlap": False},
    ),
    UncountedRun(
        "deepseek-llm-67b",
        _DEEPSEEK_V2,
        "deepseek-llm-67b",
        "hgx-h800",
        2e12,
        601_200,
        "gpu_hours",
        (512, 1024, 2048),
        "GPU count and layout not published (DeepSeek LLM, arXiv 2401.02954: tensor, sequence and 1F1B pipeline "
        "parallelism with ZeRO-1 on HAI-LLM; searched here); 2T tokens at the DeepSeek-V2 paper's 300.6K GPU-hours a "
        "trillion on the same H800 cluster (601,200 GPU-hours), BF16",
    ),
]
