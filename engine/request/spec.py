"""The plan request schema: one set of pydantic models that is the validator, the defaults, the OpenAPI request
body (drf-spectacular renders it) and what the web form is built from.

`validate_request` (validation.py) is the entry point: it passes the catalog and the cost-parameter table in the
validation context, and turns pydantic's errors into messages keyed by dotted path. A validated `PlanRequest`
is fully resolved (preset merged, defaults filled), so the engine never sees a half-specified request.
Rules that involve the model shape read the resolved `ModelSpec` from the validation context: the model
section is validated first (field order) and puts itself there.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, field_validator
from pydantic_core import PydanticCustomError

from engine.assumptions.registry import ASSUMPTIONS
from engine.request.cost_parameters import PARAMETER_TWINS
from engine.request.envelope import EnvelopeSpec
from engine.request.fields import (
    RULE,
    WHOLE,
    JsonFloat,
    Problem,
    Section,
    catalog_of,
    check_number,
    did_you_mean,
    fmt_bound,
    raise_problems,
    unknown_key,
)
from engine.request.rollout import RolloutSpec
from engine.request.site import DEFAULT_REGIONS, HardwareSpec, PricingSpec, SiteSpec
from engine.request.workloads import (
    DEFAULT_GLOBAL_BATCH_TOKENS,
    DEFAULT_TPOT_MS,
    DEFAULT_TTFT_MS,
    InferenceParallelism,
    InferenceSpec,
    TrainingParallelism,
    TrainingSpec,
)

if TYPE_CHECKING:
    from pydantic import ValidationInfo
    from pydantic.fields import FieldInfo

__all__ = [
    "DEFAULT_GLOBAL_BATCH_TOKENS",
    "DEFAULT_REGIONS",
    "DEFAULT_TPOT_MS",
    "DEFAULT_TTFT_MS",
    "EnvelopeSpec",
    "HardwareSpec",
    "InferenceParallelism",
    "InferenceSpec",
    "MlaSpec",
    "ModelSpec",
    "MoeSpec",
    "PlanRequest",
    "PricingSpec",
    "SiteSpec",
    "TrainingParallelism",
    "TrainingSpec",
    "choices_of",
    "field_at",
    "model_at",
]

_SHAPE_KEYS = ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len")
_FLAG_KEYS = ("ffn_gated", "tied_embeddings", "learned_positions", "biases")
_EXPLICIT_REQUIRED = ("layers", "hidden", "heads", "ffn_hidden", "vocab", "seq_len")
_MAX_NAME = 200


class MoeSpec(Section):
    """Mixture-of-experts routing: `active` of `experts` FFNs run per token."""

    experts: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] = Field(description="Expert FFNs per MoE layer.")
    active: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] = Field(
        description="Routed experts each token is sent to (top-k)."
    )

    shared: Annotated[StrictInt, Field(ge=0, le=64), WHOLE] = Field(
        0, description="Shared experts every token also runs (DeepSeek-style), each expert_ffn_hidden wide."
    )
    expert_ffn_hidden: Annotated[StrictInt, Field(gt=0, le=16_777_216), WHOLE] | None = Field(
        None,
        description="Inner size of one expert's FFN (fine-grained experts are narrower than the dense FFN); "
        "default: model.ffn_hidden.",
    )
    dense_layers: Annotated[StrictInt, Field(ge=0, le=1_000), WHOLE] = Field(
        0, description="Leading layers with a dense FFN of model.ffn_hidden instead of experts (DeepSeek-V3: 3)."
    )
    node_limit: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] | None = Field(
        None,
        description="Node-limited routing: each token reaches experts on at most this many nodes, and is sent "
        "once per node (DeepSeek-V3: 4); default: no limit, one copy per routed expert.",
    )

    def check(self, info: ValidationInfo) -> list[Problem]:
        if self.active > self.experts:
            return [(("active",), f"({self.active}) must be <= model.moe.experts ({self.experts})", self.active)]
        return []


class MlaSpec(Section):
    """Multi-head latent attention (DeepSeek-V2/V3): keys and values pass through a low-rank latent that is all the
    KV cache keeps; queries optionally too. Head sizes are its own, not hidden / heads."""

    q_lora_rank: Annotated[StrictInt, Field(ge=0, le=65_536), WHOLE] = Field(
        description="Rank of the query down-projection (0: queries projected directly)."
    )
    kv_lora_rank: Annotated[StrictInt, Field(gt=0, le=65_536), WHOLE] = Field(
        description="Rank of the joint key-value latent (the cached part)."
    )
    qk_rope_head_dim: Annotated[StrictInt, Field(ge=0, le=4096), WHOLE] = Field(
        description="Per-head query/key size that carries rotary positions (its key part is shared and cached)."
    )
    qk_nope_head_dim: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] = Field(
        description="Per-head query/key size without positions."
    )
    v_head_dim: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] = Field(description="Per-head value size.")


def _shape_optional(schema: dict[str, Any]) -> None:
    # A preset supplies the shape, so no shape field is required on input (the resolved model has them all).
    schema.pop("required", None)


class ModelSpec(Section):
    """A model shape: a catalog preset, explicit shape fields, or a preset with some fields overridden.

    Validated, it is fully resolved (the preset merged with the explicit fields).
    """

    model_config = ConfigDict(json_schema_extra=_shape_optional)
    replaced_errors = frozenset({"missing"})  # reported by check_input in its own words

    layers: Annotated[StrictInt, Field(gt=0, le=1_000), WHOLE] = Field(
        description="Transformer layers. Required without a preset."
    )
    hidden: Annotated[StrictInt, Field(gt=0, le=1_048_576), WHOLE] = Field(
        description="Hidden size (d_model). Required without a preset."
    )
    heads: Annotated[StrictInt, Field(gt=0, le=16_384), WHOLE] = Field(
        description="Attention heads; must divide hidden."
    )
    kv_heads: Annotated[StrictInt, Field(gt=0, le=16_384), WHOLE] = Field(
        description="Key/value heads (grouped-query attention); default: heads (multi-head)."
    )
    ffn_hidden: Annotated[StrictInt, Field(gt=0, le=16_777_216), WHOLE] = Field(
        description="FFN inner size. Required without a preset."
    )
    vocab: Annotated[StrictInt, Field(gt=0, le=10_000_000), WHOLE] = Field(
        description="Vocabulary size. Required without a preset."
    )
    seq_len: Annotated[StrictInt, Field(gt=0, le=10_000_000), WHOLE] = Field(
        description="Training / context sequence length in tokens."
    )
    preset: StrictStr | None = Field(
        None, description="Catalog preset id, e.g. llama-3-70b (GET /api/catalog/); explicit fields override it."
    )
    ffn_gated: StrictBool = Field(True, description="Gated (SwiGLU, 3-matrix) FFN as in Llama; false: GPT's 2.")
    tied_embeddings: StrictBool = Field(False, description="Output head shares the input embedding matrix.")
    learned_positions: StrictBool = Field(False, description="Learned position embeddings (GPT); false: RoPE.")
    biases: StrictBool = Field(False, description="Linear layers carry biases (GPT); false: Llama-style.")
    moe: MoeSpec | None = Field(None, description="Mixture of experts; default: the preset's, else dense.")
    mla: MlaSpec | None = Field(
        None, description="Multi-head latent attention; default: the preset's, else grouped-query attention."
    )
    params: JsonFloat | None = Field(
        None, ge=1e6, le=1e14, description="Declared total parameters; the count derived from the shape is reported."
    )

    @classmethod
    def check_input(cls, data: dict[str, Any], info: ValidationInfo) -> tuple[dict[str, Any], list[Problem]]:
        problems: list[Problem] = []
        preset_id = data.get("preset")
        if isinstance(preset_id, str):
            models = catalog_of(info).models
            preset = models.get(preset_id)
            if preset is None:
                known = ", ".join(sorted(models))
                message = f"'{preset_id}' is not a known preset{did_you_mean(preset_id, models)} (known: {known})"
                problems.append((("preset",), message, preset_id))
            else:
                defaults: dict[str, Any] = {key: getattr(preset, key) for key in (*_SHAPE_KEYS, *_FLAG_KEYS)}
                extra = preset.extra or {}
                if preset.moe_experts:
                    defaults["moe"] = {**(extra.get("moe") or {}), "experts": preset.moe_experts,
                                       "active": preset.moe_active or 1}  # fmt: skip
                if extra.get("mla"):
                    defaults["mla"] = dict(extra["mla"])
                data = {**defaults, **data}
        elif preset_id is None:
            for key in _EXPLICIT_REQUIRED:
                if key not in data:
                    problems.append(((key,), "is required when model.preset is not given", None))
        heads = data.get("heads")
        if "kv_heads" not in data and isinstance(heads, int) and not isinstance(heads, bool):
            data = {**data, "kv_heads": heads}  # explicit shapes without kv_heads are multi-head attention
        return data, problems

    def check(self, info: ValidationInfo) -> list[Problem]:
        problems: list[Problem] = []
        if self.hidden % self.heads:
            problems.append((("heads",), f"({self.heads}) must divide model.hidden ({self.hidden})", self.heads))
        if self.heads % self.kv_heads:
            message = f"({self.kv_heads}) must divide model.heads ({self.heads})"
            problems.append((("kv_heads",), message, self.kv_heads))
        if self.moe is not None and self.moe.dense_layers >= self.layers:
            message = f"({self.moe.dense_layers}) must be below model.layers ({self.layers}): some layer needs experts"
            problems.append((("moe", "dense_layers"), message, self.moe.dense_layers))
        if not problems and isinstance(info.context, MutableMapping):
            info.context["model"] = self  # the workload sections' rules read the resolved shape
        return problems


class PlanRequest(Section):
    """The plan request (design.md): the model, exactly one workload target, hardware, site, pricing, overrides.

    Unknown keys are refused at every level; null means "not given" (the default applies).
    """

    workload: Literal["training", "inference", "capacity"] = Field(
        description="Which section below is the target; capacity: the largest cluster of hardware.system within "
        "the envelope (no model)."
    )
    model: ModelSpec | None = Field(
        None, description="The model; required for training and inference, not used by capacity."
    )
    training: TrainingSpec | None = Field(None, description="Required when workload is training; else ignored.")
    inference: InferenceSpec | None = Field(None, description="Required when workload is inference; else ignored.")
    envelope: EnvelopeSpec | None = Field(
        None,
        description="Limits the cluster must fit (facility_mw, it_mw, racks, capex_usd, gpus); required for "
        "capacity, optional for training and inference (the plan stays within it or names the binding limit).",
    )
    rollout: RolloutSpec | None = Field(
        None, description="Deliver the cluster in phases (scalable units or MW each); default: all at once."
    )
    hardware: HardwareSpec = Field(default_factory=HardwareSpec)
    site: SiteSpec = Field(default_factory=SiteSpec)
    pricing: PricingSpec = Field(default_factory=PricingSpec)
    assumptions: dict[str, float | int] = Field(
        default_factory=dict,
        description="Overrides of the engine's named assumptions (each listed with its unit and range).",
        json_schema_extra=lambda schema: schema.update(_assumption_properties()),
    )
    name: StrictStr | None = Field(
        None, max_length=_MAX_NAME, description="Optional; the plan is named after the model when empty."
    )

    @classmethod
    def check_input(cls, data: dict[str, Any], info: ValidationInfo) -> tuple[dict[str, Any], list[Problem]]:
        if isinstance(info.context, MutableMapping):
            info.context["model"] = None  # until this request's model section validates
        problems: list[Problem] = []
        workload = data.get("workload")
        if workload in ("training", "inference", "capacity"):
            others = {"training", "inference"} - {workload}
            if workload == "capacity":
                others.add("model")  # forms may send a model section; capacity plans have none
            data = {key: value for key, value in data.items() if key not in others or not isinstance(value, dict)}
            if workload != "capacity" and workload not in data:
                problems.append(((workload,), "is required", None))
            if workload != "capacity" and "model" not in data:
                problems.append((("model",), "is required", None))
            if workload == "capacity" and "envelope" not in data:
                problems.append((("envelope",), "is required for workload capacity (at least one limit)", None))
            if workload == "capacity":
                problems.extend(_rented_system(data, info))
        data, twins = _parameter_twins(data)
        return data, problems + twins

    def check(self, info: ValidationInfo) -> list[Problem]:
        """Rules between sections: a training run of at least one optimizer step, on a cluster the planner can
        build (the fabric rules stop at max_cluster_gpus, which a request's assumptions may raise)."""
        problems: list[Problem] = []
        training = self.training
        if self.workload == "training" and training is not None:
            batch = training.global_batch_tokens
            if training.tokens < batch:
                message = f"({training.tokens:g}) must be at least one global batch ({batch:,} tokens)"
                problems.append((("training", "tokens"), message, training.tokens))
            limit = int(self.assumptions.get("max_cluster_gpus", ASSUMPTIONS["max_cluster_gpus"].default))
            if training.gpus is not None and training.gpus > limit:
                message = f"must be <= {limit:,}, the largest cluster the planner builds (assumption max_cluster_gpus)"
                problems.append((("training", "gpus"), message, training.gpus))
        return problems

    @field_validator("assumptions", mode="before")
    @classmethod
    def _assumptions(cls, value: object) -> object:
        if not isinstance(value, dict):
            return value  # "must be an object"
        problems: list[Problem] = []
        cleaned: dict[str, float | int] = {}
        for name, given in value.items():
            spec = ASSUMPTIONS.get(name)
            if spec is not None and given is None:
                continue  # null: not given
            if spec is None:
                problems.append(((name,), unknown_key(name, ASSUMPTIONS), given))
                continue
            number, messages = check_number(given, integer=spec.integer)
            if number is not None and not spec.minimum <= number <= spec.maximum:
                lo, hi = fmt_bound(spec.minimum), fmt_bound(spec.maximum)
                messages = [f"must be between {lo} and {hi} ({spec.unit})"]
            problems.extend(((name,), message, given) for message in messages)
            if not messages and number is not None:
                cleaned[name] = number
        if problems:
            raise_problems(problems)
        return cleaned

    @field_validator("name")
    @classmethod
    def _printable_name(cls, name: str | None) -> str | None:
        # NUL and other control characters: PostgreSQL refuses NUL in text, and none belong in a name.
        if name is not None and any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
            raise PydanticCustomError(RULE, "must not contain control characters")
        return name

    def to_dict(self) -> dict[str, object]:
        """The normalised request (defaults filled, preset resolved) as plain JSON types, for the plan echo."""
        absent = {
            key for key in ("training", "inference", "model", "envelope", "rollout") if getattr(self, key) is None
        }
        return self.model_dump(mode="json", exclude=absent)

    def to_minimal_dict(self) -> dict[str, object]:
        """Only what differs from the defaults and from the model's preset: the request as a person would write
        it. Used to prefill the form when a stored (normalised) plan is duplicated; it validates back to this
        same request, so nothing is lost by showing less."""
        data = self.model_dump(mode="json", exclude_defaults=True, exclude_none=True)
        data["workload"] = self.workload
        if self.model is not None and self.model.preset is not None:
            preset_shape = ModelSpec(preset=self.model.preset).model_dump(mode="json")
            own = self.model.model_dump(mode="json")
            data["model"] = {"preset": self.model.preset} | {
                key: value for key, value in own.items() if value is not None and value != preset_shape.get(key)
            }
        if self.training is not None and isinstance(data.get("training"), dict):
            # The batch default is the preset's published batch, so "default" is judged against that, not 4M.
            training = dict(data["training"])
            default_batch = TrainingSpec.model_validate(
                {"tokens": 1.0, "gpus": 1}, context={"model": self.model, "catalog": None}
            ).global_batch_tokens
            training.pop("global_batch_tokens", None)
            if self.training.global_batch_tokens != default_batch:
                training["global_batch_tokens"] = self.training.global_batch_tokens
            data["training"] = training
        return {key: value for key, value in data.items() if value != {}}


def _rented_system(data: dict[str, Any], info: ValidationInfo) -> list[Problem]:
    """A capacity plan builds a cluster: a rented cloud instance type cannot be its system."""
    hardware = data.get("hardware")
    system_id = hardware.get("system") if isinstance(hardware, dict) else None
    system = catalog_of(info).systems.get(system_id) if isinstance(system_id, str) else None
    if system is None or not system.rented:
        return []
    message = f"'{system.id}' is a rented cloud instance; capacity plans a build (choose an owned system)"
    return [(("hardware", "system"), message, system.id)]


def _assumption_properties() -> dict[str, Any]:
    """The assumptions map as documented properties: every name with its unit, range and default."""
    properties = {
        name: {
            "type": "integer" if spec.integer else "number",
            "minimum": spec.minimum,
            "maximum": spec.maximum,
            "default": spec.default,
            "description": f"{spec.description} ({spec.unit})",
        }
        for name, spec in sorted(ASSUMPTIONS.items())
    }
    return {"properties": properties, "additionalProperties": False}


def _parameter_twins(data: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """A cost parameter also set by its own request field (pricing.utilization, site.*) is ambiguous: refuse it.

    The refused parameter is taken out before field validation, so it gets this one message, not a range error too.
    """
    pricing = data.get("pricing")
    parameters = pricing.get("parameters") if isinstance(pricing, dict) else None
    if not isinstance(parameters, dict):
        return data, []
    problems: list[Problem] = []
    kept = dict(parameters)
    for name, twin in PARAMETER_TWINS.items():
        section, _, key = twin.partition(".")
        given = data.get(section)
        if name in parameters and isinstance(given, dict) and given.get(key) is not None:
            problems.append((("pricing", "parameters", name), f"and {twin} set the same thing: give only one", None))
            del kept[name]
    if not problems:
        return data, []
    return {**data, "pricing": {**pricing, "parameters": kept}}, problems


# ------------------------------------------------------------------ reading the schema (messages, the web form)


def model_at(loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The schema model at a location (PlanRequest for ()), or None when the location leads into a plain value."""
    model: type[BaseModel] | None = PlanRequest
    for part in loc:
        field = model.model_fields.get(part) if model is not None and isinstance(part, str) else None
        if field is None:
            return None
        model = next((arg for arg in _inner_types(field.annotation) if _is_model(arg)), None)
    return model


def field_at(path: str) -> FieldInfo | None:
    """The schema field at a dotted request path ("training.parallelism.tp"): type, default, bounds, description."""
    *parents, name = path.split(".")
    model = model_at(tuple(parents))
    return model.model_fields.get(name) if model is not None else None


def choices_of(loc: tuple[str | int, ...]) -> list[str]:
    """The allowed values of a Literal field (["training", "inference"] for ("workload",)), else []."""
    field = field_at(".".join(map(str, loc))) if loc else None
    return [arg for arg in _inner_types(field.annotation) if isinstance(arg, str)] if field is not None else []


def _inner_types(annotation: object) -> list[object]:
    """A type and everything inside it: X | None -> [X | None, X, None]; Literal["a"] -> [Literal["a"], "a"]."""
    out = [annotation]
    for arg in get_args(annotation):
        out.extend(_inner_types(arg))
    return out


def _is_model(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)
