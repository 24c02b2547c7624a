"""Reading a stored plan: the typed `PlanResult` decoded whole, or, for a plan stored by an older version that no
longer decodes whole (a section missing a key the typed result needs), section by section, so that its outputs show
what can be read rather than fail. `planner.outputs.plan_view` is the only caller.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, NamedTuple

from planner.adapter import PlanResult, decode_section, from_json

__all__ = ["ABSENT", "Decoded", "decode_stored", "lookup", "read_by_section", "read_section", "typed_figure"]

# What a required part of the plan stands as when an old plan lacks it or it cannot be read. No output reads
# `model` or `selection`, so None stands in for them.
ABSENT: dict[str, Any] = {
    "name": None,
    "workload": "",
    "feasible": False,
    "problems": (),
    "engine_version": "",
    "catalog_version": "",
    "request": {},
    "model": None,
    "selection": None,
    "candidates": (),
    "not_modelled": (),
    "notes": (),
}


class Decoded(NamedTuple):
    result: PlanResult | None  # None for a plan without a result
    unread: tuple[str, ...]  # the sections of a legacy plan that could not be read
    legacy: bool  # stored by an older version and read section by section


def decode_stored(stored: Mapping[str, Any] | PlanResult | None) -> Decoded:
    """The typed plan of a stored one: decoded whole (`from_json`, which also reads a schema "1" plan), else read
    section by section."""
    if isinstance(stored, PlanResult):
        return Decoded(stored, (), False)
    if not stored:
        return Decoded(None, (), False)
    try:
        return Decoded(from_json(stored), (), False)
    except (ValueError, TypeError):
        return Decoded(*read_by_section(stored), True)


@cache
def _section_hints() -> dict[str, Any]:
    """PlanResult's JSON sections and their types (every field but the codec's own flags)."""
    hints = typing.get_type_hints(PlanResult)
    return {f.name: hints[f.name] for f in dataclasses.fields(PlanResult) if f.metadata.get("json", True)}


def read_section(stored: Mapping[str, Any], name: str) -> tuple[Any, bool]:
    """(typed section, read): (None, True) when the plan has no such section, (None, False) when it cannot be read."""
    if name not in stored:
        return None, True
    try:
        return decode_section(_section_hints()[name], stored[name], name), True
    except (ValueError, TypeError):
        return None, False


def read_by_section(stored: Mapping[str, Any]) -> tuple[PlanResult, tuple[str, ...]]:
    """An old plan that does not decode whole: every section that decodes, and the names of those that do not.
    Required parts it lacks stand as `ABSENT`."""
    values: dict[str, Any] = {}
    unread = []
    for name in _section_hints():
        value, read = read_section(stored, name)
        if not read:
            unread.append(name)
        elif name in stored:
            values[name] = value
    result = PlanResult(**{**ABSENT, **values, "stamped": "price_snapshot" in values})
    return result, tuple(unread)


def lookup(data: Any, path: str) -> Any:
    """`a.b.c` in nested dicts, or None when any step is missing: for the request (a plain mapping, also in the
    typed plan) and the form's initial values."""
    for key in path.split("."):
        if not isinstance(data, Mapping) or key not in data:
            return None
        data = data[key]
    return data


def typed_figure(result: PlanResult | None, path: str) -> Any:
    """A headline figure by its attribute path (`costs.onprem.capex_usd`), or None when a stage is absent."""
    value: Any = result
    for name in path.split("."):
        value = getattr(value, name, None)
        if value is None:
            return None
    return value
