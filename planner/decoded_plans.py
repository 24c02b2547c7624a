"""Decoded plans kept per process, by the digest of the stored text: what the what-if API re-costs.

A what-if slider calls `POST /api/plans/{id}/whatif/` tens of times a minute on the same stored plan. Parsing a
16,384-GPU plan's 440 kB of JSON and decoding its costed sections into the typed `PlanResult` cost about 10 ms of
each call's CPU; the result never changes between calls. The key is a digest of the text the database returns,
so any new result (a re-run, an admin edit, a migration) is a new key and an old entry is never served for it;
the typed result is frozen, so callers can share it. Bounded (least recently used out), per process: each worker
thread or process keeps its own few.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .adapter import PlanResult, decode_costed

__all__ = ["MAX_PLANS", "CostedPlan", "costed_plan"]

MAX_PLANS = 16  # a 16,384-GPU plan decoded is a few MB; a user moves sliders on one or two plans at a time


@dataclass(frozen=True)
class CostedPlan:
    """What a what-if needs of a stored plan: its request (never mutated by callers: the what-if copies it), whether
    it has costs to recompute, its costed sections decoded, and its own plan date."""

    request: Mapping[str, Any]
    costs_available: bool
    decoded: PlanResult | None  # None when it has no costs, or was stored by a version whose plan no longer decodes
    plan_date: str | None = None  # the day the plan's start dates count from (its costs' time to capacity)


_plans: OrderedDict[str, CostedPlan] = OrderedDict()
_lock = threading.Lock()


def costed_plan(text: str) -> CostedPlan:
    """The plan stored as `text` (the database's JSON text), decoded once per process and digest."""
    key = hashlib.sha256(text.encode()).hexdigest()
    with _lock:
        if (kept := _plans.get(key)) is not None:
            _plans.move_to_end(key)
            return kept
    stored = json.loads(text)
    costs = stored.get("costs") or {}
    available = bool(costs.get("available"))
    try:
        decoded = decode_costed(stored) if available else None
    except (ValueError, TypeError):  # an older version's plan: the caller says to run it again
        decoded = None
    plan = CostedPlan(
        request=stored.get("request") or {},
        costs_available=available,
        decoded=decoded,
        plan_date=(costs.get("time_to_capacity") or {}).get("plan_date"),
    )
    with _lock:
        _plans[key] = plan
        while len(_plans) > MAX_PLANS:
            _plans.popitem(last=False)
    return plan
