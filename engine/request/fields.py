"""Building blocks of the request schema: JSON leaf types, rule errors, and the section base class.

The schema (spec.py) is pydantic v2 models. pydantic reports type and range errors field by field, but stops a
model's own rules when any field fails; users want every problem at once, so `Section` runs each section's
rules on the raw input too and raises all problems together. Rule messages are written without their field
path: `validation.messages_by_path` puts the dotted path in front, so "training.tokens must be > 0".
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, NoReturn, get_args

from pydantic import AllowInfNan, BaseModel, BeforeValidator, ConfigDict, Strict, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError, core_schema

from engine.catalog.hardware import load_catalog

if TYPE_CHECKING:
    from typing import Self

    from pydantic import ModelWrapValidatorHandler, ValidationInfo

    from engine.catalog.hardware import Catalog

__all__ = [
    "RULE",
    "WHOLE",
    "JsonFloat",
    "Problem",
    "Section",
    "catalog_of",
    "check_number",
    "fmt_bound",
    "raise_problems",
    "type_name",
    "unknown_key",
]

# The pydantic error type of every rule written here; its message is final apart from the path in front.
RULE = "request_rule"
_KNOWN_TYPES = frozenset(get_args(core_schema.ErrorType))

# (location relative to the section being validated, message without the path, the offending input)
Problem = tuple[tuple[str | int, ...], str, object]


def type_name(value: object) -> str:
    """How a JSON value's type reads in a message: "an object", "a list", "a string", "a boolean", "a number",
    "null" (JSON's names, not Python's)."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}  # fmt: skip
    return names.get(type(value), type(value).__name__)


def fmt_bound(bound: float) -> str:
    """A bound as people write it: whole numbers below a billion with separators (3,650), the rest as %g.

    JSON has one number type and pydantic hands float fields' bounds back as floats, so a whole float bound
    is shown as the integer it was written as.
    """
    if isinstance(bound, float) and bound.is_integer() and abs(bound) < 1e9:
        bound = int(bound)
    return f"{bound:,}" if isinstance(bound, int) else f"{bound:g}"


def unknown_key(key: object, allowed: Iterable[str]) -> str:
    """ "is not a known field; did you mean 'x'?" (or the allowed names when nothing is close)."""
    allowed = sorted(allowed)
    hint = difflib.get_close_matches(str(key), allowed, n=1)
    return "is not a known field" + (f"; did you mean '{hint[0]}'?" if hint else f" (allowed: {', '.join(allowed)})")


def did_you_mean(value: str, known: Iterable[str]) -> str:
    """ "; did you mean 'x'?" for the closest known name, or nothing when none is close."""
    hint = difflib.get_close_matches(value, list(known), n=1)
    return f"; did you mean '{hint[0]}'?" if hint else ""


def _rule(message: str) -> PydanticCustomError:
    # No context: the message is already formatted, so braces in user input are not read as placeholders.
    return PydanticCustomError(RULE, message)


def raise_problems(
    problems: list[Problem], caught: ValidationError | None = None, keep: Callable[..., bool] = bool
) -> NoReturn:
    """Raise one ValidationError with `problems` and the errors pydantic already found (those `keep` accepts)."""
    details: list[InitErrorDetails] = [
        InitErrorDetails(type=_rule(message), loc=loc, input=value) for loc, message, value in problems
    ]
    for error in caught.errors(include_url=False) if caught else []:
        if not keep(error):
            continue
        kind = error["type"]
        detail = InitErrorDetails(
            type=kind if kind in _KNOWN_TYPES else PydanticCustomError(kind, error["msg"]),
            loc=error["loc"],
            input=error["input"],
        )
        if kind in _KNOWN_TYPES and "ctx" in error:
            detail["ctx"] = error["ctx"]
        details.append(detail)
    raise ValidationError.from_exception_data("PlanRequest", details)


def _whole_number(value: object) -> object:
    """JSON integers, and floats with nothing after the point (8.0), as int; bools and strings are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _rule(f"must be a number, not {type_name(value)}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _rule("must be a finite number")
        if not value.is_integer():
            raise _rule("must be a whole number")
        return int(value)
    return value


# Any finite JSON number (bools and numeric strings refused); stored as float. Bounds: Field(gt=...) on the field.
JsonFloat = Annotated[float, Strict(), AllowInfNan(False)]
# A whole JSON number (8 or 8.0), stored as int: Annotated[StrictInt, Field(gt=..., le=...), WHOLE]. The bounds
# go inside, before WHOLE, so pydantic checks them natively and renders them in the JSON schema.
WHOLE = BeforeValidator(_whole_number)


def check_number(
    value: object, *, integer: bool = False, gt: float | None = None, ge: float | None = None, le: float | None = None
) -> tuple[float | int | None, list[str]]:
    """Check one value of a map whose keys decide its bounds (cost parameters, assumptions): (value, messages).

    Static fields get the same checks from their type and Field(gt=..., le=...); these maps are keyed by names
    from tables, so their bounds are only known at validation time.
    """
    try:
        number = _whole_number(value) if integer else value
    except PydanticCustomError as exc:
        return None, [exc.message()]
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        return None, [f"must be a number, not {type_name(number)}"]
    if isinstance(number, float) and not math.isfinite(number):
        return None, ["must be a finite number"]
    messages = []
    if gt is not None and not number > gt:
        messages.append(f"must be > {fmt_bound(gt)}")
    if ge is not None and not number >= ge:
        messages.append(f"must be >= {fmt_bound(ge)}")
    if le is not None and number > le:
        messages.append(f"must be <= {fmt_bound(le)}")
    return (None, messages) if messages else (number, [])


def catalog_of(info: ValidationInfo) -> Catalog:
    """The catalog in the validation context (`validate_request` puts it there), else the default catalog."""
    context = info.context if isinstance(info.context, Mapping) else {}
    return context["catalog"] if context.get("catalog") is not None else load_catalog()


class Section(BaseModel):
    """A frozen request section: unknown keys refused, null means "not given", every problem reported at once.

    Subclasses add rules in two hooks: `check_input` sees the raw dict before field validation (rules that
    must run even when some field is bad, and filling values in, such as a preset's shape), `check` sees the
    validated section (rules between its own fields, run only when every field is valid).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_mode_override="validation")
    # Errors pydantic reports that a section's own rules replace (e.g. "missing" when a preset fills the field).
    replaced_errors: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="wrap")
    @classmethod
    def every_problem_at_once(cls, data: Any, handler: ModelWrapValidatorHandler[Self], info: ValidationInfo) -> Self:
        if not isinstance(data, dict):
            return handler(data)  # an instance passes as it is; anything else is "must be an object"
        # null is "not given" for the section's own fields; an unknown key is refused whatever its value.
        given = {key: value for key, value in data.items() if value is not None or key not in cls.model_fields}
        data, problems = cls.check_input(given, info)
        try:
            section = handler(data)
        except ValidationError as exc:
            raise_problems(problems, exc, keep=cls._kept)
        if problems:
            raise_problems(problems)
        problems = section.check(info)
        if problems:
            raise_problems(problems)
        return section

    @classmethod
    def _kept(cls, error: Mapping[str, Any]) -> bool:
        return not (error["type"] in cls.replaced_errors and len(error["loc"]) == 1)

    @classmethod
    def check_input(cls, data: dict[str, Any], info: ValidationInfo) -> tuple[dict[str, Any], list[Problem]]:
        return data, []

    def check(self, info: ValidationInfo) -> list[Problem]:
        return []
