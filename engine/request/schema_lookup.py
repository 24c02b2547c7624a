"""Reading the request schema by location: the model or field at a dotted path and a Literal field's choices,
for error messages and the web form. Split from `engine/request/spec.py`; it reads `PlanRequest` and nothing
reads it back, so the schema has no cycle."""

from __future__ import annotations

from typing import TYPE_CHECKING, get_args

from pydantic import BaseModel

from engine.request.spec import PlanRequest

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

__all__ = ["choices_of", "field_at", "model_at"]


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
