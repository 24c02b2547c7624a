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
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, StrictStr, field_validator
from pydantic_core import PydanticCustomError

from engine.assumptions.registry import ASSUMPTIONS
from engine.request.cost_parameters import PARAMETER_TWINS
from engine.request.envelope import EnvelopeSpec
from engine.request.fields import (
    RULE,
    Problem,
    Section,
    catalog_of,
    check_number,
    fmt_bound,
    raise_problems,
    unknown_key,
)
from engine.request.model_spec import MlaSpec, ModelSpec, MoeSpec, SlidingWindowSpec
from engine.request.rollout import RolloutSpec
from engine.request.site import DEFAULT_REGIONS, HardwareSpec, PricingSpec, SiteSpec
from engine.request.workloads import (
    DEFAULT_GLOBAL_BATCH_TOKENS,
    DEFAULT_TPOT_MS,
    DEFAULT_TTFT_MS,
    InferenceParallelism,
    InferenceSpec,
    TrainingMemory,
    TrainingParallelism,
    TrainingSpec,
)

if TYPE_CHECKING:
    from pydantic import ValidationInfo

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
    "SlidingWindowSpec",
    "TrainingMemory",
    "TrainingParallelism",
    "TrainingSpec",
]

_MAX_NAME = 200
# Characters that reorder the text around them (bidirectional embeddings, overrides and isolates): refused in names.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


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
        # NUL and other control characters: PostgreSQL refuses NUL in text, and none belong in a name. Bidirectional
        # embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) reorder the text shown around them, so a
        # name could read as another in lists, file names and the PDF; the plain direction marks stay allowed.
        if name is not None and any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
            raise PydanticCustomError(RULE, "must not contain control characters")
        if name is not None and any(ch in BIDI_CONTROLS for ch in name):
            raise PydanticCustomError(RULE, "must not contain bidirectional override or isolate characters")
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
