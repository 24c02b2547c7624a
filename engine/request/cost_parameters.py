"""What a request may set each named cost parameter to (`pricing.parameters`), read from package data.

Plain JSON (no pricing-app import), so the engine stays pure; `validate_request` takes another table if given.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

__all__ = ["PARAMETER_TWINS", "CostParameterLimit", "cost_parameter_limits"]

# Cost parameters a request also sets elsewhere: giving both would be ambiguous, so it is an error.
PARAMETER_TWINS = {
    "utilization": "pricing.utilization",
    "electricity_usd_per_kwh": "site.electricity_usd_per_kwh",
    "colo_usd_per_kw_month": "site.colo_usd_per_kw_month",
}


class CostParameterLimit(NamedTuple):
    """What a request may set a named cost parameter to: minimum..maximum (minimum excluded if exclusive), a
    whole number when `integer` (years)."""

    minimum: float
    maximum: float
    unit: str
    minimum_exclusive: bool = False
    integer: bool = False


@functools.lru_cache(maxsize=4)
def cost_parameter_limits(path: Path | None = None) -> Mapping[str, CostParameterLimit]:
    """Names and allowed ranges of the cost parameters, read from `fixtures/prices/parameters.json`."""
    path = path or Path(__file__).resolve().parents[2] / "fixtures" / "prices" / "parameters.json"
    records = json.loads(Path(path).read_text(encoding="utf-8"))["records"]
    return MappingProxyType(
        {
            r["name"]: CostParameterLimit(
                float(r["minimum"]),
                float(r["maximum"]),
                str(r.get("unit", "")),
                bool(r.get("minimum_exclusive")),
                bool(r.get("integer")),
            )
            for r in records
        }
    )
