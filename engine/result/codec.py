"""The one serialiser of the plan result: frozen dataclasses <-> JSON-ready dicts, driven by the field types.

Hand-written rather than pydantic because the plan's JSON has a few shapes a plain field list cannot say, and the
engine must stay light to import (the `plan` command and the worker import it):

- a field whose JSON key is not a Python name (`from` in fabric link groups and topology links): `json_name`;
- optional keys that are absent rather than null when a stage did not run (`training` on a serving plan, a
  candidate's `days` when it was infeasible): `omit_none`;
- keys that are present *with* null once a stage ran (a BOM line's `unit_price_usd` after costing found no
  price, a candidate's `selection_usd` when prices were given): `present_if` names a boolean field of the same
  object that is not itself serialised (`json=False`); decoding sets it when any of its keys is present.

Money arrives as `Decimal` or as the costing's strings and leaves as a string, so JSON never holds a binary
float for money. A non-finite float is an engine bug: encoding fails loudly rather than writing NaN.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Callable, Mapping
from decimal import Decimal
from math import isfinite
from typing import Any, TypeVar

__all__ = ["decode", "encode", "json_fields", "meta"]

T = TypeVar("T")


def meta(*, json_name: str | None = None, omit_none: bool = False, present_if: str | None = None, json: bool = True):
    """Field metadata for the codec (see the module docstring)."""
    return {"json_name": json_name, "omit_none": omit_none, "present_if": present_if, "json": json}


@dataclasses.dataclass(frozen=True)
class _Field:
    name: str
    key: str
    hint: Any
    omit_none: bool
    present_if: str | None
    json: bool
    required: bool


@functools.cache
def _fields(cls: type) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        m = f.metadata
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        out.append(
            _Field(
                name=f.name,
                key=m.get("json_name") or f.name,
                hint=hints[f.name],
                omit_none=bool(m.get("omit_none")),
                present_if=m.get("present_if"),
                json=m.get("json", True),
                required=required,
            )
        )
    return tuple(out)


def json_fields(cls: type) -> tuple[_Field, ...]:
    """A result type's fields as the codec writes them (JSON key, type, omission rules): what `projection` walks."""
    return _fields(cls)


_PLAIN = frozenset({str, int, bool, type(None)})
# A dataclass type's JSON fields as (name, key, omit_none, present_if), worked out once per type.
_JSON_FIELDS: dict[type, tuple[tuple[str, str, bool, str | None], ...]] = {}


def encode(value: object) -> Any:
    """Plain JSON types only (dict, list, str, int, float, bool, None). The exact built-in types are tested first
    (most of a plan's values), then the general rules in order."""
    return _encode(value, {})


def _encode(value: object, seen: dict[int, tuple[tuple, list]]) -> Any:
    """`encode` with `seen`: a tuple met again in the same value (racks of the same items share one) is encoded
    once; tuples are immutable, so the shared list is the same JSON. `seen` keeps each tuple alive beside its
    encoding: a tuple made on the fly (a property) could otherwise be freed and its id reused by another.

    Speed: most of a plan's values are plain leaves (str, int, bool, None, a finite float) inside a dict, list or
    dataclass; the containers copy those directly and recurse only for the rest, which returns the
    same JSON with a fraction of the calls (a plan has about four thousand values)."""
    kind = type(value)
    if kind is float:
        if not math.isfinite(value):  # type: ignore[arg-type]
            raise ValueError("engine produced a non-finite number")
        return value
    if kind in _PLAIN:
        return value
    if kind is dict:
        return {
            (k if type(k) is str else str(k)): (
                v if (t := type(v)) in _PLAIN or (t is float and isfinite(v)) else _encode(v, seen)
            )
            for k, v in value.items()  # type: ignore[attr-defined]
        }
    if kind is tuple:
        kept = seen.get(id(value))
        if kept is None:
            kept = seen[id(value)] = (value, _items(value, seen))  # type: ignore[arg-type]
        return kept[1]
    if kind is list:
        return _items(value, seen)  # type: ignore[arg-type]
    fields = _JSON_FIELDS.get(kind)
    if fields is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = _JSON_FIELDS[kind] = tuple((f.name, f.key, f.omit_none, f.present_if) for f in _fields(kind) if f.json)
    if fields is not None:
        out: dict[str, Any] = {}
        for name, key, omit_none, present_if in fields:
            item = getattr(value, name)
            if item is None:
                if omit_none:
                    continue
            elif present_if is None and ((t := type(item)) in _PLAIN or (t is float and isfinite(item))):
                out[key] = item
                continue
            if present_if is not None and not getattr(value, present_if):
                continue
            out[key] = _encode(item, seen)
        return out
    if isinstance(value, Mapping):
        return {str(k): _encode(v, seen) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v, seen) for v in value]
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("engine produced a non-finite number")
        return value
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def _items(values: list | tuple, seen: dict[int, tuple[tuple, list]]) -> list:
    """A list's or tuple's items encoded, plain leaves copied as they are (a non-finite float goes to `_encode`,
    which refuses it)."""
    return [v if (t := type(v)) in _PLAIN or (t is float and isfinite(v)) else _encode(v, seen) for v in values]


class _Bad(ValueError):
    """A decoding problem, its path built on the way out (so the happy path formats no strings).

    `problems` holds (path parts, what was wrong); a union that fails every option carries one per option.
    """

    def __init__(self, problems: list[tuple[tuple[str, ...], str]]) -> None:
        super().__init__()
        self.problems = problems

    def under(self, part: str) -> _Bad:
        return _Bad([((part, *parts), why) for parts, why in self.problems])

    def message(self, base: str) -> str:
        out = []
        for parts, why in self.problems:
            path = (base + "".join(parts)).removeprefix(".") if not base else base + "".join(parts)
            out.append(f"{path or 'plan'}: {why}")
        return "; ".join(out)


def _wrong(expected: str, data: object) -> _Bad:
    return _Bad([((), f"expected {expected}, got {type(data).__name__}")])


def decode(hint: Any, data: Any, path: str = "") -> Any:
    """The typed value of `data` (the output of `encode`) for the type `hint`; ValueError names the bad path.

    Each type's decoder is built once and cached (a stored 16,384-GPU plan holds tens of thousands of values).
    """
    try:
        return _decoder(hint)(data)
    except _Bad as exc:
        raise ValueError(exc.message(path)) from None


def _identity(data: Any) -> Any:
    return data


@functools.cache
def _decoder(hint: Any) -> Callable[[Any], Any]:
    if hint is Any or hint is object:
        return _identity
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass_decoder(hint)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(args)
    if origin in (tuple, list):
        return _sequence_decoder(_decoder(args[0]), tuple if origin is tuple else list)
    if origin in (Mapping, dict, typing.Mapping):
        return _mapping_decoder(_decoder(args[1] if args else Any))
    return _scalar_decoder(hint)


def _union_decoder(args: tuple[Any, ...]) -> Callable[[Any], Any]:
    nullable = type(None) in args
    options = [_decoder(a) for a in args if a is not type(None)]

    def decode_union(data: Any) -> Any:
        if data is None and nullable:
            return None
        problems: list[tuple[tuple[str, ...], str]] = []
        for option in options:
            try:
                return option(data)
            except _Bad as exc:
                problems.extend(exc.problems)
        raise _Bad(problems)

    return decode_union


def _sequence_decoder(item: Callable[[Any], Any], kind: type) -> Callable[[Any], Any]:
    def decode_sequence(data: Any) -> Any:
        if not isinstance(data, (list, tuple)):
            raise _wrong("a list", data)
        out = []
        for i, value in enumerate(data):
            try:
                out.append(item(value))
            except _Bad as exc:
                raise exc.under(f"[{i}]") from None
        return kind(out)

    return decode_sequence


def _mapping_decoder(value_decoder: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def decode_mapping(data: Any) -> Any:
        if not isinstance(data, Mapping):
            raise _wrong("an object", data)
        out = {}
        for key, value in data.items():
            try:
                out[str(key)] = value_decoder(value)
            except _Bad as exc:
                raise exc.under(f".{key}") from None
        return out

    return decode_mapping


def _scalar_decoder(hint: Any) -> Callable[[Any], Any]:
    if hint is float:

        def decode_float(data: Any) -> Any:
            if isinstance(data, bool) or not isinstance(data, (int, float)):
                raise _wrong("a number", data)
            return data  # an int stays an int: the JSON written back is the JSON read

        return decode_float
    if hint is int:

        def decode_int(data: Any) -> Any:
            if isinstance(data, bool) or not isinstance(data, int):
                raise _wrong("an integer", data)
            return data

        return decode_int
    if hint is bool or hint is str:

        def decode_exact(data: Any) -> Any:
            if not isinstance(data, hint):
                raise _wrong(hint.__name__, data)
            return data

        return decode_exact
    if hint is Decimal:

        def decode_decimal(data: Any) -> Any:
            if isinstance(data, bool) or not isinstance(data, (str, int, float, Decimal)):
                raise _wrong("a decimal string", data)
            return Decimal(str(data))

        return decode_decimal
    raise TypeError(f"the codec has no rule for {hint!r}")


def _dataclass_decoder(cls: type[T]) -> Callable[[Any], T]:
    fields = [(f, _decoder(f.hint)) for f in _fields(cls) if f.json]
    flag_names = {f.name for f in _fields(cls) if not f.json}

    def decode_dataclass(data: Any) -> T:
        if not isinstance(data, Mapping):
            raise _wrong("an object", data)
        kwargs: dict[str, Any] = {}
        for f, field_decoder in fields:
            if f.key in data:
                try:
                    kwargs[f.name] = field_decoder(data[f.key])
                except _Bad as exc:
                    raise exc.under(f".{f.key}") from None
                if f.present_if is not None and f.present_if in flag_names:
                    kwargs[f.present_if] = True
            elif f.required:
                raise _Bad([((f".{f.key}",), "missing")])
        return cls(**kwargs)

    return decode_dataclass
