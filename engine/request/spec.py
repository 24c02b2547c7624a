"""The validated plan request as dataclasses. Defaults for every optional request field live here, in one place.

`validate_request` (validation.py) is the only producer: it resolves presets and fills defaults, so the engine
never sees a half-specified request.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = [
    "DEFAULT_GLOBAL_BATCH_TOKENS",
    "DEFAULT_REGIONS",
    "DEFAULT_TPOT_MS",
    "DEFAULT_TTFT_MS",
    "HardwareSpec",
    "InferenceParallelism",
    "InferenceSpec",
    "ModelSpec",
    "MoeSpec",
    "PlanRequest",
    "PricingSpec",
    "SiteSpec",
    "TrainingParallelism",
    "TrainingSpec",
]

# 4 Mi tokens per optimizer step: between GPT-3's 3.2M and Llama 3's 4M-16M ramp; a common starting point.
DEFAULT_GLOBAL_BATCH_TOKENS = 4 * 1024 * 1024
# Interactive-chat style latency targets: first token within a second, ~20 tokens/s per user while streaming.
DEFAULT_TTFT_MS = 1000.0
DEFAULT_TPOT_MS = 50.0
DEFAULT_REGIONS = ("us-east-1",)


@dataclass(frozen=True)
class MoeSpec:
    """Mixture-of-experts routing: `active` of `experts` FFNs run per token."""

    experts: int
    active: int


@dataclass(frozen=True)
class ModelSpec:
    """A fully resolved model shape (a preset merged with any explicit overrides)."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn_hidden: int
    vocab: int
    seq_len: int
    preset: str | None = None
    ffn_gated: bool = True  # Llama/Mixtral SwiGLU; GPT-3 uses a plain 2-matrix FFN
    tied_embeddings: bool = False  # Llama-style untied output head
    learned_positions: bool = False  # RoPE models have no position-embedding parameters
    biases: bool = False
    moe: MoeSpec | None = None
    params: float | None = None  # user-declared total; the derived count is still reported


@dataclass(frozen=True)
class TrainingParallelism:
    """Pinned parallel layout; None means "let the engine choose"."""

    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    micro_batch: int | None = None
    recompute: str | None = None
    interleave: int | None = None  # virtual pipeline chunks per stage (interleaved 1F1B); 1 = plain 1F1B
    zero_stage: int | None = None  # 0 none, 1 optimizer, 2 + gradients, 3 + parameters sharded over dp
    ep: int | None = None  # expert parallelism (MoE only): experts split over ep GPUs carved out of dp


@dataclass(frozen=True)
class TrainingSpec:
    """Train `tokens` tokens, either by a deadline or on a fixed GPU count (exactly one of the two)."""

    tokens: float
    deadline_days: float | None = None
    gpus: int | None = None
    global_batch_tokens: int = DEFAULT_GLOBAL_BATCH_TOKENS
    precision: str = "bf16"
    parallelism: TrainingParallelism = field(default_factory=TrainingParallelism)


@dataclass(frozen=True)
class InferenceParallelism:
    """Pinned replica shape; None means "let the engine choose"."""

    tp: int | None = None
    pp: int | None = None


@dataclass(frozen=True)
class InferenceSpec:
    """Serve `requests_per_s` requests of fixed prompt/output length within TTFT and TPOT targets."""

    requests_per_s: float
    prompt_tokens: int
    output_tokens: int
    ttft_ms: float = DEFAULT_TTFT_MS
    tpot_ms: float = DEFAULT_TPOT_MS
    precision: str = "bf16"
    parallelism: InferenceParallelism = field(default_factory=InferenceParallelism)


@dataclass(frozen=True)
class HardwareSpec:
    """Which system to build from ("auto" = evaluate every catalog system) and the facility limits."""

    system: str = "auto"
    fabric: str = "auto"  # accepted and echoed; the fabric stage is not modelled yet
    rack_kw: float | None = None  # None = the catalog's systems_per_rack decides the rack load
    cooling: str = "auto"


@dataclass(frozen=True)
class SiteSpec:
    """Site economics. pue None = derived from the cooling method (assumptions pue_*)."""

    electricity_usd_per_kwh: float | None = None  # used by the costing stage (not modelled yet)
    pue: float | None = None
    colo_usd_per_kw_month: float | None = None  # used by the costing stage (not modelled yet)


@dataclass(frozen=True)
class PricingSpec:
    """Costing horizon, cloud regions and this plan's own price overrides (read by the costing stage).

    utilization: fraction of hours the on-prem cluster does paid work (None = the cost parameter's default);
    component_prices: USD per unit by BOM part number or catalog id (a catalog id covers every length of a cable);
    parameters: named cost parameters (fixtures/prices/parameters.json) overriding their defaults.
    """

    years: int = 3
    regions: tuple[str, ...] = DEFAULT_REGIONS
    utilization: float | None = None
    component_prices: dict[str, float] = field(default_factory=dict)
    parameters: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanRequest:
    """One validated request: the model, exactly one workload target, hardware, site and overrides."""

    workload: str
    model: ModelSpec
    training: TrainingSpec | None = None
    inference: InferenceSpec | None = None
    hardware: HardwareSpec = field(default_factory=HardwareSpec)
    site: SiteSpec = field(default_factory=SiteSpec)
    pricing: PricingSpec = field(default_factory=PricingSpec)
    assumptions: dict[str, float] = field(default_factory=dict)
    name: str | None = None

    def to_dict(self) -> dict[str, object]:
        """The normalised request (defaults filled, preset resolved) as plain JSON types, for the plan echo."""
        data = asdict(self)
        data["pricing"]["regions"] = list(self.pricing.regions)
        if self.training is None:
            data.pop("training")
        if self.inference is None:
            data.pop("inference")
        return data
