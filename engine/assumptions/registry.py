"""Named engine assumptions: every efficiency constant with its default, unit, range and source.

The records are data, not code: `engine/data/assumptions/performance.toml` (training step time, goodput, memory,
the layout search, serving) and `engine/data/assumptions/build.toml` (fabrics, racks, electrical, cooling, PUE,
storage). TOML rather than JSON because the entries are mostly prose (descriptions and sources) that reads better
wrapped and commented; `tomllib` is in the standard library. This module reads both files once, at import, and
checks every field, so a malformed or duplicated entry stops the engine at start-up rather than surfacing as a
wrong figure in a plan.

A plan reports the value it used for each assumption and the user can override any of them through the request's
`assumptions` object, so no constant is hidden in a formula.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

__all__ = ["ASSUMPTIONS", "FIT_KINDS", "KV_BYTES_BY_PRECISION", "Assumption", "Assumptions"]

# The data files, in the order their entries are registered.
ASSUMPTION_FILES = ("performance.toml", "build.toml", "procurement.toml", "prices.toml", "campus.toml", "plant.toml")
STAGES = frozenset({"training", "inference"})


@dataclass(frozen=True)
class Assumption:
    """One overridable constant; `stages` says which chains use it so plans list only what they used."""

    name: str
    default: float
    unit: str
    source: str
    description: str
    minimum: float
    maximum: float
    stages: tuple[str, ...]
    integer: bool = False
    # Calibration: "throughput" (fitted on steady-state benchmark tables) or "whole_run" (fitted on whole-run
    # GPU-hours and days); None = a judgement or a definition, never refitted by `make accuracy`.
    fit: str | None = None
    # Plausible range (about p10 and p90) of an uncertain constant; plans turn these into ranges of their figures.
    low: float | None = None
    high: float | None = None


_REQUIRED = {"name": str, "default": (int, float), "unit": str, "minimum": (int, float), "maximum": (int, float)}
_REQUIRED |= {"stages": list, "description": str, "source": str}
_OPTIONAL = {"integer": bool, "source_note": str, "fit": str, "low": (int, float), "high": (int, float)}
FIT_KINDS = frozenset({"throughput", "whole_run"})


def _assumption(rec: Mapping[str, Any], notes: Mapping[str, str], where: str) -> Assumption:
    """One checked record: known keys with the right types, a known stage, default inside its range."""
    name = rec.get("name", "?")
    unknown = set(rec) - set(_REQUIRED) - set(_OPTIONAL)
    if unknown:
        raise ValueError(f"{where}: assumption {name} has unknown keys {sorted(unknown)}")
    for key, kind in (_REQUIRED | _OPTIONAL).items():
        if key not in rec:
            if key in _REQUIRED:
                raise ValueError(f"{where}: assumption {name} has no {key}")
            continue
        value = rec[key]
        if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
            raise ValueError(f"{where}: assumption {name}.{key} has the wrong type ({type(value).__name__})")
        if isinstance(value, str) and not value.strip():
            raise ValueError(f"{where}: assumption {name}.{key} is empty")
    stages = tuple(rec["stages"])
    if not stages or not set(stages) <= STAGES:
        raise ValueError(f"{where}: assumption {name} names stages {stages}; allowed {sorted(STAGES)}")
    integer = bool(rec.get("integer", False))
    default, minimum, maximum = rec["default"], rec["minimum"], rec["maximum"]
    if not minimum <= default <= maximum:
        raise ValueError(f"{where}: assumption {name} default {default} is outside [{minimum}, {maximum}]")
    if integer and any(not float(v).is_integer() for v in (default, minimum, maximum)):
        raise ValueError(f"{where}: integer assumption {name} has a fractional default or bound")
    if rec.get("fit") is not None and rec["fit"] not in FIT_KINDS:
        raise ValueError(f"{where}: assumption {name}.fit is {rec['fit']!r}; allowed {sorted(FIT_KINDS)}")
    low, high = rec.get("low"), rec.get("high")
    if (low is None) != (high is None):
        raise ValueError(f"{where}: assumption {name} needs both low and high, or neither")
    if low is not None and not minimum <= low <= default <= high <= maximum:
        raise ValueError(f"{where}: assumption {name} needs minimum <= low <= default <= high <= maximum")
    source = rec["source"]
    if "source_note" in rec:
        if rec["source_note"] not in notes:
            raise ValueError(f"{where}: assumption {name} names unknown note {rec['source_note']}")
        source = f"{source} {notes[rec['source_note']]}"
    return Assumption(
        name,
        default,
        rec["unit"],
        source,
        rec["description"],
        minimum,
        maximum,
        stages,
        integer,
        fit=rec.get("fit"),
        low=low,
        high=high,
    )


def _load() -> tuple[dict[str, Assumption], dict[str, float]]:
    """Every assumption file's records (a name may appear once across all files) and the KV-bytes table."""
    registry: dict[str, Assumption] = {}
    kv_bytes: dict[str, float] = {}
    folder = resources.files("engine") / "data" / "assumptions"
    for filename in ASSUMPTION_FILES:
        data = tomllib.loads((folder / filename).read_text(encoding="utf-8"))
        notes = data.get("notes", {})
        for rec in data.get("assumption", []):
            spec = _assumption(rec, notes, filename)
            if spec.name in registry:
                raise ValueError(f"{filename}: assumption {spec.name} is defined twice")
            registry[spec.name] = spec
        kv_bytes.update({k: float(v) for k, v in data.get("kv_bytes_by_precision", {}).items()})
    if not kv_bytes:
        raise ValueError("no [kv_bytes_by_precision] table in the assumption files")
    return registry, kv_bytes


ASSUMPTIONS, KV_BYTES_BY_PRECISION = _load()
"""`ASSUMPTIONS`: name -> Assumption, in file order. `KV_BYTES_BY_PRECISION`: bytes per KV-cache element by serving
precision (FP8/FP4 stacks keep an FP8 cache, weight-only INT8/INT4 a 16-bit one), the request default of
`kv_cache_bytes_per_element`."""


@dataclass
class Assumptions:
    """Resolved assumption values for one plan: defaults, then per-request defaults, then user overrides.

    It records which names were read so the plan lists exactly the assumptions behind its figures. A name's
    value is resolved once and remembered (`_values`): a plan reads about a thousand values of a few dozen names,
    and the overrides and request defaults are fixed when the plan starts (a changed set is a new `Assumptions`,
    as `envelope/workload.py` makes one).
    """

    overrides: dict[str, float] = field(default_factory=dict)
    request_defaults: dict[str, float] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    _values: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def default(self, name: str) -> float:
        """The default for this request (some defaults depend on the request, e.g. KV bytes on precision)."""
        return self.request_defaults.get(name, ASSUMPTIONS[name].default)

    def __getitem__(self, name: str) -> float:
        self.used.add(name)
        value = self._values.get(name)
        if value is None:
            raw = self.overrides.get(name, self.default(name))
            value = self._values[name] = int(raw) if ASSUMPTIONS[name].integer else float(raw)
        return value

    def report(self) -> dict[str, dict[str, object]]:
        """`{name: {value, default, unit, source, description}}` for every assumption read, sorted by name."""
        out: dict[str, dict[str, object]] = {}
        for name in sorted(self.used):
            spec = ASSUMPTIONS[name]
            out[name] = {
                "value": self[name],
                "default": int(self.default(name)) if spec.integer else float(self.default(name)),
                "overridden": name in self.overrides,
                "unit": spec.unit,
                "source": spec.source,
                "description": spec.description,
            }
        return out
