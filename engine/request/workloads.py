"""The request's workload targets: training (tokens by a deadline or on a GPU count) and inference (a request
rate within latency targets), each with its optional pinned parallel layout.

Rules that involve the model shape read the resolved model from the validation context (spec.py puts it there);
when the model section itself is invalid they are skipped, since its own errors say what to fix first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, StrictBool, StrictInt, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from engine.request.fields import RULE, WHOLE, JsonFloat, Problem, Section, raise_problems

if TYPE_CHECKING:
    from typing import Any

    from engine.request.spec import ModelSpec

__all__ = [
    "DEFAULT_GLOBAL_BATCH_TOKENS",
    "DEFAULT_TPOT_MS",
    "DEFAULT_TTFT_MS",
    "MAX_EXPERT_GROUP_GPUS",
    "InferenceParallelism",
    "InferenceSpec",
    "TrainingMemory",
    "TrainingParallelism",
    "TrainingSpec",
]

# 4 Mi tokens per optimizer step: between GPT-3's 3.2M and Llama 3's 4M-16M ramp; a common starting point.
DEFAULT_GLOBAL_BATCH_TOKENS = 4 * 1024 * 1024
# Interactive-chat style latency targets: first token within a second, ~20 tokens/s per user while streaming.
DEFAULT_TTFT_MS = 1000.0
DEFAULT_TPOT_MS = 50.0
# Input-sanity bound on an expert group (ep x tp GPUs), like the le= caps on the other degrees: 8x the largest
# published expert-parallel layout (DeepSeek-V3: EP 64 x TP 1, DeepSeek-V3 report section 3.2). Not an engine
# constant: the step model charges crossing the NVLink domain in time instead.
MAX_EXPERT_GROUP_GPUS = 512

Recompute = Literal["none", "selective", "full"]  # engine.performance.memory.RECOMPUTE_MODES


def _model(info: ValidationInfo) -> ModelSpec | None:
    return info.context.get("model") if isinstance(info.context, Mapping) else None


def _rule(message: str) -> PydanticCustomError:
    return PydanticCustomError(RULE, message)


class TrainingParallelism(Section):
    """Pinned parallel layout; a degree left out (null) is searched by the engine."""

    tp: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] | None = Field(
        None, description="Tensor parallel degree (divides the heads); searched when not given."
    )
    pp: Annotated[StrictInt, Field(gt=0, le=10_000), WHOLE] | None = Field(
        None, description="Pipeline parallel degree (divides the layers); searched when not given."
    )
    dp: Annotated[StrictInt, Field(gt=0, le=1_000_000), WHOLE] | None = Field(
        None, description="Data parallel degree; searched when not given."
    )
    micro_batch: Annotated[StrictInt, Field(gt=0, le=65_536), WHOLE] | None = Field(
        None, description="Sequences per micro-batch; searched when not given."
    )
    recompute: Recompute | None = Field(None, description="Activation recomputation; searched when not given.")
    interleave: Annotated[StrictInt, Field(gt=0, le=64), WHOLE] | None = Field(
        None,
        description="Virtual pipeline chunks per stage (interleaved 1F1B; 1 = plain 1F1B); searched when not given.",
    )
    zero_stage: Annotated[StrictInt, Field(ge=0, le=3), WHOLE] | None = Field(
        None,
        description="ZeRO sharding over dp (0 none, 1 optimizer, 2 + gradients, 3 + parameters); searched when "
        "not given.",
    )
    ep: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] | None = Field(
        None, description="Expert parallelism (MoE models; divides the expert count and dp); searched when not given."
    )
    cp: Annotated[StrictInt, Field(gt=0, le=1024), WHOLE] | None = Field(
        None,
        description="Context parallelism: GPUs that split each sequence (divides model.seq_len); searched when not "
        "given.",
    )
    first_stage_layers: Annotated[StrictInt, Field(ge=0, le=1_000), WHOLE] | None = Field(
        None,
        description="Transformer layers on the first pipeline stage (it also holds the embedding); default: the "
        "layers are balanced over the stages.",
    )
    last_stage_layers: Annotated[StrictInt, Field(ge=0, le=1_000), WHOLE] | None = Field(
        None,
        description="Transformer layers on the last pipeline stage (it also holds the LM head and loss); default: "
        "the layers are balanced over the stages.",
    )

    @field_validator("tp")
    @classmethod
    def _tp_divides_heads(cls, tp: int | None, info: ValidationInfo) -> int | None:
        model = _model(info)
        if tp is not None and model is not None and (model.heads % tp or model.kv_heads % tp):
            raise _rule(f"({tp}) must divide model.heads ({model.heads}) and model.kv_heads ({model.kv_heads})")
        return tp

    @field_validator("pp")
    @classmethod
    def _pp_divides_layers(cls, pp: int | None, info: ValidationInfo) -> int | None:
        model = _model(info)
        if pp is not None and model is not None and pp > model.layers:
            raise _rule(f"({pp}) must be <= model.layers ({model.layers})")
        if pp is not None and model is not None and model.layers % pp:
            raise _rule(f"({pp}) must divide model.layers ({model.layers})")
        return pp

    @field_validator("interleave")
    @classmethod
    def _interleave_fits_stages(cls, interleave: int | None, info: ValidationInfo) -> int | None:
        model, pp = _model(info), info.data.get("pp")  # pp is absent here when it was invalid
        if interleave is None or interleave <= 1 or model is None:
            return interleave
        if pp is not None and pp > 1 and (model.layers // pp) % interleave:
            raise _rule(f"({interleave}) must divide the layers per stage (model.layers / pp = {model.layers // pp})")
        if pp == 1:
            raise _rule(f"({interleave}) needs pipeline parallelism (pp > 1)")
        return interleave

    @field_validator("ep")
    @classmethod
    def _experts_split_evenly(cls, ep: int | None, info: ValidationInfo) -> int | None:
        """Expert parallelism splits whole experts over ep GPUs carved out of dp (Megatron-Core / DeepSpeed-MoE)."""
        if ep is None:
            return ep
        model, tp, dp = _model(info), info.data.get("tp"), info.data.get("dp")
        if model is not None and model.moe is None and ep > 1:
            raise _rule(f"({ep}) needs a mixture-of-experts model (model.moe); dense models use ep = 1")
        if model is not None and model.moe is not None and model.moe.experts % ep:
            raise _rule(f"({ep}) must divide model.moe.experts ({model.moe.experts})")
        if ep * (tp or 1) > MAX_EXPERT_GROUP_GPUS:
            raise _rule(f"x tp ({ep * (tp or 1)}) must be at most {MAX_EXPERT_GROUP_GPUS} GPUs per expert group")
        if dp is not None and dp % ep:
            raise _rule(f"({ep}) must divide training.parallelism.dp ({dp}): expert groups are carved out of dp")
        return ep

    def gpu_count_problems(self, gpus: int) -> list[Problem]:
        """The pinned degrees against a fixed GPU count (training.gpus): they must tile it exactly."""
        tp, pp, dp, ep = self.tp or 1, self.pp or 1, self.dp, self.ep
        problems: list[Problem] = []
        if ep is not None and dp is None and gpus % (tp * pp * ep):
            message = (
                f"({ep}) must divide the data-parallel degree, so tp x pp x ep ({tp * pp * ep}) must divide "
                f"training.gpus ({gpus})"
            )
            problems.append((("ep",), message, ep))
        group = tp * pp * (dp or 1)
        if self.tp is not None and self.pp is not None and dp is not None and group != gpus:
            problems.append(((), f": tp x pp x dp ({group}) must equal training.gpus ({gpus})", None))
        elif gpus % group:
            problems.append(
                ((), f": the pinned degrees ({group} GPUs per group) must divide training.gpus ({gpus})", None)
            )
        return problems


class TrainingMemory(Section):
    """Memory-saving options of the training stack beyond parallelism and recompute."""

    offload: Literal["none", "optimizer", "optimizer_and_params"] | None = Field(
        None,
        description="Move optimizer state (and master parameters) to host or Grace memory; searched (only when "
        "nothing fits on the GPU) when not given.",
    )
    fp8_activations: StrictBool = Field(
        False, description="Store the activations an FP8 recipe keeps in FP8 (needs training.precision fp8)."
    )


class TrainingSpec(Section):
    """Train `tokens` tokens, either by a deadline or on a fixed GPU count (exactly one of the two)."""

    tokens: JsonFloat = Field(gt=0, le=1e16, description="Training tokens (e.g. 1.5e13).")
    deadline_days: JsonFloat | None = Field(
        None, gt=0, le=3650, description="Finish within this many days; give this or gpus, not both."
    )
    gpus: Annotated[StrictInt, Field(gt=0, le=1_000_000), WHOLE] | None = Field(
        None, description="Train on exactly this many GPUs; give this or deadline_days."
    )
    global_batch_tokens: Annotated[StrictInt, Field(gt=0, le=10_000_000_000), WHOLE] = Field(
        DEFAULT_GLOBAL_BATCH_TOKENS, description="Tokens per optimizer step (>= seq_len)."
    )
    precision: Literal["bf16", "fp8"] = Field("bf16", description="Training math precision.")
    parallelism: TrainingParallelism = Field(default_factory=TrainingParallelism)
    memory: TrainingMemory = Field(default_factory=TrainingMemory)
    checkpointing: Literal["synchronous", "asynchronous", "in_memory"] = Field(
        "asynchronous",
        description="How checkpoints are written: synchronous (training waits for storage), asynchronous (only the "
        "copy to host memory stalls training) or in_memory (copies kept in peers' memory, storage rarely).",
    )

    @classmethod
    def check_input(cls, data: dict[str, Any], info: ValidationInfo) -> tuple[dict[str, Any], list[Problem]]:
        if ("deadline_days" in data) == ("gpus" in data):
            got = "both" if "gpus" in data else "neither"
            return data, [((), f"must give exactly one of deadline_days or gpus (got {got})", None)]
        return data, []

    @field_validator("global_batch_tokens")
    @classmethod
    def _batch_holds_a_sequence(cls, tokens: int, info: ValidationInfo) -> int:
        model = _model(info)
        if model is not None and tokens < model.seq_len:
            raise _rule(f"({tokens}) must be >= model.seq_len ({model.seq_len})")
        return tokens

    @field_validator("parallelism")
    @classmethod
    def _pins_tile_the_gpus(cls, pins: TrainingParallelism, info: ValidationInfo) -> TrainingParallelism:
        gpus = info.data.get("gpus")
        if gpus is not None and (problems := pins.gpu_count_problems(gpus)):
            raise_problems(problems)
        return pins


class InferenceParallelism(Section):
    """Pinned replica shape; a degree left out (null) is searched by the engine."""

    tp: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] | None = Field(
        None, description="Tensor parallel degree per replica; searched when not given."
    )
    pp: Annotated[StrictInt, Field(gt=0, le=10_000), WHOLE] | None = Field(
        None, description="Pipeline parallel degree per replica; searched when not given."
    )

    @field_validator("tp")
    @classmethod
    def _tp_divides_heads(cls, tp: int | None, info: ValidationInfo) -> int | None:
        model = _model(info)
        if tp is not None and model is not None and model.heads % tp:
            raise _rule(f"({tp}) must divide model.heads ({model.heads})")
        return tp

    @field_validator("pp")
    @classmethod
    def _pp_within_layers(cls, pp: int | None, info: ValidationInfo) -> int | None:
        model = _model(info)
        if pp is not None and model is not None and pp > model.layers:
            raise _rule(f"({pp}) must be <= model.layers ({model.layers})")
        return pp


class InferenceSpec(Section):
    """Serve `requests_per_s` requests of fixed prompt/output length within TTFT and TPOT targets."""

    requests_per_s: JsonFloat = Field(gt=0, le=10_000_000, description="Sustained request rate to serve.")
    prompt_tokens: Annotated[StrictInt, Field(gt=0, le=10_000_000), WHOLE] = Field(
        description="Input tokens per request."
    )
    output_tokens: Annotated[StrictInt, Field(gt=0, le=10_000_000), WHOLE] = Field(
        description="Generated tokens per request."
    )
    ttft_ms: JsonFloat = Field(DEFAULT_TTFT_MS, gt=0, le=3_600_000, description="Time-to-first-token target (ms).")
    tpot_ms: JsonFloat = Field(DEFAULT_TPOT_MS, gt=0, le=60_000, description="Time-per-output-token target (ms).")
    precision: Literal["bf16", "fp8", "int8", "int4", "fp4"] = Field("bf16", description="Weight precision.")
    parallelism: InferenceParallelism = Field(default_factory=InferenceParallelism)
