"""Request validation: turn untrusted JSON into a PlanRequest, or report every problem at once.

Errors are keyed by dotted field path so forms and API clients can put each message next to its field;
validation never stops at the first problem because fixing one field at a time is tedious for users.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from engine.assumptions.registry import ASSUMPTIONS
from engine.catalog.hardware import Catalog, ModelPreset
from engine.performance.memory import RECOMPUTE_MODES
from engine.request.spec import (
    DEFAULT_GLOBAL_BATCH_TOKENS,
    DEFAULT_REGIONS,
    DEFAULT_TPOT_MS,
    DEFAULT_TTFT_MS,
    HardwareSpec,
    InferenceParallelism,
    InferenceSpec,
    ModelSpec,
    MoeSpec,
    PlanRequest,
    PricingSpec,
    SiteSpec,
    TrainingParallelism,
    TrainingSpec,
)

__all__ = [
    "COOLING_CHOICES",
    "FABRIC_CHOICES",
    "INFERENCE_PRECISIONS",
    "TRAINING_PRECISIONS",
    "WORKLOADS",
    "CostParameterLimit",
    "RequestInvalid",
    "cost_parameter_limits",
    "validate_request",
]

WORKLOADS = ("training", "inference")
TRAINING_PRECISIONS = ("bf16", "fp8")
INFERENCE_PRECISIONS = ("bf16", "fp8", "int8", "int4", "fp4")
FABRIC_CHOICES = ("auto", "infiniband-ndr", "infiniband-xdr", "roce-400g", "roce-800g")
COOLING_CHOICES = ("auto", "air", "rdhx", "liquid")
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d{1,2}$")
_MAX_NAME = 200

# (key, upper bound) for the integer shape fields; the bounds only reject absurd input, not big models.
_SHAPE_INTS = {
    "layers": 1_000,
    "hidden": 1_048_576,
    "heads": 16_384,
    "kv_heads": 16_384,
    "ffn_hidden": 16_777_216,
    "vocab": 10_000_000,
    "seq_len": 10_000_000,
}
_SHAPE_BOOLS = ("ffn_gated", "tied_embeddings", "learned_positions", "biases")
_EXPLICIT_REQUIRED = ("layers", "hidden", "heads", "ffn_hidden", "vocab", "seq_len")
_MAX_COMPONENT_PRICES = 500
_MAX_COMPONENT_USD = 1e9
# Cost parameters a request also sets elsewhere: giving both would be ambiguous, so it is an error.
_PARAMETER_TWINS = {
    "utilization": "pricing.utilization",
    "electricity_usd_per_kwh": "site.electricity_usd_per_kwh",
    "colo_usd_per_kw_month": "site.colo_usd_per_kw_month",
}


class CostParameterLimit(NamedTuple):
    """What a request may set a named cost parameter to: minimum..maximum (minimum excluded if exclusive)."""

    minimum: float
    maximum: float
    unit: str
    minimum_exclusive: bool = False


@functools.lru_cache(maxsize=4)
def cost_parameter_limits(path: Path | None = None) -> Mapping[str, CostParameterLimit]:
    """Names and allowed ranges of the cost parameters, read from `fixtures/prices/parameters.json`.

    Plain JSON (no pricing-app import), so the engine stays pure; `validate_request` takes another table if given.
    """
    path = path or Path(__file__).resolve().parents[2] / "fixtures" / "prices" / "parameters.json"
    records = json.loads(Path(path).read_text(encoding="utf-8"))["records"]
    return MappingProxyType(
        {
            r["name"]: CostParameterLimit(
                float(r["minimum"]), float(r["maximum"]), str(r.get("unit", "")), bool(r.get("minimum_exclusive"))
            )
            for r in records
        }
    )


class RequestInvalid(ValueError):
    """Raised with every problem found: `errors` maps a dotted field path to its messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        super().__init__(self.__str__())

    def __str__(self) -> str:
        lines = [f"- {msg}" for path in sorted(self.errors) for msg in self.errors[path]]
        return "invalid plan request:\n" + "\n".join(lines)


class _Errors:
    def __init__(self) -> None:
        self.errors: dict[str, list[str]] = {}

    def add(self, path: str, message: str) -> None:
        self.errors.setdefault(path or "__all__", []).append(message)

    def has(self, prefix: str) -> bool:
        return any(p == prefix or p.startswith(prefix + ".") for p in self.errors)


def _type_name(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def _fmt(bound: float) -> str:
    return f"{bound:,}" if isinstance(bound, int) else f"{bound:g}"


def _join(base: str, key: str) -> str:
    return f"{base}.{key}" if base else key


def _unknown_keys(err: _Errors, obj: dict[str, Any], base: str, allowed: Iterable[str]) -> None:
    allowed = list(allowed)
    for key in obj:
        if key in allowed:
            continue
        path = _join(base, str(key))
        hint = difflib.get_close_matches(str(key), allowed, n=1)
        suffix = f"; did you mean '{hint[0]}'?" if hint else f" (allowed: {', '.join(sorted(allowed))})"
        err.add(path, f"{path} is not a known field{suffix}")


def _object(err: _Errors, obj: dict[str, Any], base: str, key: str, required: bool = False) -> dict[str, Any] | None:
    path = _join(base, key)
    value = obj.get(key)
    if value is None:
        if required:
            err.add(path, f"{path} is required")
        return None
    if not isinstance(value, dict):
        err.add(path, f"{path} must be an object, not {_type_name(value)}")
        return None
    return value


def _number(
    err: _Errors,
    obj: dict[str, Any],
    base: str,
    key: str,
    *,
    required: bool = False,
    integer: bool = False,
    gt: float | None = 0,
    ge: float | None = None,
    le: float | None = None,
) -> Any:
    """A finite JSON number (bools and numeric strings rejected), optionally whole, within bounds."""
    path = _join(base, key)
    value = obj.get(key)
    if value is None:
        if required:
            err.add(path, f"{path} is required")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        err.add(path, f"{path} must be a number, not {_type_name(value)}")
        return None
    if isinstance(value, float) and not math.isfinite(value):
        err.add(path, f"{path} must be a finite number")
        return None
    if integer:
        if isinstance(value, float) and not value.is_integer():
            err.add(path, f"{path} must be a whole number")
            return None
        value = int(value)
    ok = True
    if gt is not None and not value > gt:
        err.add(path, f"{path} must be > {_fmt(gt)}")
        ok = False
    if ge is not None and not value >= ge:
        err.add(path, f"{path} must be >= {_fmt(ge)}")
        ok = False
    if le is not None and value > le:
        err.add(path, f"{path} must be <= {_fmt(le)}")
        ok = False
    return value if ok else None


def _choice(
    err: _Errors,
    obj: dict[str, Any],
    base: str,
    key: str,
    choices: Iterable[str],
    default: str | None = None,
    required: bool = False,
) -> str | None:
    path = _join(base, key)
    value = obj.get(key)
    choices = list(choices)
    if value is None:
        if required:
            err.add(path, f"{path} is required (one of: {', '.join(choices)})")
        return default
    if not isinstance(value, str) or value not in choices:
        shown = repr(value) if isinstance(value, str) else _type_name(value)
        err.add(path, f"{path} must be one of: {', '.join(choices)} (got {shown})")
        return None
    return value


def _bool(err: _Errors, obj: dict[str, Any], base: str, key: str) -> bool | None:
    path = _join(base, key)
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        err.add(path, f"{path} must be true or false, not {_type_name(value)}")
        return None
    return value


# ----------------------------------------------------------------------------------------------- model


def _validate_model(err: _Errors, data: dict[str, Any], catalog: Catalog) -> ModelSpec | None:
    base = "model"
    _unknown_keys(err, data, base, ["preset", "params", *_SHAPE_INTS, "moe", *_SHAPE_BOOLS])
    preset: ModelPreset | None = None
    preset_id = data.get("preset")
    if preset_id is not None:
        if not isinstance(preset_id, str):
            err.add("model.preset", f"model.preset must be a string, not {_type_name(preset_id)}")
        elif preset_id not in catalog.models:
            err.add(
                "model.preset",
                f"model.preset '{preset_id}' is not a known preset (known: {', '.join(sorted(catalog.models))})",
            )
        else:
            preset = catalog.models[preset_id]

    values: dict[str, Any] = {}
    for key, upper in _SHAPE_INTS.items():
        values[key] = _number(err, data, base, key, integer=True, le=upper)
    for key in _SHAPE_BOOLS:
        values[key] = _bool(err, data, base, key)
    params = _number(err, data, base, "params", le=1e14)
    moe = _validate_moe(err, data)

    if preset is None and preset_id is None:
        for key in _EXPLICIT_REQUIRED:
            if data.get(key) is None:
                err.add(f"model.{key}", f"model.{key} is required when model.preset is not given")
    if err.has(base):
        return None

    def pick(key: str) -> Any:
        return values[key] if values[key] is not None else (getattr(preset, key) if preset else None)

    shape = {key: pick(key) for key in _SHAPE_INTS}
    if shape["kv_heads"] is None:
        shape["kv_heads"] = shape["heads"]  # explicit shapes without kv_heads are multi-head attention
    if shape["hidden"] % shape["heads"]:
        err.add("model.heads", f"model.heads ({shape['heads']}) must divide model.hidden ({shape['hidden']})")
    if shape["heads"] % shape["kv_heads"]:
        err.add("model.kv_heads", f"model.kv_heads ({shape['kv_heads']}) must divide model.heads ({shape['heads']})")
    if moe is None and preset is not None and preset.moe_experts:
        moe = MoeSpec(preset.moe_experts, preset.moe_active or 1)
    defaults = {"ffn_gated": True, "tied_embeddings": False, "learned_positions": False, "biases": False}
    flags = {
        k: (values[k] if values[k] is not None else (getattr(preset, k) if preset else defaults[k]))
        for k in _SHAPE_BOOLS
    }
    if err.has(base):
        return None
    return ModelSpec(preset=preset.id if preset else None, moe=moe, params=params, **shape, **flags)


def _validate_moe(err: _Errors, data: dict[str, Any]) -> MoeSpec | None:
    moe = _object(err, data, "model", "moe")
    if moe is None:
        return None
    _unknown_keys(err, moe, "model.moe", ["experts", "active"])
    experts = _number(err, moe, "model.moe", "experts", required=True, integer=True, le=4096)
    active = _number(err, moe, "model.moe", "active", required=True, integer=True, le=4096)
    if experts is None or active is None:
        return None
    if active > experts:
        err.add("model.moe.active", f"model.moe.active ({active}) must be <= model.moe.experts ({experts})")
        return None
    return MoeSpec(experts, active)


# -------------------------------------------------------------------------------------------- training


def _validate_training(err: _Errors, data: dict[str, Any], model: ModelSpec | None) -> TrainingSpec | None:
    base = "training"
    _unknown_keys(
        err, data, base, ["tokens", "deadline_days", "gpus", "global_batch_tokens", "precision", "parallelism"]
    )
    tokens = _number(err, data, base, "tokens", required=True, le=1e16)
    deadline = _number(err, data, base, "deadline_days", le=3650)
    gpus = _number(err, data, base, "gpus", integer=True, le=1_000_000)
    has_deadline, has_gpus = data.get("deadline_days") is not None, data.get("gpus") is not None
    if has_deadline == has_gpus:
        got = "both" if has_deadline else "neither"
        err.add(base, f"training must give exactly one of deadline_days or gpus (got {got})")
    gbt = _number(err, data, base, "global_batch_tokens", integer=True, le=10_000_000_000)
    if gbt is not None and model is not None and gbt < model.seq_len:
        err.add(
            "training.global_batch_tokens",
            f"training.global_batch_tokens ({gbt}) must be >= model.seq_len ({model.seq_len})",
        )
    precision = _choice(err, data, base, "precision", TRAINING_PRECISIONS, default="bf16")
    pin = _validate_training_parallelism(err, data, model, gpus)
    if err.has(base):
        return None
    assert tokens is not None and precision is not None and pin is not None
    return TrainingSpec(
        tokens=float(tokens),
        deadline_days=None if deadline is None else float(deadline),
        gpus=gpus,
        global_batch_tokens=gbt or DEFAULT_GLOBAL_BATCH_TOKENS,
        precision=precision,
        parallelism=pin,
    )


def _validate_training_parallelism(
    err: _Errors, data: dict[str, Any], model: ModelSpec | None, gpus: int | None
) -> TrainingParallelism | None:
    base = "training.parallelism"
    obj = _object(err, data, "training", "parallelism")
    if obj is None:
        return None if err.has(base) else TrainingParallelism()
    _unknown_keys(err, obj, base, ["tp", "pp", "dp", "micro_batch", "recompute", "interleave", "zero_stage", "ep"])
    tp = _number(err, obj, base, "tp", integer=True, le=4096)
    pp = _number(err, obj, base, "pp", integer=True, le=10_000)
    dp = _number(err, obj, base, "dp", integer=True, le=1_000_000)
    micro_batch = _number(err, obj, base, "micro_batch", integer=True, le=65_536)
    recompute = _choice(err, obj, base, "recompute", RECOMPUTE_MODES)
    interleave = _number(err, obj, base, "interleave", integer=True, le=64)
    zero_stage = _number(err, obj, base, "zero_stage", integer=True, gt=None, ge=0, le=3)
    ep = _number(err, obj, base, "ep", integer=True, le=4096)
    if ep is not None:
        _check_expert_parallel(err, base, ep, tp, dp, model)
    if model is not None:
        if tp is not None and (model.heads % tp or model.kv_heads % tp):
            err.add(
                f"{base}.tp",
                f"{base}.tp ({tp}) must divide model.heads ({model.heads}) and model.kv_heads ({model.kv_heads})",
            )
        if pp is not None and pp > model.layers:
            err.add(f"{base}.pp", f"{base}.pp ({pp}) must be <= model.layers ({model.layers})")
        elif pp is not None and model.layers % pp:
            err.add(f"{base}.pp", f"{base}.pp ({pp}) must divide model.layers ({model.layers})")
        elif interleave is not None and interleave > 1 and (pp or 1) > 1 and (model.layers // pp) % interleave:
            err.add(
                f"{base}.interleave",
                f"{base}.interleave ({interleave}) must divide the layers per stage (model.layers / pp = "
                f"{model.layers // pp})",
            )
        if interleave is not None and interleave > 1 and pp == 1:
            err.add(f"{base}.interleave", f"{base}.interleave ({interleave}) needs pipeline parallelism (pp > 1)")
    if gpus is not None and not err.has(base):
        if ep is not None and dp is None and gpus % ((tp or 1) * (pp or 1) * ep):
            err.add(
                f"{base}.ep",
                f"{base}.ep ({ep}) must divide the data-parallel degree, so tp x pp x ep ({(tp or 1) * (pp or 1) * ep})"
                f" must divide training.gpus ({gpus})",
            )
        group = (tp or 1) * (pp or 1) * (dp or 1)
        if tp is not None and pp is not None and dp is not None and group != gpus:
            err.add(base, f"{base}: tp x pp x dp ({group}) must equal training.gpus ({gpus})")
        elif gpus % group:
            err.add(base, f"{base}: the pinned degrees ({group} GPUs per group) must divide training.gpus ({gpus})")
    if err.has(base):
        return None
    return TrainingParallelism(
        tp=tp,
        pp=pp,
        dp=dp,
        micro_batch=micro_batch,
        recompute=recompute,
        interleave=interleave,
        zero_stage=zero_stage,
        ep=ep,
    )


# Input-sanity bound on an expert group (ep x tp GPUs), like the le= caps on the other degrees: 8x the largest
# published expert-parallel layout (DeepSeek-V3: EP 64 x TP 1, DeepSeek-V3 report section 3.2). Not an engine
# constant: the step model charges crossing the NVLink domain in time instead.
MAX_EXPERT_GROUP_GPUS = 512


def _check_expert_parallel(
    err: _Errors, base: str, ep: int, tp: int | None, dp: int | None, model: ModelSpec | None
) -> None:
    """Expert parallelism splits whole experts over ep GPUs carved out of dp (Megatron-Core / DeepSpeed-MoE)."""
    field_ = f"{base}.ep"
    if model is not None and model.moe is None and ep > 1:
        err.add(field_, f"{field_} ({ep}) needs a mixture-of-experts model (model.moe); dense models use ep = 1")
    elif model is not None and model.moe is not None and model.moe.experts % ep:
        err.add(field_, f"{field_} ({ep}) must divide model.moe.experts ({model.moe.experts})")
    elif ep * (tp or 1) > MAX_EXPERT_GROUP_GPUS:
        group = ep * (tp or 1)
        err.add(field_, f"{field_} x tp ({group}) must be at most {MAX_EXPERT_GROUP_GPUS} GPUs per expert group")
    elif dp is not None and dp % ep:
        err.add(field_, f"{field_} ({ep}) must divide {base}.dp ({dp}): expert groups are carved out of dp")


# ------------------------------------------------------------------------------------------- inference


def _validate_inference(err: _Errors, data: dict[str, Any], model: ModelSpec | None) -> InferenceSpec | None:
    base = "inference"
    _unknown_keys(
        err,
        data,
        base,
        ["requests_per_s", "prompt_tokens", "output_tokens", "ttft_ms", "tpot_ms", "precision", "parallelism"],
    )
    rps = _number(err, data, base, "requests_per_s", required=True, le=10_000_000)
    prompt = _number(err, data, base, "prompt_tokens", required=True, integer=True, le=10_000_000)
    output = _number(err, data, base, "output_tokens", required=True, integer=True, le=10_000_000)
    ttft = _number(err, data, base, "ttft_ms", le=3_600_000)
    tpot = _number(err, data, base, "tpot_ms", le=60_000)
    precision = _choice(err, data, base, "precision", INFERENCE_PRECISIONS, default="bf16")
    pin = InferenceParallelism()
    obj = _object(err, data, base, "parallelism")
    if obj is not None:
        _unknown_keys(err, obj, f"{base}.parallelism", ["tp", "pp"])
        tp = _number(err, obj, f"{base}.parallelism", "tp", integer=True, le=4096)
        pp = _number(err, obj, f"{base}.parallelism", "pp", integer=True, le=10_000)
        if model is not None and tp is not None and model.heads % tp:
            err.add(f"{base}.parallelism.tp", f"{base}.parallelism.tp ({tp}) must divide model.heads ({model.heads})")
        if model is not None and pp is not None and pp > model.layers:
            err.add(f"{base}.parallelism.pp", f"{base}.parallelism.pp ({pp}) must be <= model.layers ({model.layers})")
        pin = InferenceParallelism(tp=tp, pp=pp)
    if err.has(base):
        return None
    assert rps is not None and prompt is not None and output is not None and precision is not None
    return InferenceSpec(
        requests_per_s=float(rps),
        prompt_tokens=prompt,
        output_tokens=output,
        ttft_ms=float(ttft) if ttft is not None else DEFAULT_TTFT_MS,
        tpot_ms=float(tpot) if tpot is not None else DEFAULT_TPOT_MS,
        precision=precision,
        parallelism=pin,
    )


# ------------------------------------------------------------------------------------ hardware and site


def _validate_hardware(err: _Errors, data: dict[str, Any] | None, catalog: Catalog) -> HardwareSpec | None:
    if data is None:
        return HardwareSpec()
    base = "hardware"
    _unknown_keys(err, data, base, ["system", "fabric", "rack_kw", "cooling"])
    system = data.get("system", "auto")
    if system is None:
        system = "auto"
    if not isinstance(system, str):
        err.add("hardware.system", f"hardware.system must be a string, not {_type_name(system)}")
    elif system != "auto" and system not in catalog.systems:
        err.add(
            "hardware.system",
            f"hardware.system '{system}' is not a catalog system (known: auto, {', '.join(sorted(catalog.systems))})",
        )
    fabric = _choice(err, data, base, "fabric", FABRIC_CHOICES, default="auto")
    rack_kw = _number(err, data, base, "rack_kw", le=2000)
    cooling = _choice(err, data, base, "cooling", COOLING_CHOICES, default="auto")
    if err.has(base):
        return None
    assert isinstance(system, str) and fabric is not None and cooling is not None
    return HardwareSpec(
        system=system, fabric=fabric, rack_kw=None if rack_kw is None else float(rack_kw), cooling=cooling
    )


def _validate_site(err: _Errors, data: dict[str, Any] | None) -> SiteSpec | None:
    if data is None:
        return SiteSpec()
    base = "site"
    _unknown_keys(err, data, base, ["electricity_usd_per_kwh", "pue", "colo_usd_per_kw_month"])
    electricity = _number(err, data, base, "electricity_usd_per_kwh", le=10)
    pue = _number(err, data, base, "pue", gt=None, ge=1.0, le=3.0)
    colo = _number(err, data, base, "colo_usd_per_kw_month", le=100_000)
    if err.has(base):
        return None
    return SiteSpec(
        electricity_usd_per_kwh=None if electricity is None else float(electricity),
        pue=None if pue is None else float(pue),
        colo_usd_per_kw_month=None if colo is None else float(colo),
    )


def _price_keys(catalog: Catalog) -> set[str]:
    """Every key a component price override may name: catalog ids and BOM part numbers (each cable length)."""
    keys = set(catalog.systems)
    parts = catalog.parts
    if parts is None:
        return keys
    for part in parts.parts.values():
        keys.add(part.id)
        lengths = part.spec.get("lengths_m") or [None]
        keys.update(part.part_number_for(length) for length in lengths)
    keys.update(phys.part_number for phys in parts.systems.values() if phys.part_number)
    return keys


def _validate_component_prices(err: _Errors, data: dict[str, Any], base: str, catalog: Catalog) -> dict[str, float]:
    path = f"{base}.component_prices"
    prices = _object(err, data, base, "component_prices")
    if prices is None:
        return {}
    if len(prices) > _MAX_COMPONENT_PRICES:
        err.add(path, f"{path} may name at most {_MAX_COMPONENT_PRICES} parts")
        return {}
    known = _price_keys(catalog)
    out: dict[str, float] = {}
    for key in prices:
        if key not in known:
            hint = difflib.get_close_matches(str(key), sorted(known), n=1)
            suffix = f"; did you mean '{hint[0]}'?" if hint else ""
            err.add(f"{path}.{key}", f"{path}.{key} is not a catalog part number or id{suffix}")
            continue
        value = _number(err, prices, path, key, le=_MAX_COMPONENT_USD)
        if value is not None:
            out[key] = float(value)
    return out


def _validate_cost_parameters(
    err: _Errors,
    data: dict[str, Any],
    base: str,
    limits: Mapping[str, CostParameterLimit],
    site: dict[str, Any] | None,
) -> dict[str, float]:
    path = f"{base}.parameters"
    params = _object(err, data, base, "parameters")
    if params is None:
        return {}
    _unknown_keys(err, params, path, limits)
    out: dict[str, float] = {}
    for name, limit in limits.items():
        if name not in params:
            continue
        twin = _PARAMETER_TWINS.get(name)
        twin_section, _, twin_key = (twin or "").partition(".")
        given = data if twin_section == "pricing" else (site or {})
        if twin and given.get(twin_key) is not None:
            err.add(f"{path}.{name}", f"{path}.{name} and {twin} set the same thing: give only one")
            continue
        lower = {"gt": limit.minimum, "ge": None} if limit.minimum_exclusive else {"gt": None, "ge": limit.minimum}
        value = _number(err, params, path, name, le=limit.maximum, **lower)
        if value is not None:
            out[name] = float(value)
    return out


def _validate_pricing(
    err: _Errors,
    data: dict[str, Any] | None,
    catalog: Catalog,
    limits: Mapping[str, CostParameterLimit],
    site: dict[str, Any] | None,
) -> PricingSpec | None:
    if data is None:
        return PricingSpec()
    base = "pricing"
    _unknown_keys(err, data, base, ["years", "regions", "utilization", "component_prices", "parameters"])
    years = _number(err, data, base, "years", integer=True, le=20)
    utilization = _number(err, data, base, "utilization", le=1)
    component_prices = _validate_component_prices(err, data, base, catalog)
    parameters = _validate_cost_parameters(err, data, base, limits, site)
    regions = data.get("regions")
    cleaned: list[str] = list(DEFAULT_REGIONS)
    if regions is not None:
        if not isinstance(regions, list):
            err.add("pricing.regions", f"pricing.regions must be a list of region names, not {_type_name(regions)}")
        elif not regions:
            err.add("pricing.regions", "pricing.regions must list at least one region")
        elif len(regions) > 50:
            err.add("pricing.regions", "pricing.regions must list at most 50 regions")
        else:
            cleaned = []
            for i, region in enumerate(regions):
                if not isinstance(region, str) or not _REGION.match(region):
                    shown = repr(region) if isinstance(region, str) else _type_name(region)
                    err.add(
                        f"pricing.regions.{i}",
                        f"pricing.regions.{i} must be an AWS region name like 'us-east-1' (got {shown})",
                    )
                elif region not in cleaned:
                    cleaned.append(region)
    if err.has(base):
        return None
    return PricingSpec(
        years=years or 3,
        regions=tuple(cleaned),
        utilization=None if utilization is None else float(utilization),
        component_prices=component_prices,
        parameters=parameters,
    )


def _validate_assumptions(err: _Errors, data: dict[str, Any] | None) -> dict[str, float]:
    if data is None:
        return {}
    _unknown_keys(err, data, "assumptions", ASSUMPTIONS)
    out: dict[str, float] = {}
    for name, spec in ASSUMPTIONS.items():
        if name not in data:
            continue
        path = f"assumptions.{name}"
        before = len(err.errors.get(path, []))
        value = _number(err, data, "assumptions", name, integer=spec.integer, gt=None)
        if value is None:
            continue
        if not spec.minimum <= value <= spec.maximum:
            err.add(path, f"{path} must be between {_fmt(spec.minimum)} and {_fmt(spec.maximum)} ({spec.unit})")
        elif len(err.errors.get(path, [])) == before:
            out[name] = value
    return out


# ----------------------------------------------------------------------------------------------- entry


def validate_request(
    data: object, catalog: Catalog, cost_parameters: Mapping[str, CostParameterLimit] | None = None
) -> PlanRequest:
    """Validate a decoded JSON body against the contract in design.md; raise RequestInvalid with all errors.

    `cost_parameters` names the cost parameters `pricing.parameters` may set, with their ranges (default: the
    table in fixtures/prices/parameters.json, see `cost_parameter_limits`).
    """
    err = _Errors()
    if not isinstance(data, dict):
        err.add("__all__", f"the request body must be a JSON object, not {_type_name(data)}")
        raise RequestInvalid(err.errors)

    _unknown_keys(
        err,
        data,
        "",
        ["workload", "model", "training", "inference", "hardware", "site", "pricing", "assumptions", "name"],
    )
    workload = _choice(err, data, "", "workload", WORKLOADS, required=True)
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        err.add("name", f"name must be a string, not {_type_name(name)}")
    elif isinstance(name, str) and len(name) > _MAX_NAME:
        err.add("name", f"name must be at most {_MAX_NAME} characters")
    elif isinstance(name, str) and any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        # NUL and other control characters: PostgreSQL refuses NUL in text, and none belong in a name.
        err.add("name", "name must not contain control characters")

    model_data = _object(err, data, "", "model", required=True)
    model = _validate_model(err, model_data, catalog) if model_data is not None else None

    training = inference = None
    for section in WORKLOADS:
        section_data = _object(err, data, "", section, required=(workload == section))
        if section_data is None or (workload is not None and workload != section):
            continue  # the other workload's section is ignored (forms may send both)
        if section == "training":
            training = _validate_training(err, section_data, model)
        else:
            inference = _validate_inference(err, section_data, model)

    hardware = _validate_hardware(err, _object(err, data, "", "hardware"), catalog)
    site = _validate_site(err, _object(err, data, "", "site"))
    site_data = data.get("site") if isinstance(data.get("site"), dict) else None
    limits = cost_parameter_limits() if cost_parameters is None else cost_parameters
    pricing = _validate_pricing(err, _object(err, data, "", "pricing"), catalog, limits, site_data)
    assumptions = _validate_assumptions(err, _object(err, data, "", "assumptions"))

    if err.errors:
        raise RequestInvalid(err.errors)
    assert workload is not None and model is not None and hardware and site and pricing
    return PlanRequest(
        workload=workload,
        model=model,
        training=training,
        inference=inference,
        hardware=hardware,
        site=site,
        pricing=pricing,
        assumptions=assumptions,
        name=name if isinstance(name, str) else None,
    )
