"""What differs between plans: the inputs asked (request), the assumptions used, the headline figures and the bill
of materials. Read from the stored plans only (`planner.outputs.plan_view`), so the compare page and a derived
plan's "changed from its parent" note say the same thing.

The first plan given is the baseline; every other plan is compared with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .outputs.plan_view import HEADLINES, PlanView, plan_view

__all__ = [
    "BomChange",
    "Change",
    "PlanDiff",
    "assumption_changes",
    "bom_changes",
    "diffs_against_first",
    "headline_rows",
    "plan_diff",
    "request_changes",
]

# Request keys that are bookkeeping, not inputs: a plan's name differs from its copy's by design.
_NOT_INPUTS = frozenset({"name"})


@dataclass(frozen=True)
class Change:
    """One input or assumption that differs: its path (or name), the baseline's value and this plan's (None =
    not set)."""

    path: str
    before: Any
    after: Any
    unit: str = ""


@dataclass(frozen=True)
class BomChange:
    """One BOM line that differs: `kind` is added, removed, quantity or price (a line can be both: two entries)."""

    kind: str
    part_number: str
    description: str
    before: Any
    after: Any


@dataclass(frozen=True)
class PlanDiff:
    """Everything that differs between a baseline plan and one other plan."""

    inputs: tuple[Change, ...]
    assumptions: tuple[Change, ...]
    headlines: tuple[Change, ...]
    bom: tuple[BomChange, ...]

    def __bool__(self) -> bool:
        return bool(self.inputs or self.assumptions or self.headlines or self.bom)


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted paths to leaf values; lists are leaves (regions, a layout pinned as a list), compared whole."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def request_changes(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> tuple[Change, ...]:
    """Every request field whose value differs (a field present in one request only reads as None in the other).
    Both requests are the stored, normalised ones, so a default written out and one left implicit compare equal."""
    a, b = _flatten(before or {}), _flatten(after or {})
    paths = sorted(path for path in set(a) | set(b) if path.split(".")[0] not in _NOT_INPUTS)
    return tuple(Change(path, a.get(path), b.get(path)) for path in paths if a.get(path) != b.get(path))


def assumption_changes(before: PlanView, after: PlanView) -> tuple[Change, ...]:
    """Named assumptions (engine/data/assumptions) and cost parameters whose value differs between the plans."""
    out = []
    a, b = before.assumptions, after.assumptions
    for name in sorted(set(a) | set(b)):
        old, new = a.get(name), b.get(name)
        if (old.value if old else None) != (new.value if new else None):
            out.append(Change(name, old.value if old else None, new.value if new else None, (old or new).unit))
    pa = (before.costs.parameters or {}) if before.costs else {}
    pb = (after.costs.parameters or {}) if after.costs else {}
    for name in sorted(set(pa) | set(pb)):
        old, new = pa.get(name), pb.get(name)
        if (old.value if old else None) != (new.value if new else None):
            unit = (old or new).unit or ""
            out.append(Change(f"cost parameter {name}", old.value if old else None, new.value if new else None, unit))
    return tuple(out)


def _same(x: Any, y: Any) -> bool:
    if isinstance(x, int | float | Decimal) and isinstance(y, int | float | Decimal):
        return Decimal(str(x)) == Decimal(str(y))
    return x == y


def headline_rows(views: Sequence[PlanView]) -> list[dict[str, Any]]:
    """Rows of {label, path, unit, values[...], cells[(value, differs from the baseline)], differs} for every
    headline figure any plan has; `differs` when the plans disagree (the compare page highlights the cells that
    differ from the baseline)."""
    rows = []
    for label, path, unit in HEADLINES:
        values = [view.value(path) for view in views]
        if all(value is None for value in values):
            continue
        # Each cell against the baseline's: a plan equal to the baseline is not highlighted because a third differs.
        cells = [(value, i > 0 and not _same(values[0], value)) for i, value in enumerate(values)]
        differs = any(changed for _value, changed in cells)
        rows.append({"label": label, "path": path, "unit": unit, "values": values, "cells": cells, "differs": differs})
    return rows


def _by_part(lines: Iterable[Any]) -> dict[tuple[str, str], Any]:
    """BOM lines by part number and description: one line per part number, except a system's hot spares (the same
    part on a line of its own, engine/physical/bom.py); a repeat keeps the first line."""
    out: dict[tuple[str, str], Any] = {}
    for line in lines:
        out.setdefault((line.part_number, line.description), line)
    return out


def bom_changes(before: Iterable[Any], after: Iterable[Any]) -> tuple[BomChange, ...]:
    """BOM lines (objects with part_number, description, quantity, unit_price_usd) added, removed, or with a
    different quantity or unit price, in part-number order."""
    a, b = _by_part(before), _by_part(after)
    out: list[BomChange] = []
    for key in sorted(set(a) | set(b), key=lambda k: (k[0] or "", k[1] or "")):
        old, new = a.get(key), b.get(key)
        part = key[0]
        if old is None:
            out.append(BomChange("added", part, new.description, None, new.quantity))
        elif new is None:
            out.append(BomChange("removed", part, old.description, old.quantity, None))
        else:
            if not _same(old.quantity, new.quantity):
                out.append(BomChange("quantity", part, new.description, old.quantity, new.quantity))
            if not _same(old.unit_price_usd, new.unit_price_usd):
                out.append(BomChange("price", part, new.description, old.unit_price_usd, new.unit_price_usd))
    return tuple(out)


def _headline_changes(before: PlanView, after: PlanView) -> tuple[Change, ...]:
    rows = headline_rows([before, after])
    return tuple(Change(row["label"], *row["values"], row["unit"]) for row in rows if row["differs"])


def plan_diff(
    before_request: Mapping[str, Any] | None,
    before_result: Any,
    after_request: Mapping[str, Any] | None,
    after_result: Any,
) -> PlanDiff:
    """What differs from the baseline (`before`) to `after`: inputs, assumptions, headline figures, BOM."""
    a, b = plan_view(before_result), plan_view(after_result)
    return PlanDiff(
        inputs=request_changes(before_request, after_request),
        assumptions=assumption_changes(a, b) if a and b else (),
        headlines=_headline_changes(a, b) if a and b else (),
        bom=bom_changes(a.bom_lines or (), b.bom_lines or ()) if a and b else (),
    )


def diffs_against_first(plans: Iterable[Any]) -> list[PlanDiff]:
    """For plans [p0, p1, ...] (objects with `request` and `result`): the diff of each of p1... against p0."""
    plans = list(plans)
    base = plans[0]
    return [plan_diff(base.request, base.result, p.request, p.result) for p in plans[1:]]
