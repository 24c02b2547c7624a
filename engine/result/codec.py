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
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, TypeVar

__all__ = ["decode", "encode", "meta"]

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


def encode(value: object) -> Any:
    """Plain JSON types only (dict, list, str, int, float, bool, None)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in _fields(type(value)):
            if not f.json:
                continue
            item = getattr(value, f.name)
            if item is None and f.omit_none:
                continue
            if f.present_if is not None and not getattr(value, f.present_if):
                continue
            out[f.key] = encode(item)
        return out
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("engine produced a non-finite number")
        return value
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def _fail(path: str, expected: str, data: object) -> ValueError:
    return ValueError(f"{path or 'plan'}: expected {expected}, got {type(data).__name__}")


def decode(hint: Any, data: Any, path: str = "") -> Any:
    """The typed value of `data` (the output of `encode`) for the type `hint`; ValueError names the bad path."""
    if hint is Any or hint is object:
        return data
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decode_dataclass(hint, data, path)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        errors = []
        for option in options:
            try:
                return decode(option, data, path)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError("; ".join(errors))
    if origin is tuple:
        if not isinstance(data, (list, tuple)):
            raise _fail(path, "a list", data)
        item = args[0]
        return tuple(decode(item, v, f"{path}[{i}]") for i, v in enumerate(data))
    if origin is list:
        if not isinstance(data, (list, tuple)):
            raise _fail(path, "a list", data)
        return [decode(args[0], v, f"{path}[{i}]") for i, v in enumerate(data)]
    if origin in (Mapping, dict, typing.Mapping):
        if not isinstance(data, Mapping):
            raise _fail(path, "an object", data)
        value_hint = args[1] if args else Any
        return {str(k): decode(value_hint, v, f"{path}.{k}") for k, v in data.items()}
    return _decode_scalar(hint, data, path)


def _decode_scalar(hint: Any, data: Any, path: str) -> Any:
    if hint is float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise _fail(path, "a number", data)
        return data  # an int stays an int: the JSON written back is the JSON read
    if hint is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise _fail(path, "an integer", data)
        return data
    if hint is bool or hint is str:
        if not isinstance(data, hint):
            raise _fail(path, hint.__name__, data)
        return data
    if hint is Decimal:
        if isinstance(data, bool) or not isinstance(data, (str, int, float, Decimal)):
            raise _fail(path, "a decimal string", data)
        return Decimal(str(data))
    raise TypeError(f"{path}: the codec has no rule for {hint!r}")


def _decode_dataclass(cls: type[T], data: Any, path: str) -> T:
    if not isinstance(data, Mapping):
        raise _fail(path, "an object", data)
    kwargs: dict[str, Any] = {}
    flags: dict[str, bool] = {}
    for f in _fields(cls):
        if not f.json:
            continue
        if f.key in data:
            kwargs[f.name] = decode(f.hint, data[f.key], f"{path}.{f.key}" if path else f.key)
            if f.present_if is not None:
                flags[f.present_if] = True
        elif f.required:
            raise ValueError(f"{path}.{f.key}: missing" if path else f"{f.key}: missing")
    for f in _fields(cls):
        if not f.json and f.name in flags:
            kwargs[f.name] = True
    return cls(**kwargs)
