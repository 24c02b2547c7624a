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

import copy
from collections.abc import Callable, Hashable
from typing import TypeVar

__all__ = ["SearchMemo"]

T = TypeVar("T")


class SearchMemo:
    """Answers of training searches by (inputs key, query); each caller gets its own copy (callers add to the
    statistics they are handed)."""

    def __init__(self) -> None:
        self._answers: dict[Hashable, object] = {}
        self.hits = 0

    def answer(self, key: Hashable, compute: Callable[[], T]) -> T:
        if key in self._answers:
            self.hits += 1
        else:
            self._answers[key] = compute()
        return copy.deepcopy(self._answers[key])  # type: ignore[return-value]
