"""Plan result parts for the workload and sizing stages: model shape, system selection, candidates, training and
inference summaries. Field names are the plan's JSON keys (design.md "The request and the plan")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.result.codec import meta
from engine.result.costs_cloud import FloatPercentiles  # p10 / p50 / p90, shared with the costs' ranges

__all__ = [
    "Candidate",
    "GoodputSummary",
    "InferenceParallelism",
    "InferenceSummary",
    "ModelSummary",
    "MoeSummary",
    "Parallelism",
    "Selection",
    "TrainingSummary",
    "WholeRunFactor",
    "WholeRunSummary",
]

OMIT = meta(omit_none=True)


@dataclass(frozen=True)
class MoeSummary:
    experts: int
    active: int


@dataclass(frozen=True)
class ModelSummary:
    """The model's shape as resolved (preset or explicit fields) and its parameter counts."""

    preset: str | None
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn_hidden: int
    vocab: int
    seq_len: int
    ffn_gated: bool
    moe: MoeSummary | None
    params: float
    params_derived: float
    active_params: float
    compute_params_active: float
    training_flops_per_token: float | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class Selection:
    """How the system was chosen; `basis` and `unpriced_systems` only when prices were given to the engine."""

    rule: str
    system: str | None
    basis: str | None = field(default=None, metadata=OMIT)
    unpriced_systems: tuple[str, ...] | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class Candidate:
    """One catalog system's pass through the chain, as the candidates table shows it.

    `it_kw` is the candidate's IT power as ranked: its GPU systems only (`systems_kw`, the same figure), because
    the network, storage and management gear are laid out for the chosen system alone; the chosen plan's `power`
    section carries every part. The keys of a stage that did not run are absent.
    """

    system: str
    gpu: str
    feasible: bool
    chosen: bool
    reason: str | None
    gpus: int | None = field(default=None, metadata=OMIT)
    days: float | None = field(default=None, metadata=OMIT)
    # The expected whole run's p10 and p90 on this system (the range `days`, its p50, sits in).
    days_p10: float | None = field(default=None, metadata=OMIT)
    days_p90: float | None = field(default=None, metadata=OMIT)
    days_ideal: float | None = field(default=None, metadata=OMIT)
    mfu: float | None = field(default=None, metadata=OMIT)
    search: Mapping[str, Any] | None = field(default=None, metadata=OMIT)
    replicas: int | None = field(default=None, metadata=OMIT)
    gpus_per_replica: int | None = field(default=None, metadata=OMIT)
    tokens_per_s_per_gpu: float | None = field(default=None, metadata=OMIT)
    limit: str | None = field(default=None, metadata=meta(present_if="serving"))
    closest: Mapping[str, float] | None = field(default=None, metadata=meta(present_if="serving"))
    it_kw: float | None = field(default=None, metadata=OMIT)
    systems_kw: float | None = field(default=None, metadata=OMIT)
    it_energy_mwh: float | None = field(default=None, metadata=OMIT)
    systems: int | None = field(default=None, metadata=OMIT)
    facility_kw: float | None = field(default=None, metadata=OMIT)
    selection_usd: float | None = field(default=None, metadata=meta(present_if="priced"))
    serving: bool = field(default=False, metadata=meta(json=False))
    priced: bool = field(default=False, metadata=meta(json=False))


@dataclass(frozen=True)
class Parallelism:
    """The chosen layout: gpus = tp x cp x pp x dp. `stage_layers` lists the transformer layers of each pipeline
    stage, first to last (the first also holds the embedding, the last the LM head and loss); `offload` says
    where the optimizer state lives (engine/performance/memory.py OFFLOAD_CODES); `activation_offload_layers`
    how many layers keep their activations in host memory between the passes (pp 1, no recompute); `etp` (MoE
    only, else null) whether each expert is split over the tensor-parallel ranks (etp = tp) or whole experts are
    folded onto them (etp = 1); `cp_comm` (null without context parallelism) how the cp GPUs exchange attention
    inputs (engine/performance/cp_comm.py), `cp_comm_windowed` (null without sliding-window layers) theirs, which
    Transformer Engine limits to the all-gather or the all-to-all; `ep_overlap` (MoE only, else null) whether the
    expert all-to-alls run under another micro-batch's computation (Megatron-Core's combined 1F1B schedule)."""

    tp: int
    pp: int
    dp: int
    micro_batch: int
    recompute: str
    interleave: int
    zero_stage: int
    ep: int
    cp: int = 1
    cp_comm: str | None = None
    cp_comm_windowed: str | None = None
    etp: int | None = None
    ep_overlap: bool | None = None
    stage_layers: tuple[int, ...] = ()
    offload: str = "none"
    activation_offload_layers: int = 0


@dataclass(frozen=True)
class GoodputSummary:
    """Expected goodput of the training job and the checkpoint interval it assumes (engine/performance/goodput.py)."""

    fraction: float
    systems: int
    node_mtbf_hours: float
    job_mtbf_s: float
    checkpoint_bytes: float
    checkpoint_write_s: float
    checkpoint_interval_s: float
    restart_s: float
    mtbf_source: str
    floored: bool
    checkpointing: str = ""
    checkpointing_reason: str = ""


@dataclass(frozen=True)
class WholeRunFactor:
    """One efficiency of the expected whole run: its p50 value and plausible range (fractions of wall-clock time
    that advance training), how much it stretches the steady-state days, its share of the range's spread, and
    the public sources behind it."""

    name: str
    efficiency: float
    low: float
    high: float
    description: str
    days_multiplier: float | None = field(default=None, metadata=OMIT)
    share_of_spread: float | None = field(default=None, metadata=OMIT)
    source: str | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class WholeRunSummary:
    """The expected whole run: the product of the factors' efficiencies and the drivers of its range (factor
    names, largest share of the spread first)."""

    efficiency: float
    drivers: tuple[str, ...]
    factors: tuple[WholeRunFactor, ...]
    # What a user should know about the run's biggest loss (e.g. in-memory checkpoints at 100K GPUs), if anything.
    note: str | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class TrainingSummary:
    """The `training` section. `days` is the plan's one time-to-train: every reader uses it."""

    gpus: int
    days: float
    days_ideal: float
    step_time_s: float
    tokens_per_s: float
    model_tflops_per_gpu: float
    hardware_tflops_per_gpu: float
    mfu: float
    hfu: float
    parallelism: Parallelism
    memory_per_gpu_gib: float
    memory_breakdown_gib: Mapping[str, float]
    hbm_gib: float
    micro_batches_per_step: int
    global_batch_sequences: int
    pipeline_bubble_fraction: float
    step_breakdown_s: Mapping[str, float]
    goodput: GoodputSummary | None
    search: Mapping[str, Any] | None
    frontier: tuple[Mapping[str, Any], ...]
    total_flops: float
    flops_per_token: float
    hardware_flops_per_token: float
    peak_tflops_per_gpu: float
    frontier_by_system: Mapping[str, Any] = field(default_factory=dict)
    # The requested global batch in sequences, and why the plan trains on another one (None when it is exact).
    global_batch_sequences_requested: int | None = field(default=None, metadata=OMIT)
    batch_note: str | None = field(default=None, metadata=OMIT)
    # The expected whole run (engine/performance/whole_run.py): `days` is its p50; the steady state (no failures,
    # a tuned stack) is `days_steady_state`, also kept as `days_ideal` for older readers.
    days_range: FloatPercentiles | None = field(default=None, metadata=OMIT)
    gpu_hours: float | None = field(default=None, metadata=OMIT)
    gpu_hours_range: FloatPercentiles | None = field(default=None, metadata=OMIT)
    whole_run: WholeRunSummary | None = field(default=None, metadata=OMIT)
    days_steady_state: float | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class InferenceParallelism:
    tp: int
    pp: int


@dataclass(frozen=True)
class InferenceSummary:
    """The `inference` section (engine/search/serving.py)."""

    gpus: int
    replicas: int
    gpus_per_replica: int
    parallelism: InferenceParallelism
    batch: int  # sequences in flight on one replica (the whole fleet's is `batch_fleet`)
    batch_per_replica: int  # the earlier name of `batch`
    concurrency_per_replica: float
    # The whole fleet's sequences in flight: replicas x `batch`, and replicas x `concurrency_per_replica` (Little's
    # law over the fleet: requests/s x output tokens x TPOT, the time in the decode batch). Absent from plans stored
    # before they were added.
    batch_fleet: int | None = field(default=None, metadata=OMIT, kw_only=True)
    concurrency_fleet: float | None = field(default=None, metadata=OMIT, kw_only=True)
    ttft_ms: float
    tpot_ms: float
    end_to_end_s: float
    tokens_per_s: float
    tokens_per_s_per_gpu: float
    demand_tokens_per_s: float
    capacity_requests_per_s_per_replica: float
    capacity_batch_per_replica: int
    capacity_tpot_ms: float
    capacity_ttft_ms: float
    utilization: float
    utilization_target: float
    max_sequences_by_memory: int
    kv_cache_gib_per_replica: float
    kv_cache_used_gib_per_replica: float
    kv_bytes_per_token: float
    weights_gib_per_gpu: float
    # What a GPU holds at the planned load: weights, workspace and the KV cache the load fills (the API's meaning
    # since v0.1). `memory_allocated_gib_per_gpu` is what it allocates, the total of `memory_breakdown_gib`
    # (weights, activation workspace, the KV cache as allocated, reserve): the figure the page shows.
    memory_per_gpu_gib: float
    memory_allocated_gib_per_gpu: float | None = field(default=None, metadata=OMIT, kw_only=True)
    memory_breakdown_gib: Mapping[str, float]
    # The part of the allocated KV cache the planned load fills (concurrency per replica whole sequences).
    kv_cache_in_use_gib_per_gpu: float | None = field(default=None, metadata=OMIT, kw_only=True)
    hbm_gib: float
    effective_mbu: float
    compute_precision: str
    limit: str
    spans_systems: bool
    needs_scaleout_fabric: bool
    curve: tuple[Mapping[str, Any], ...]
