"""Layout costs remembered across training searches: the costs of every layout of a grid are a pure function of
the model, the hardware and efficiency figures, the memory options, the batch and the pins, so a search with the
same inputs (another system with the same hardware in one auto plan, or the same request planned again with
another deadline, token count, site or price) reuses them instead of recomputing them.

Why a small least-recently-used cache by entry: one entry is a few MB (about 1.5 MB for Llama 3 70B on an
8-GPU system, 5 MB for Mixtral 8x22B), and an auto plan needs one per system; `MAX_ENTRIES` keeps about two auto
plans. The costs are only read by the searches (besides their own derived caches, which are the same for every
search), so sharing them changes no answer.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["ACTIVATION_FLOORS", "LAYOUTS", "MAX_ENTRIES", "LruCache"]

MAX_ENTRIES = 18  # two auto plans' systems
T = TypeVar("T")


class LruCache(Generic[T]):
    """Least-recently-used values by hashable key, at most `max_entries` of them (thread-safe)."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._values: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get_or_build(self, key: Hashable, build: Callable[[], T]) -> T:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                self.hits += 1
                return self._values[key]
            self.misses += 1
        value = build()  # outside the lock: a build takes tens of ms; two threads may build the same value once each
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.max_entries:
                self._values.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def __len__(self) -> int:
        return len(self._values)


LAYOUTS: LruCache[object] = LruCache(MAX_ENTRIES)
# The activation floor of a layout grid (`layouts.TrainingSearch._prune_memory`), before any system's layout costs
# are built: it depends on the model, the grid and three switches, not on the hardware, so an auto plan's systems
# share one or two (an array of a few thousand floats each).
ACTIVATION_FLOORS: LruCache[object] = LruCache(8)
