"""Request validation: turn untrusted JSON into a PlanRequest, or report every problem at once.

The schema (spec.py, pydantic models) does the checking; this module is the door to it and the translation of
pydantic's errors into the planner's messages, keyed by dotted field path so forms and API clients can put each
message next to its field ("training.tokens must be > 0").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from engine.catalog.hardware import Catalog
from engine.request.cost_parameters import CostParameterLimit, cost_parameter_limits
from engine.request.fields import RULE, fmt_bound, type_name, unknown_key
from engine.request.spec import PlanRequest, choices_of, model_at

__all__ = ["CostParameterLimit", "RequestInvalid", "cost_parameter_limits", "messages_by_path", "validate_request"]


class RequestInvalid(ValueError):
    """Raised with every problem found: `errors` maps a dotted field path to its messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        super().__init__(self.__str__())

    def __str__(self) -> str:
        lines = [f"- {msg}" for path in sorted(self.errors) for msg in self.errors[path]]
        return "invalid plan request:\n" + "\n".join(lines)


def validate_request(
    data: object, catalog: Catalog, cost_parameters: Mapping[str, CostParameterLimit] | None = None
) -> PlanRequest:
    """Validate a decoded JSON body against the request schema; raise RequestInvalid with all errors.

    `cost_parameters` names the cost parameters `pricing.parameters` may set, with their ranges (default: the
    table in fixtures/prices/parameters.json, see `cost_parameter_limits`).
    """
    # A fresh context per call: the model section records its resolved shape in it for the workload rules.
    context: dict[str, Any] = {"catalog": catalog, "cost_parameters": cost_parameters, "model": None}
    try:
        return PlanRequest.model_validate(data, context=context)
    except ValidationError as exc:
        raise RequestInvalid(messages_by_path(exc)) from None


def messages_by_path(exc: ValidationError) -> dict[str, list[str]]:
    """pydantic's errors as the planner's messages, each led by its dotted path ("__all__" for the body)."""
    errors: dict[str, list[str]] = {}
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        path = ".".join(str(part) for part in loc) or "__all__"
        errors.setdefault(path, []).append(_message(error, loc, path))
    return errors


_NUMBER_TYPES = ("float_type", "int_type", "float_parsing", "int_parsing")
_BOUNDS = {
    "greater_than": ("gt", ">"),
    "greater_than_equal": ("ge", ">="),
    "less_than": ("lt", "<"),
    "less_than_equal": ("le", "<="),
}


def _message(error: Mapping[str, Any], loc: tuple[Any, ...], path: str) -> str:
    kind, value, ctx = error["type"], error["input"], error.get("ctx") or {}
    if not loc and kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"the request body must be a JSON object, not {type_name(value)}"
    if kind == "extra_forbidden":
        model = model_at(loc[:-1])
        text = unknown_key(loc[-1], model.model_fields if model is not None else ())
        if path == "__all__":  # an empty key at the top: name it, there is no path to lead the message
            text = f"the key '' {text}"
    elif kind == "missing":
        choices = choices_of(loc)
        text = "is required" + (f" (one of: {', '.join(choices)})" if choices else "")
    elif kind in ("model_type", "model_attributes_type", "dict_type"):
        text = f"must be an object, not {type_name(value)}"
    elif kind in _NUMBER_TYPES:
        text = f"must be a number, not {type_name(value)}"
    elif kind == "finite_number":
        text = "must be a finite number"
    elif kind == "bool_type":
        text = f"must be true or false, not {type_name(value)}"
    elif kind == "string_type":
        text = f"must be a string, not {type_name(value)}"
    elif kind == "string_too_long":
        text = f"must be at most {ctx['max_length']} characters"
    elif kind == "literal_error":
        choices = ", ".join(re.findall(r"'([^']*)'", ctx["expected"]))
        shown = repr(value) if isinstance(value, str) else type_name(value)
        text = f"must be one of: {choices} (got {shown})"
    elif kind in _BOUNDS:
        key, sign = _BOUNDS[kind]
        text = f"must be {sign} {fmt_bound(ctx[key])}"
    elif kind == RULE:
        text = error["msg"]
    else:  # pydantic's own words, after the path (no other error type is expected from this schema)
        text = error["msg"][0].lower() + error["msg"][1:]
    if path == "__all__":
        return text
    return f"{path}{'' if text.startswith(':') else ' '}{text}"
