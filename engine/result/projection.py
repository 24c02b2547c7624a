"""Part of a typed result as JSON: only the fields a caller names by dotted path (`onprem.capex_usd`, `verdict`).

Why: a what-if slider redraws a few figures (capex, opex, TCO, the verdict), but the whole `costs` section of a
large plan is 80-100 kB of JSON (every cloud row with its spot detail, the cash flows, the parameters). Asking
for the figures shown keeps each answer a few hundred bytes. The paths are checked against the result's types,
not against one answer, so a field a plan happens not to have (a capex range without prices) is a valid name
that answers nothing, and a misspelt one is an error that names it. Each chosen value is encoded by the one codec,
so it is the same JSON the full section holds at that path.

Paths: object fields by their JSON key; a list applies the rest of the path to every item (`cloud.job_usd` ->
each row's job cost); a mapping takes any key as the next part (`parameters.spares_percent`).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from .codec import encode, json_fields

__all__ = ["FieldTree", "UnknownField", "encode_fields", "field_tree"]

FieldTree = dict[str, "FieldTree"]  # an empty tree: the whole value below that path


class UnknownField(ValueError):
    """A path that names no field of the result type; `path` is the whole path as given."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


def _object_types(hint: Any) -> tuple[Any, ...]:
    """The types a value of `hint` can hold, with None left out and unions opened."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return tuple(t for arg in typing.get_args(hint) for t in _object_types(arg))
    return () if hint is type(None) else (hint,)


def _child_hint(hint: Any, part: str) -> Any | None:
    """The type at `part` below a value of `hint` (None: `hint` has no such field)."""
    for option in _object_types(hint):
        origin = typing.get_origin(option)
        if origin in (tuple, list):
            return _child_hint(typing.get_args(option)[0], part)
        if origin is not None and isinstance(origin, type) and issubclass(origin, Mapping):
            return typing.get_args(option)[1]
        if dataclasses.is_dataclass(option):
            for f in json_fields(option):
                if f.key == part and f.json:
                    return f.hint
    return None


def field_tree(root: type, paths: Iterable[str], prefix: str = "") -> FieldTree:
    """The paths as a tree, each checked against `root`'s types; UnknownField for the first that names nothing.
    `prefix` is how the caller names `root` in messages ("costs")."""
    tree: FieldTree = {}
    for path in paths:
        hint: Any = root
        node = tree
        parts = path.split(".")
        for depth, part in enumerate(parts):
            hint = _child_hint(hint, part)
            if not part or hint is None:
                where = ".".join(filter(None, (prefix, *parts[:depth]))) or "the answer"
                raise UnknownField(path, f"{path!r}: {part!r} is not a field of {where}")
            if node.get(part) == {} and part in node:
                break  # the whole of this value is already asked for
            node = node.setdefault(part, {})
        else:
            node.clear()  # the whole value at this path, whatever narrower paths asked for
    return tree


def encode_fields(value: object, tree: FieldTree) -> Any:
    """`value` encoded with only the fields of `tree`; a field the value does not carry (None where the full
    encoding leaves it out) is left out here too."""
    if not tree or value is None:
        return encode(value)
    if isinstance(value, (tuple, list)):
        return [encode_fields(item, tree) for item in value]
    if isinstance(value, Mapping):
        return {str(k): encode_fields(value[k], sub) for k, sub in tree.items() if k in value}
    out: dict[str, Any] = {}
    for f in json_fields(type(value)):
        if f.key not in tree or not f.json:
            continue
        item = getattr(value, f.name)
        if (item is None and f.omit_none) or (f.present_if is not None and not getattr(value, f.present_if)):
            continue
        out[f.key] = encode_fields(item, tree[f.key])
    return out
