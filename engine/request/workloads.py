"""The request's workload targets: training (tokens by a deadline or on a GPU count) and inference (a request
rate within latency targets), each with its optional pinned parallel layout.

Rules that involve the model shape read the resolved model from the validation context (spec.py puts it there);
when the model section itself is invalid they are skipped, since its own errors say what to fix first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, StrictBool, StrictInt, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from engine.performance.stages import pinned_split, stage_layer_counts
from engine.request.fields import RULE, WHOLE, JsonFloat, Problem, Section, catalog_of, raise_problems

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
CpCommMethod = Literal["ring", "all_gather", "all_to_all", "hierarchical"]  # engine.performance.cp_comm


def _model(info: ValidationInfo) -> ModelSpec | None:
    return info.context.get("model") if isinstance(info.context, Mapping) else None


def _published_batch_tokens(info: ValidationInfo) -> int | None:
    """The model preset's published global batch (tokens per step), when the request names a preset that has one.

    Why a preset default and not one planner-wide figure: the batch sets how far data parallelism can scale and
    the pipeline bubble, and published runs differ four-fold (GPT-3 3.1M tokens, Llama 3 405B 16.8M)."""
    model = _model(info)
    if model is None or model.preset is None:
        return None
    preset = catalog_of(info).models.get(model.preset)
    published = (preset.extra or {}).get("global_batch_tokens") if preset is not None else None
    return int(published) if published else None


def _rule(message: str) -> PydanticCustomError:
    return PydanticCustomError(RULE, message)


class TrainingParallelism(Section):
    """Pinned parallel layout; a degree left out (null) is searched by the engine."""

    tp: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] | None = Field(
        None,
        description="Tensor parallel degree (divides the heads; beyond the KV heads, a multiple of them: each KV "
        "head is then replicated); searched when not given.",
    )
    pp: Annotated[StrictInt, Field(gt=0, le=10_000), WHOLE] | None = Field(
        None,
        description="Pipeline parallel degree (at most the layers; stages need not be equal); searched when not given.",
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
        None,
        description="Expert parallelism (MoE models; divides the expert count, and dp, or with etp 1 the tp x cp x dp "
        "ranks of a stage); searched when not given.",
    )
    etp: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] | None = Field(
        None,
        description="Expert tensor parallelism (MoE models): tp splits each expert over the tensor-parallel ranks; "
        "1 folds whole experts onto them (Megatron-Core's MoE parallel folding, as NVIDIA's MoE recipes run); "
        "searched when not given.",
    )
    cp: Annotated[StrictInt, Field(gt=0, le=1024), WHOLE] | None = Field(
        None,
        description="Context parallelism: GPUs that split each sequence (2 x cp divides model.seq_len); searched "
        "when not given.",
    )
    cp_comm: CpCommMethod | None = Field(
        None,
        description="How context-parallel GPUs exchange attention inputs (Megatron-Core's cp_comm_type): 'ring' "
        "passes K and V chunks round a ring under the attention compute (p2p); 'all_gather' gathers the whole "
        "sequence's K and V first (Llama 3); 'all_to_all' trades sequence chunks for heads (DeepSpeed-Ulysses; cp "
        "must divide the KV heads of a tensor-parallel rank); 'hierarchical' does an all-to-all inside the NVLink "
        "domain and a ring across it (a2a+p2p). Layers with a sliding window take all_gather or all_to_all whatever "
        "is pinned (the only exchanges Transformer Engine runs them with), so a model windowed on every layer "
        "refuses ring and hierarchical. Needs cp > 1; the fastest the layout allows when not given.",
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
    ep_overlap: StrictBool | None = Field(
        None,
        description="Expert all-to-alls overlapped with the computation of another micro-batch (MoE models; "
        "Megatron-Core's overlap_moe_expert_parallel_comm, the combined 1F1B schedule): needs ep > 1, no full "
        "recompute and, with pipeline parallelism, interleaving (interleave > 1). false runs them on the critical "
        "path; searched when not given.",
    )

    @field_validator("tp")
    @classmethod
    def _tp_divides_heads(cls, tp: int | None, info: ValidationInfo) -> int | None:
        """TP splits the query heads evenly; KV heads too, or (tp > kv_heads, GQA/MQA) each KV head is copied on
        tp / kv_heads GPUs, as Megatron-Core and vLLM do."""
        model = _model(info)
        if tp is None or model is None:
            return tp
        if model.heads % tp:
            raise _rule(f"({tp}) must divide model.heads ({model.heads})")
        if tp <= model.kv_heads and model.kv_heads % tp:
            raise _rule(f"({tp}) must divide model.kv_heads ({model.kv_heads}) or be a multiple of it")
        if tp > model.kv_heads and tp % model.kv_heads:
            raise _rule(
                f"({tp}) is above model.kv_heads ({model.kv_heads}), so it must be a multiple of it (each KV head is "
                f"then replicated on tp / kv_heads GPUs)"
            )
        return tp

    @field_validator("pp")
    @classmethod
    def _pp_within_layers(cls, pp: int | None, info: ValidationInfo) -> int | None:
        model = _model(info)
        if pp is not None and model is not None and pp > model.layers:
            raise _rule(f"({pp}) must be <= model.layers ({model.layers}): every stage needs a layer")
        return pp

    @field_validator("interleave")
    @classmethod
    def _interleave_needs_stages(cls, interleave: int | None, info: ValidationInfo) -> int | None:
        if interleave is not None and interleave > 1 and info.data.get("pp") == 1:
            raise _rule(f"({interleave}) needs pipeline parallelism (pp > 1)")
        return interleave

    @field_validator("cp")
    @classmethod
    def _cp_splits_sequences(cls, cp: int | None, info: ValidationInfo) -> int | None:
        """Megatron-Core context parallelism cuts each sequence into 2 x cp equal chunks (rank r takes chunks r
        and 2cp - 1 - r, so causal attention work balances)."""
        model = _model(info)
        if cp is not None and cp > 1 and model is not None and model.seq_len % (2 * cp):
            raise _rule(
                f"({cp}) must split model.seq_len ({model.seq_len}) into 2 x cp = {2 * cp} equal chunks (2 x cp "
                f"must divide it)"
            )
        return cp

    @field_validator("cp_comm")
    @classmethod
    def _cp_comm_fits_heads(cls, method: str | None, info: ValidationInfo) -> str | None:
        """A method needs context parallelism; the all-to-all splits each tensor-parallel rank's heads over cp."""
        if method is None:
            return method
        cp, tp, model = info.data.get("cp"), info.data.get("tp"), _model(info)
        if cp == 1:
            raise _rule(f"('{method}') needs context parallelism: pin training.parallelism.cp > 1 or leave cp_comm out")
        if method == "all_to_all" and cp is not None and tp is not None and model is not None:
            kv_heads = model.kv_heads // tp if tp <= model.kv_heads else 0
            if kv_heads < cp or kv_heads % cp or (model.heads // tp) % cp:
                held = {0: "a copy of one KV head", 1: "1 KV head"}.get(kv_heads, f"{kv_heads} KV heads")
                window = model.sliding_window
                every_layer = window is not None and window.layers in (None, model.layers)
                instead = "'all_gather'" + (
                    "" if every_layer else ", 'ring'" + (", 'hierarchical'" if kv_heads >= 2 else "")
                )
                raise _rule(
                    f"('all_to_all') splits the heads of each tensor-parallel rank over cp ({cp}): a rank holds "
                    f"{held} (model.kv_heads {model.kv_heads} / tp {tp}), which cp must divide; use {instead} or a "
                    f"smaller tp or cp"
                )
        window = model.sliding_window if model is not None else None
        if method in ("ring", "hierarchical") and window is not None and window.layers in (None, model.layers):
            raise _rule(
                f"('{method}') cannot carry sliding-window attention, and every layer of this model attends "
                f"through a window (model.sliding_window): use 'all_gather' or 'all_to_all'"
            )
        if method == "hierarchical" and tp is not None and model is not None and model.kv_heads // tp < 2:
            raise _rule(
                f"('hierarchical') begins with an all-to-all over the KV heads of each tensor-parallel rank, and a "
                f"rank holds fewer than two (model.kv_heads {model.kv_heads} / tp {tp}); use 'ring' or a smaller tp"
            )
        return method

    def check(self, info: ValidationInfo) -> list[Problem]:
        """Pinned end stages and interleaving against the layer count: every stage keeps at least one layer
        (at least `interleave` with virtual stages)."""
        model = _model(info)
        if model is None:
            return []
        experts = self._expert_groups_problems()
        if experts:
            return experts
        first, last, pp, layers = self.first_stage_layers, self.last_stage_layers, self.pp, model.layers
        ends = (("first_stage_layers", first), ("last_stage_layers", last))
        pinned = [(name, n) for name, n in ends if n is not None]
        problems: list[Problem] = []
        for name, n in pinned:
            if pp is None or pp == 1:
                problems.append(((name,), f"({n}) needs pipeline parallelism: pin training.parallelism.pp > 1", n))
            elif n < 1:
                problems.append(((name,), f"({n}) leaves a pipeline stage with no layer; give at least 1", n))
        if problems or pp is None or pp == 1:
            return problems
        if pinned:
            f, la = pinned_split(layers, pp, first, last)
            counts = stage_layer_counts(layers, pp, f, la)
            if sum(counts) != layers or min(counts) < 1:
                where = pinned[-1][0]
                message = (
                    f": first_stage_layers + last_stage_layers ({f} + {la}) must leave at least one layer for each "
                    f"of the {pp - 2} middle stages of model.layers ({layers})"
                    if pp > 2
                    else f": first_stage_layers + last_stage_layers ({f} + {la}) must equal model.layers ({layers}) "
                    f"with pp = 2"
                )
                return [((where,), message, dict(pinned)[where])]
        else:
            f, la = pinned_split(layers, pp, None, None)
            counts = stage_layer_counts(layers, pp, f, la)
        v = self.interleave
        # the end stages may give a virtual stage to the embedding or the loss alone (Megatron-Core's
        # account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split)
        room = [n + (1 if i in (0, len(counts) - 1) else 0) for i, n in enumerate(counts)]
        if self.ep_overlap and min(room) < 2:
            message = (
                f"(true) with pipeline parallelism needs interleaving, which needs two layers a stage (the end stages "
                f"count the embedding or the loss as one): the stages of model.layers ({layers}) on pp {pp} get as "
                f"few as {min(counts)}, too few for pp {pp}"
            )
            return [(("ep_overlap",), message, True)]
        if v is not None and v > 1 and min(room) < v:
            message = (
                f"({v}) must be at most the layers of every stage, the end stages counting the embedding or the loss "
                f"as one (fewest: {min(room)})"
            )
            return [(("interleave",), message, v)]
        return []

    @field_validator("ep")
    @classmethod
    def _experts_split_evenly(cls, ep: int | None, info: ValidationInfo) -> int | None:
        """Expert parallelism gives each of its ep GPUs whole experts (Megatron-Core / DeepSpeed-MoE); where the
        groups come from is checked with the other degrees (`_expert_groups_problems`)."""
        if ep is None:
            return ep
        model = _model(info)
        if model is not None and model.moe is None and ep > 1:
            raise _rule(f"({ep}) needs a mixture-of-experts model (model.moe); dense models use ep = 1")
        if model is not None and model.moe is not None and ep > model.moe.experts:
            raise _rule(f"({ep}) must be at most model.moe.experts ({model.moe.experts}): each GPU holds whole experts")
        if model is not None and model.moe is not None and model.moe.experts % ep:
            raise _rule(f"({ep}) must divide model.moe.experts ({model.moe.experts})")
        return ep

    @field_validator("ep_overlap")
    @classmethod
    def _ep_overlap_runs(cls, overlap: bool | None, info: ValidationInfo) -> bool | None:
        """The checks Megatron-Core's TransformerConfig makes before it runs the combined 1F1B schedule."""
        if not overlap:
            return overlap
        model, data = _model(info), info.data
        if model is not None and model.moe is None:
            raise _rule("(true) needs a mixture-of-experts model (model.moe) with expert parallelism")
        if data.get("ep") == 1:
            raise _rule("(true) needs expert parallelism: training.parallelism.ep is pinned to 1")
        if data.get("recompute") == "full":
            raise _rule("(true) cannot run with full recompute (training.parallelism.recompute 'full')")
        pp, v = data.get("pp"), data.get("interleave")
        if pp is not None and pp > 1 and v == 1:
            raise _rule(f"(true) with pipeline parallelism (pp {pp}) needs interleaving: pin interleave > 1")
        return overlap

    @field_validator("etp")
    @classmethod
    def _etp_is_one_or_tp(cls, etp: int | None, info: ValidationInfo) -> int | None:
        """Experts are either split over the tensor-parallel ranks (etp = tp) or folded whole onto them (etp = 1)."""
        if etp is None:
            return etp
        model, tp = _model(info), info.data.get("tp")
        if model is not None and model.moe is None:
            raise _rule(f"({etp}) needs a mixture-of-experts model (model.moe)")
        if etp > 1 and tp != etp:
            raise _rule(
                f"({etp}) must be 1 (experts folded over the tensor-parallel ranks) or equal to "
                f"training.parallelism.tp ({tp if tp is not None else 'not pinned'})"
            )
        return etp

    def _expert_groups_problems(self) -> list[Problem]:
        """A pinned ep: its group spans ep x etp GPUs (at most MAX_EXPERT_GROUP_GPUS), and against a pinned dp,
        split experts carve their groups out of dp (dp % ep == 0), folded ones (etp 1) out of a stage's tp x cp x
        dp ranks. Unpinned etp: either will do; with tp or cp unpinned the search finds whether folding fits."""
        ep, dp, tp, cp = self.ep, self.dp, self.tp, self.cp
        if ep is None:
            return []
        span = ep * (1 if self.etp == 1 else (tp or 1))
        if span > MAX_EXPERT_GROUP_GPUS:
            what = f"({span})" if self.etp == 1 else f"x tp ({span})"
            return [(("ep",), f"{what} must be at most {MAX_EXPERT_GROUP_GPUS} GPUs per expert group", ep)]
        if dp is None:
            return []
        may_fold = self.etp in (None, 1) and tp != 1
        split_ok = dp % ep == 0 and (self.etp in (None, tp) or tp in (None, 1))
        folded_ok = may_fold and (tp is None or cp is None or (tp * cp * dp) % ep == 0)
        if split_ok or folded_ok:
            return []
        message = f"({ep}) must divide training.parallelism.dp ({dp}) (expert groups are carved out of dp)"
        if may_fold:
            message += f", or with etp 1 the tp x cp x dp ranks of a stage ({tp * (cp or 1) * dp})"
        return [(("ep",), message, ep)]

    def gpu_count_problems(self, gpus: int) -> list[Problem]:
        """The pinned degrees against a fixed GPU count (training.gpus): they must tile it exactly."""
        tp, pp, dp, ep, cp = self.tp or 1, self.pp or 1, self.dp, self.ep, self.cp or 1
        problems: list[Problem] = []
        # Folded experts (etp 1) need ep to divide a stage's tp x cp x dp ranks; split ones need it to divide dp.
        folded_unit = pp * math.lcm(tp * cp, ep or 1)
        may_fold = self.etp in (None, 1) and self.tp != 1
        if ep is not None and dp is None and gpus % (tp * cp * pp * ep) and not (may_fold and gpus % folded_unit == 0):
            message = (
                f"({ep}) must divide the data-parallel degree, so tp x cp x pp x ep ({tp * cp * pp * ep}) must divide "
                f"training.gpus ({gpus})"
            )
            if may_fold:
                message += f", or with the experts folded over tp (etp 1) pp x lcm(tp x cp, ep) ({folded_unit})"
            problems.append((("ep",), message, ep))
        group = tp * cp * pp * (dp or 1)
        every = self.tp is not None and self.pp is not None and dp is not None and self.cp is not None
        if every and group != gpus:
            problems.append(((), f": tp x cp x pp x dp ({group}) must equal training.gpus ({gpus})", None))
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
    activation_offload_layers: Annotated[StrictInt, Field(ge=0, le=10_000), WHOLE] | None = Field(
        None,
        description="Layers whose activations are kept in host or Grace memory between the forward and backward "
        "passes (Megatron-Core's cpu_offloading_num_layers; needs pp 1 and no recompute, and leaves at least one "
        "layer on the GPU); 0 turns it off; searched (none, a quarter, half or three quarters) when not given.",
    )


class TrainingSpec(Section):
    """Train `tokens` tokens, either by a deadline or on a fixed GPU count (exactly one of the two)."""

    tokens: JsonFloat = Field(gt=0, le=1e16, description="Training tokens (e.g. 1.5e13).")
    deadline_days: JsonFloat | None = Field(
        None,
        ge=0.01,
        le=3650,
        description="Finish within this many days (at least 0.01, about 15 minutes); give this or gpus, not both.",
    )
    gpus: Annotated[StrictInt, Field(gt=0, le=1_000_000), WHOLE] | None = Field(
        None, description="Train on exactly this many GPUs; give this or deadline_days."
    )
    deadline_percentile: Literal["p50", "p90"] = Field(
        "p50",
        description="Which whole-run time must meet deadline_days: p50, the expected run, or p90, a run that nine "
        "times in ten finishes sooner (more GPUs: the range of the whole run is wide).",
    )
    global_batch_tokens: Annotated[StrictInt, Field(gt=0, le=10_000_000_000), WHOLE] = Field(
        DEFAULT_GLOBAL_BATCH_TOKENS,
        description="Tokens per optimizer step (>= seq_len); default: the model preset's published batch, else "
        "4,194,304.",
        validate_default=True,  # the default must hold a sequence too (a 8M-token sequence needs a larger batch)
    )
    precision: Literal["bf16", "fp8"] = Field("bf16", description="Training math precision.")
    parallelism: TrainingParallelism = Field(default_factory=TrainingParallelism)
    memory: TrainingMemory = Field(default_factory=TrainingMemory)
    checkpointing: Literal["auto", "synchronous", "asynchronous", "in_memory", "elastic"] = Field(
        "auto",
        description="How checkpoints are kept and failures recovered: synchronous (training waits for storage), "
        "asynchronous (only the copy to host memory stalls training), in_memory (copies in peers' host memory, "
        "restart onto hot spares), elastic (a failed data-parallel replica drops out and rejoins while the others "
        "continue) or auto (the least elaborate of asynchronous, in_memory, elastic that keeps goodput at "
        "goodput_target, as teams at that scale do).",
    )

    @classmethod
    def check_input(cls, data: dict[str, Any], info: ValidationInfo) -> tuple[dict[str, Any], list[Problem]]:
        if data.get("global_batch_tokens") is None and (published := _published_batch_tokens(info)) is not None:
            data = {**data, "global_batch_tokens": published}  # a preset trains on its published batch by default
        if ("deadline_days" in data) == ("gpus" in data):
            got = "both" if "gpus" in data else "neither"
            return data, [((), f"must give exactly one of deadline_days or gpus (got {got})", None)]
        if data.get("deadline_percentile") not in (None, "p50") and "gpus" in data:
            message = "applies only with deadline_days (on a fixed GPU count the plan reports p10, p50 and p90)"
            return data, [(("deadline_percentile",), message, data["deadline_percentile"])]
        return data, []

    @field_validator("global_batch_tokens")
    @classmethod
    def _batch_holds_a_sequence(cls, tokens: int, info: ValidationInfo) -> int:
        model = _model(info)
        if model is not None and tokens < model.seq_len:
            raise _rule(f"({tokens}) must be >= model.seq_len ({model.seq_len})")
        return tokens

    @field_validator("memory")
    @classmethod
    def _fp8_activations_need_fp8(cls, memory: TrainingMemory, info: ValidationInfo) -> TrainingMemory:
        if memory.fp8_activations and info.data.get("precision", "bf16") != "fp8":
            raise_problems([(("fp8_activations",), "needs training.precision fp8 (an FP8 recipe keeps them)", True)])
        return memory

    @field_validator("memory")
    @classmethod
    def _activation_offload_fits_the_layout(cls, memory: TrainingMemory, info: ValidationInfo) -> TrainingMemory:
        """Megatron-Core offloads whole layers' activations only without pipelining and without recompute, and
        keeps at least one layer's on the GPU."""
        n = memory.activation_offload_layers
        if not n:
            return memory
        pins, model = info.data.get("parallelism"), _model(info)
        name = ("activation_offload_layers",)
        if model is not None and n >= model.layers:
            message = f"({n}) must be below model.layers ({model.layers}): one layer stays on the GPU"
            raise_problems([(name, message, n)])
        if pins is not None and pins.pp is not None and pins.pp > 1:
            raise_problems([(name, f"({n}) needs pp 1: layer-level activation offload has no pipeline schedule", n)])
        if pins is not None and pins.recompute not in (None, "none"):
            raise_problems([(name, f"({n}) needs recompute none (got {pins.recompute}): offload replaces it", n)])
        if pins is not None and pins.interleave is not None and pins.interleave > 1:
            message = f"({n}) needs one pipeline stage, so no interleaving (got interleave {pins.interleave})"
            raise_problems([(name, message, n)])
        if pins is not None and pins.ep_overlap:
            message = f"({n}) cannot run with the expert all-to-all overlap pinned on (training.parallelism.ep_overlap)"
            raise_problems([(name, message, n)])
        return memory

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

    requests_per_s: JsonFloat = Field(ge=0.001, le=10_000_000, description="Sustained request rate to serve.")
    prompt_tokens: Annotated[StrictInt, Field(gt=0, le=10_000_000), WHOLE] = Field(
        description="Input tokens per request."
    )
    output_tokens: Annotated[StrictInt, Field(gt=0, le=10_000_000), WHOLE] = Field(
        description="Generated tokens per request."
    )
    ttft_ms: JsonFloat = Field(DEFAULT_TTFT_MS, ge=1, le=3_600_000, description="Time-to-first-token target (ms).")
    tpot_ms: JsonFloat = Field(DEFAULT_TPOT_MS, ge=0.1, le=60_000, description="Time-per-output-token target (ms).")
    precision: Literal["bf16", "fp8", "int8", "int4", "fp4"] = Field("bf16", description="Weight precision.")
    parallelism: InferenceParallelism = Field(default_factory=InferenceParallelism)
