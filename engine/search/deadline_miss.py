"""The closest misses of a deadline search in which no candidate meets the deadline (`deadline.smallest`).

What is recorded, at every candidate's largest size: the fewest expected days among the candidates that fit
(among those the cluster cap limits, if any of them fits: a bigger batch cannot help them, so the cap is named),
and the most GPUs the batch feeds among those that fit; if none fits, the least memory.

Why lazily (issue 13 speed): these searches are the auto plan's systems that cannot meet the deadline at all (an
A100 cloud instance for a 70B model in 90 days), and working out every candidate's days at its largest size was
about half of such a search (8-10K step-model rows each). Only the order of the days matters up to the first
candidate that fits, so the candidates are timed in order of an exact lower bound on their days (the pipeline
time alone, `TrainingSearch.bound`, over an upper bound on the whole-run efficiency,
`WholeRunInputs.efficiency_ceiling`), in doubling chunks, and a timed candidate is placed once its days are below
every untimed candidate's bound; about one in ten is timed. Memory needs only the micro-batches per step, which
the bound gives exactly as the step model does. The misses are those of timing and checking every candidate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from engine.performance.memory import GIB
from engine.performance.step_time import LayoutCosts
from engine.search.count_efficiency import ceiling_table
from engine.search.grid import MISS_CHUNK
from engine.search.results import Infeasibility

if TYPE_CHECKING:
    from engine.search.deadline import _Grid
    from engine.search.layouts import TrainingSearch

__all__ = ["record_misses"]

# Relative slack on the days bound: it covers the rounding of the efficiency ceiling's and the days' products.
_BOUND_SLACK = 1e-9


def _first_fit(order: np.ndarray, memory_of: Callable[[np.ndarray], np.ndarray], hbm: float) -> int | None:
    """The first candidate of `order` that fits memory (None when none does), checked in doubling chunks."""
    start, chunk = 0, MISS_CHUNK
    while start < len(order):
        part = order[start : start + chunk]
        ok = np.nonzero(memory_of(part) <= hbm)[0]
        if len(ok):
            return int(part[ok[0]])
        start, chunk = start + chunk, chunk * 2
    return None


class _Days:
    """Expected days at the largest size: known where the search timed the candidate, else a lower bound until
    `time` works them out (`days_at`)."""

    def __init__(self, days: np.ndarray, known: np.ndarray, bound: np.ndarray, days_at, zeros: int) -> None:
        self.days, self.known, self.bound, self._days_at = days.copy(), known.copy(), bound, days_at
        # Once: the untimed candidate to time next. The bound is the same for a layout's `zeros` consecutive
        # ZeRO-stage rows, so the layouts are sorted (a quarter of the keys) and each one's rows listed together in
        # grid order: exactly the stable order of the candidates.
        layouts = np.argsort(bound[::zeros], kind="stable")
        self.by_bound = (layouts[:, None] * zeros + np.arange(zeros)).ravel()

    def time(self, sel: np.ndarray) -> None:
        self.days[sel] = self._days_at(sel)
        self.known[sel] = True

    def first_fit(self, cands: np.ndarray, memory_of: Callable[[np.ndarray], np.ndarray], hbm: float) -> int | None:
        """The first of `cands` (ascending) in order of (days, index) that fits memory, timing only as far as the
        order is needed: a timed candidate whose days are below every untimed one's bound has its place."""
        chunk, placed = MISS_CHUNK, 0
        member = np.zeros(len(self.known), dtype=bool)
        member[cands] = True
        by_bound = self.by_bound[member[self.by_bound]]
        while True:
            untimed = by_bound[~self.known[by_bound]]  # by bound, lowest first
            floor = float(self.bound[untimed[0]]) if len(untimed) else np.inf
            timed = cands[self.known[cands]]
            settled = timed[self.days[timed] < floor]
            order = settled[np.lexsort((settled, self.days[settled]))]
            found = _first_fit(order[placed:], memory_of, hbm)  # the first `placed` were checked before
            if found is not None or not len(untimed):
                return found
            placed = len(order)
            self.time(untimed[:chunk])
            chunk *= 2


def record_misses(s: TrainingSearch, lay: LayoutCosts, grid: _Grid, nearest: bool, days_hi: np.ndarray,
                  timed: np.ndarray, days_at, memory, miss: Infeasibility) -> None:  # fmt: skip
    """Record the closest misses (module note). `days_hi`: the expected days at the largest size of the candidates
    the search timed there (`timed`); `days_at(sel)` works out others'; `memory(sel, dp, m_eff)` their bytes."""
    hbm = s.hw.hbm_bytes
    everything = np.arange(len(grid.idx))
    k_hi = grid.k(everything, grid.j_hi)
    dp = (grid.q * k_hi).astype(float)
    m, steady_lb = s.bound(lay, grid.idx, dp, nearest)
    m_eff = np.maximum(m, 1.0)  # the step model's micro-batches per step, as `dp_step` works them out

    def memory_of(sel: np.ndarray) -> np.ndarray:
        return memory(sel, dp[sel], m_eff[sel])

    ceiling = ceiling_table(s.run)(dp * s.group(lay, grid.idx)) * (1 + _BOUND_SLACK)
    days = _Days(days_hi, timed, steady_lb / ceiling * (1 - _BOUND_SLACK), days_at, grid.zeros)
    best = days.first_fit(everything[grid.k_cap_cluster <= grid.k_cap_batch], memory_of, hbm)
    by_cap = best is not None
    if best is None:
        best = days.first_fit(everything, memory_of, hbm)
    if best is None:
        mem = memory_of(everything)
        k = int(np.argmin(mem))
        miss.min_memory_gib = float(mem[k]) / GIB
        miss.min_memory_layout = (int(lay.tp[grid.idx[k]]), int(lay.pp[grid.idx[k]]))
        return
    miss.best_days = float(days.days[best])
    miss.best_days_gpus = int(k_hi[best] * grid.unit[best])
    miss.best_days_limit = "cluster size" if by_cap else "global batch"
    feeds = grid.k_cap_batch * grid.unit
    widest = _first_fit(np.lexsort((everything, -feeds)), memory_of, hbm)
    assert widest is not None  # `best` fits
    miss.batch_cap_gpus = int(feeds[widest])
