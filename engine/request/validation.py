"""Request validation: turn untrusted JSON into a PlanRequest, or report every problem at once.

The schema (spec.py, pydantic models) does the checking; this module is the door to it and the translation of
pydantic's errors into the planner's messages, keyed by dotted field path so forms and API clients can put each
message next to its field ("training.tokens must be > 0").
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from engine.catalog.hardware import Catalog
from engine.request.cost_parameters import CostParameterLimit, cost_parameter_limits
from engine.request.fields import RULE, fmt_bound, type_name, unknown_key
from engine.request.schema_lookup import choices_of, model_at
from engine.request.spec import PlanRequest

__all__ = [
    "CostParameterLimit",
    "RequestInvalid",
    "cost_parameter_limits",
    "messages_by_path",
    "safe_text",
    "unsafe_values",
    "validate_request",
]


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
    unsafe = unsafe_values(data)
    if unsafe:
        data = _escaped(data)  # the schema then sees (and may echo) only escaped text; its other errors still count
    # A fresh context per call: the model section records its resolved shape in it for the workload rules.
    context: dict[str, Any] = {"catalog": catalog, "cost_parameters": cost_parameters, "model": None}
    try:
        request = PlanRequest.model_validate(data, context=context)
    except ValidationError as exc:
        raise RequestInvalid(messages_by_path(exc) | unsafe) from None
    if unsafe:
        raise RequestInvalid(unsafe)
    return request


def _escaped(value: object) -> object:
    """A copy of a decoded body with NUL and surrogates escaped in every key and string (`safe_text`)."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_text(k) if isinstance(k, str) else k: _escaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_escaped(v) for v in value]
    return value


# Characters no stored or echoed text may hold: NUL (PostgreSQL refuses it in text and JSON) and UTF-16 surrogates
# (a lone one cannot be encoded as UTF-8, so any page, file or response echoing it would fail).
_UNSAFE_TEXT = re.compile("[\x00\ud800-\udfff]")


def safe_text(text: str) -> str:
    """`text` with NUL and surrogates written as escapes (\\x00, \\ud800): safe to echo in a message."""
    return _UNSAFE_TEXT.sub(lambda m: f"\\u{ord(m.group()):04x}" if ord(m.group()) else "\\x00", text)


def unsafe_values(data: object, path: str = "") -> dict[str, list[str]]:
    """Every key or string holding NUL or a surrogate, and every non-finite number, anywhere in a decoded body.

    Checked before the schema, which would otherwise echo such text in its messages (and a section the workload
    does not use would never be looked at). Paths are written with the bad characters escaped.
    """
    errors: dict[str, list[str]] = {}

    def visit(value: object, where: str) -> None:
        label = where or "the request body"
        if isinstance(value, str) and _UNSAFE_TEXT.search(value):
            errors.setdefault(where or "__all__", []).append(f"{label} must not contain NUL or unpaired surrogates")
        elif isinstance(value, float) and not math.isfinite(value):
            errors.setdefault(where or "__all__", []).append(f"{label} must be a finite number")
        elif isinstance(value, dict):
            for key, item in value.items():
                name = safe_text(str(key))
                child = f"{where}.{name}" if where else name
                if isinstance(key, str) and _UNSAFE_TEXT.search(key):
                    errors.setdefault(child, []).append(f"{child} (a key) must not contain NUL or unpaired surrogates")
                    continue
                visit(item, child)
        elif isinstance(value, list | tuple):
            for index, item in enumerate(value):
                visit(item, f"{where}[{index}]" if where else f"[{index}]")

    visit(data, path)
    return errors


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
