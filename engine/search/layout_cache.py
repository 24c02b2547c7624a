"""Layout costs remembered across training searches: the costs of every layout of a grid are a pure function of
the model, the hardware and efficiency figures, the memory options, the batch and the pins, so a search with the
same inputs (another system with the same hardware in one auto plan, or the same request planned again with
another deadline, token count, site or price) reuses them instead of recomputing them.

Why a least-recently-used cache bounded by bytes: one entry is a few MB (about 1.9 MB for Llama 3 70B on an
8-GPU system, 6 MB for Mixtral 8x22B, when stored; the step-model columns and derived grids the searches add
later bring it to about 1.4 times that), and an auto plan needs one per system (13 with the rented systems).
A count of entries either drops the first auto plan's systems while the second is planned (18 entries: a
second plan evicted the first's) or lets a large model's plans take far more memory than a small model's, so
the bound is `MAX_BYTES` as stored (about 3.5 auto plans of a 70B model, 1.6 of Mixtral 8x22B; about the
worst-case memory the former 18 entries allowed), with `MAX_ENTRIES` as a backstop. The costs are only read by
the searches (besides their own derived caches, which are the same for every search), so sharing them changes
no answer.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

import numpy as np

__all__ = ["ACTIVATION_FLOORS", "LAYOUTS", "MAX_BYTES", "MAX_ENTRIES", "LruCache", "array_bytes"]

MAX_ENTRIES = 64
MAX_BYTES = 128 * 2**20  # of layout costs as stored (numpy arrays), about 180 MB once the searches add theirs
T = TypeVar("T")


def array_bytes(value: object) -> int:
    """Bytes of the numpy arrays an object holds directly (a `LayoutCosts` as stored; 0 for None)."""
    return sum(v.nbytes for v in vars(value).values() if isinstance(v, np.ndarray)) if value is not None else 0


class LruCache(Generic[T]):
    """Least-recently-used values by hashable key, at most `max_entries` of them and, with `weigh`, at most
    `max_bytes` of their weights (the newest value is always kept) (thread-safe)."""

    def __init__(self, max_entries: int, max_bytes: int | None = None, weigh: Callable[[T], int] | None = None) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._weigh = weigh
        self._bytes: dict[Hashable, int] = {}
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
        weight = self._weigh(value) if self._weigh is not None else 0
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            self._bytes[key] = weight
            while len(self._values) > 1 and (
                len(self._values) > self.max_entries
                or (self.max_bytes is not None and sum(self._bytes.values()) > self.max_bytes)
            ):
                old, _ = self._values.popitem(last=False)
                del self._bytes[old]
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._bytes.clear()

    @property
    def nbytes(self) -> int:
        """The weights of the values held (0 without `weigh`)."""
        return sum(self._bytes.values())

    def __len__(self) -> int:
        return len(self._values)


LAYOUTS: LruCache[object] = LruCache(MAX_ENTRIES, MAX_BYTES, array_bytes)
# The activation floor of a layout grid (`layouts.TrainingSearch._prune_memory`), before any system's layout costs
# are built: it depends on the model, the grid and three switches, not on the hardware, so an auto plan's systems
# share one or two (an array of a few thousand floats each).
ACTIVATION_FLOORS: LruCache[object] = LruCache(8)
