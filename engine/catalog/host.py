"""Parse a system record's `host` object: the CPU memory and host link that offloaded state lives behind.

Kept apart from hardware.py so the loader stays small. Every figure is required and checked here, because an
offload plan built on a missing or zero host figure would be silently wrong (a divide by zero at best): a record
without them fails to load with a message naming the system and the field.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

__all__ = ["HOST_KEYS", "host_fields"]

# Keys of the `host` object -> the System field each one fills.
HOST_KEYS = {
    "memory_gib": "host_memory_gib",
    "link_gbyte_s_per_gpu": "host_link_gbyte_s_per_gpu",
    "link_derivation": "host_link_derivation",
    "source": "host_source",
    "as_of": "host_as_of",
    "confidence": "host_confidence",
}
_NUMBERS = ("memory_gib", "link_gbyte_s_per_gpu")


def _fail(system_id: str, problem: str) -> ValueError:
    return ValueError(f"catalog system {system_id}: {problem}")


def host_fields(rec: dict[str, Any]) -> dict[str, Any]:
    """The System keyword arguments for a record's `host` object, validated: both figures positive numbers,
    every text present, `as_of` an ISO date. Raises ValueError naming the system and the missing or bad field."""
    system_id = str(rec.get("id", "?"))
    host = rec.get("host")
    if not isinstance(host, dict):
        raise _fail(system_id, "host is required (host memory_gib, link_gbyte_s_per_gpu, source, as_of)")
    missing = [key for key in HOST_KEYS if key not in host or host[key] in (None, "")]
    if missing:
        raise _fail(system_id, f"host.{missing[0]} is required")
    out: dict[str, Any] = {}
    for key in _NUMBERS:
        value = host[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise _fail(system_id, f"host.{key} must be a positive number, got {value!r}")
        out[HOST_KEYS[key]] = float(value)
    try:
        dt.date.fromisoformat(str(host["as_of"]))
    except ValueError:
        raise _fail(system_id, f"host.as_of must be an ISO date (YYYY-MM-DD), got {host['as_of']!r}") from None
    for key in ("link_derivation", "source", "as_of", "confidence"):
        out[HOST_KEYS[key]] = str(host[key])
    return out
