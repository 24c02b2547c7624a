"""Training searches with equal inputs answer once per plan.

Why: an auto plan sizes every catalog system, and some systems are the same machine to the step model (the DGX
H100 and an OEM HGX H100 board: same GPU, NVLink domain, fabric, memory options and failure rate). Their layout
costs are already shared (`layout_cache.py`), but each still ran its own deadline search and frontier. A search's
answer (plan, statistics, closest misses, frontier points) is a pure function of `TrainingSearch.inputs_key`
and the query, so the second system takes a copy of the first one's answer: the same figures, the same reported
statistics. What depends on the system itself (its id in messages, its MTBF source, the goodput record) is still
worked out per system by the caller (`training.size_training`).

The memo lives for one plan (the chain makes one per `run_plan`), so a later request never reads an earlier one's
answers.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from copy import copy as shallow_copy
from typing import TypeVar

from engine.search.results import Infeasibility, Plan, SearchStats

__all__ = ["Outcome", "SearchMemo", "copy_outcome", "copy_points"]

T = TypeVar("T")
Outcome = tuple[Plan | None, SearchStats, Infeasibility]


class SearchMemo:
    """Answers of training searches by (inputs key, query). The memo keeps its own copy and hands each caller
    another (`copy`: callers add to the statistics they are handed)."""

    def __init__(self) -> None:
        self._answers: dict[Hashable, object] = {}
        self.hits = 0

    def answer(self, key: Hashable, compute: Callable[[], T], copy: Callable[[T], T]) -> T:
        if key in self._answers:
            self.hits += 1
            return copy(self._answers[key])  # type: ignore[arg-type]
        value = compute()
        self._answers[key] = copy(value)
        return value


def copy_outcome(outcome: Outcome) -> Outcome:
    """A search's (plan, statistics, misses) with its mutable parts copied (a `Plan` is frozen)."""
    plan, stats, miss = outcome
    stats = shallow_copy(stats)  # `dataclasses.replace` runs __init__ again, several times the cost
    stats.rejected_by_reason = dict(stats.rejected_by_reason)
    return plan, stats, shallow_copy(miss)


def copy_points(points: list[dict[str, object]]) -> list[dict[str, object]]:
    """Frontier points (plain dicts of numbers with one nested `parallelism` dict), copied."""
    return [{**p, "parallelism": dict(p["parallelism"])} for p in points]  # type: ignore[call-overload]
