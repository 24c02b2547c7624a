"""Deadline mode of the training search: the smallest whole-system GPU count that meets the deadline.

For each layout and ZeRO stage, dp grows in steps of q (whole systems, a multiple of the part of ep dp must hold:
`grid.expert_dp_factor`); a vectorised bisection
over the multiples k finds the smallest that fits memory and meets the deadline (time falls as GPUs rise). With
the global batch honoured exactly, k must also divide N = sequences / (micro_batch x q), so the bisection runs
over the sorted divisors of N (`grid.DivisorTable`) instead of every whole number; with the nearest batch
(fallback when no layout can be exact) it runs over 1..k_hi as before. The smallest count wins, then the fastest.

Speed (issue 13): two exact lower bounds on each candidate's smallest multiple are worked out in closed form
(`_lowest_index`): the pipeline time alone, where each bisection starts, and the pipeline time over an upper
bound on the whole-run efficiency, which orders and prunes the candidates and marks the bisection midpoints
known to miss, so they are not evaluated. The bisection's path, and so every answer, is what it would be without
the second bound; only the search's work (model evaluations) falls. Memory is worked out only where the deadline
is met (`dp_step.step_memory`), and the closest miss checks it in order of days up to the first fit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from engine.performance.dp_step import StepMemory, StepTimes, step_memory, step_times
from engine.performance.step_time import LayoutCosts
from engine.search.bisection import bisect_sizes as _bisect
from engine.search.count_efficiency import ceiling_table
from engine.search.deadline_miss import record_misses
from engine.search.grid import BOUND_CHUNK, DivisorTable
from engine.search.package import Scored
from engine.search.results import Infeasibility, Plan, SearchStats

if TYPE_CHECKING:
    from engine.search.layouts import TrainingSearch

__all__ = ["smallest"]

SECONDS_PER_DAY = 86_400.0


class _Grid(NamedTuple):
    """Candidates with room to grow: layout index, ZeRO stage, dp step, GPUs per step, the multiples allowed
    (index into the divisor table, or the multiple itself when `table` is None), and the batch / cluster caps."""

    idx: np.ndarray
    zero: np.ndarray
    q: np.ndarray
    unit: np.ndarray
    rows: np.ndarray
    j_hi: np.ndarray
    k_cap_batch: np.ndarray
    k_cap_cluster: np.ndarray
    table: DivisorTable | None
    zeros: int  # ZeRO stages per layout: each layout's candidates are this many consecutive rows
    per_layout: _PerLayout | None  # the bound's per-layout figures (exact batch only)

    def k(self, sel: np.ndarray, j: np.ndarray) -> np.ndarray:
        """The multiple of q at index j (the divisor table's j-th divisor, or j itself)."""
        return j if self.table is None else self.table.at(self.rows[sel], j)


class _PerLayout(NamedTuple):
    """What `_lowest_index` and `_bound_order` read per layout (a layout's ZeRO-stage rows share them), gathered
    once with the grid: the divisor-table row, the largest multiple index, the GPUs per multiple, the pipeline's
    seconds per step at one multiple (N x (t_stage + p2p), N the multiples that keep the batch exact) and the
    bubble."""

    rows: np.ndarray
    j_hi: np.ndarray
    unit: np.ndarray
    n_per_micro_batch_s: np.ndarray
    bubble_s: np.ndarray


def _grid(s: TrainingSearch, lay: LayoutCosts, stats: SearchStats, nearest: bool, miss: Infeasibility) -> _Grid:
    """`_build_grid`, remembered with the layout costs: it depends on them, the system's GPUs per system, the
    cluster cap, the batch and the pins, never on the deadline or the token count, so a search sharing the costs
    (another system with the same hardware, the request planned again) reuses it. Its counts (candidates,
    rejections, whether no layout takes the batch exactly) are added to this search's as if it had been built."""
    pin = s.spec.parallelism
    key = ("deadline_grid", nearest, s.system.gpus_per_system, s.max_gpus, s.batch_sequences, pin.dp,
           tuple(s._zero_options()))  # fmt: skip
    cached = lay.derived.get(key)
    if cached is None:
        own_stats, own_miss = SearchStats(), Infeasibility()
        grid = _build_grid(s, lay, own_stats, nearest, own_miss)
        for array in (*grid[:-3], *(grid.per_layout or ())):
            array.setflags(write=False)
        cached = (grid, own_stats.candidates_evaluated, dict(own_stats.rejected_by_reason), own_miss.no_exact_batch)
        lay.derived[key] = cached
    grid, candidates, rejected, no_exact_batch = cached
    stats.candidates_evaluated = candidates
    for reason, count in rejected.items():
        stats.reject(reason, count)
    if not nearest:
        miss.no_exact_batch = no_exact_batch
    return grid


def _build_grid(s: TrainingSearch, lay: LayoutCosts, stats: SearchStats, nearest: bool, miss: Infeasibility) -> _Grid:
    """Each candidate's dp step and largest allowed multiple; candidates with no room at all are counted as
    rejected (under batch_not_exact, global_batch or cluster_cap) and dropped. None of it depends on the ZeRO
    stage, and all of it depends on a layout's (group, ep, micro_batch, pp) quad alone (`grid.LayoutKeys`), so it
    is worked out once per quad (a few hundred for thousands of layouts), then read per layout and expanded over
    the ZeRO stages; rejections count every layout of a quad."""
    zeros = np.array(s._zero_options(), dtype=np.int64)
    nz = len(zeros)
    stats.candidates_evaluated = len(lay.tp) * nz
    keys = s.layout_keys(lay)
    first, sizes = keys.quad_first, keys.quad_layouts
    group, ep, mb, need = keys.group[first], keys.ep[first], keys.micro_batch[first], keys.need_m[first]

    def layouts(quads: np.ndarray) -> int:
        return int(sizes[quads].sum())

    gps = s.system.gpus_per_system
    pin_dp = s.spec.parallelism.dp
    b = s.batch_sequences
    if pin_dp is not None:  # a pinned dp fixes the size: one evaluation per candidate, whole systems not enforced
        bad = pin_dp % ep != 0
        stats.reject("ep_not_dividing_dp", layouts(bad) * nz)
        q = np.full_like(group, pin_dp)
        n_seq = np.where(b % (pin_dp * mb) == 0, b // (pin_dp * mb), 0)
        k_cap_batch = np.where(pin_dp * mb * need <= b, 1, 0)
    else:  # dp granularity: whole systems, and a multiple of the layout's expert dp factor (grid.expert_dp_factor)
        bad = np.zeros(len(first), dtype=bool)
        q = np.lcm(gps // np.gcd(gps, group), ep)
        if not nearest:  # exact batch impossible on whole systems (e.g. 72-GPU racks, 2^k sequences): spare GPUs
            q = np.where(b % (mb * q) == 0, q, ep)
        n_seq = np.where(b % (mb * q) == 0, b // (mb * q), 0)
        k_cap_batch = np.floor(b / (mb * need * q)).astype(np.int64)
    unit = group * q
    k_cap_cluster = s.max_gpus // unit
    table = None
    rows = np.zeros(len(first), dtype=np.int64)
    if nearest:
        j_hi = np.minimum(k_cap_batch, k_cap_cluster) if pin_dp is None else np.ones_like(group)
    else:
        inexact = ~bad & (n_seq == 0)
        stats.reject("batch_not_exact", layouts(inexact) * nz)
        miss.no_exact_batch = bool(np.any(~bad)) and not np.any(~bad & ~inexact)
        bad |= inexact
        table = DivisorTable(n_seq if pin_dp is None else np.ones(1, dtype=np.int64))
        rows = table.rows(n_seq) if pin_dp is None else rows
        cap = np.minimum(k_cap_batch, k_cap_cluster) if pin_dp is None else np.ones_like(group)
        j_hi = table.largest_index_at_most(rows, cap)
        k_cap_batch = table.at(rows, table.largest_index_at_most(rows, k_cap_batch)) * (k_cap_batch >= 1)
        j_hi = np.where(bad, -1, j_hi)
    lowest = 1 if table is None else 0
    no_room = ~bad & (j_hi < lowest)
    by_batch = no_room & (k_cap_batch < 1)
    stats.reject("global_batch", layouts(by_batch) * nz)
    stats.reject("cluster_cap", layouts(no_room & ~by_batch) * nz)
    keep = np.nonzero((~bad & ~no_room)[keys.quad])[0]  # layouts, in grid order
    quad_kept = keys.quad[keep]
    of_kept = np.repeat(quad_kept, nz)  # each candidate's quad
    per_layout = None
    if table is not None:
        n_seq = table.values[rows[quad_kept]].astype(float)
        per_layout = _PerLayout(rows[quad_kept], j_hi[quad_kept], unit[quad_kept],
                                n_seq * keys.per_micro_batch_s[keep], keys.bubble_s[keep])  # fmt: skip
    return _Grid(np.repeat(keep, nz), np.tile(zeros, len(keep)), q[of_kept], unit[of_kept], rows[of_kept],
                 j_hi[of_kept], k_cap_batch[of_kept], k_cap_cluster[of_kept], table, nz, per_layout)  # fmt: skip


def _lowest_index(s: TrainingSearch, lay: LayoutCosts, grid: _Grid, limit: float, nearest: bool) -> np.ndarray:
    """Lower bounds on each candidate's smallest multiple index meeting the deadline, in closed form, as
    (pipeline bound, whole-run bound). With the exact batch, m = N / k micro-batches, so the days bound
    C (N a / k + b) / e <= limit gives k >= N a / (limit e / C - b), with a = t_stage + p2p, b the bubble (the
    pipeline time alone, `TrainingSearch.bound`) and C the days per second of step.

    The pipeline bound takes e = 1 and is where each candidate's bisection starts (as it always has: its path,
    and so its answer, stay the same). The whole-run bound takes e an upper bound on the whole-run efficiency at
    every count from there on (`WholeRunInputs.efficiency_ceiling`, read by systems from its table,
    `count_efficiency.ceiling_table`: the deadline is met on the whole run, whose days are the steady-state days /
    its efficiency), e at the pipeline bound's size; it is exact too (no smaller multiple can meet the deadline)
    and orders and prunes the candidates. (A second pass, e at this bound's size, ruled out 0.2 % more evaluations
    for a third of this function's time: dropped.) j_hi + 1 when even the largest multiple cannot meet it.
    (Nearest batch: no bound, 1.)
    """
    if grid.table is None or grid.per_layout is None or nearest:
        ones = np.ones(len(grid.idx), dtype=np.int64)
        return ones, ones
    # Nothing here depends on the ZeRO stage: worked out once per layout (`_PerLayout`), then repeated.
    table, (rows, j_hi, unit, n_a, b) = grid.table, grid.per_layout
    c = s.spec.tokens / (s.batch_sequences * s.work.shape.seq_len) / SECONDS_PER_DAY
    past_end = j_hi + 1

    def first_index(efficiency: np.ndarray | float) -> np.ndarray:
        room = limit * efficiency / c - b
        k_min = np.where(room > 0, n_a / np.maximum(room, 1e-300), np.inf)
        j = table.first_index_at_least(rows, np.minimum(k_min, 1e18) * (1 - 1e-12))
        return np.where(room > 0, j, past_end)

    def ceiling(j: np.ndarray) -> np.ndarray:  # the slack covers rounding in the efficiency's product
        return ceiling_table(s.run)(table.at(rows, np.clip(j, 0, np.maximum(j_hi, 0))) * unit) * (1 + 1e-9)

    pipeline = first_index(1.0)
    whole = np.maximum(pipeline, first_index(ceiling(pipeline)))
    return np.repeat(pipeline, grid.zeros), np.repeat(whole, grid.zeros)


def _bound_order(grid: _Grid, j_order: np.ndarray, gps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(whether each candidate can meet the deadline within its allowed sizes, the possible candidates in order of
    the fewest systems they can need (`j_order`'s size), stable, and that bound in that order).

    Speed (issue 13): all of it is the same for a layout's ZeRO-stage rows, which are consecutive in the grid, so
    it is worked out once per layout and the sort runs on the layouts, with 16-bit keys where the counts fit (numpy's
    stable sort of 16-bit keys is a radix sort: about 20 us for 3K layouts, against 200-600 us for the 12K
    candidates' 64-bit keys). A layout's rows are then listed together in grid order, which is exactly the order a
    stable sort of the candidates gives them (equal keys keep their index order)."""
    nz = grid.zeros
    one = slice(None, None, nz)
    j_hi, j, per = grid.j_hi[one], j_order[one], grid.per_layout
    possible = j <= j_hi
    if per is None:  # no divisor table: the multiple is the index itself
        systems_lb = -(-(np.minimum(j, j_hi) * grid.unit[one]) // gps)
    else:
        systems_lb = -(-(grid.table.at(per.rows, np.minimum(j, j_hi)) * per.unit) // gps)  # type: ignore[union-attr]
    layouts = np.flatnonzero(possible)
    keys = systems_lb[layouts]
    if len(keys) and keys.min() >= 0 and keys.max() < 2**16:
        keys = keys.astype(np.uint16)
    layouts = layouts[np.argsort(keys, kind="stable")]
    order = (layouts[:, None] * nz + np.arange(nz)).ravel()
    return np.repeat(possible, nz), order, np.repeat(systems_lb[layouts], nz)


class _Scorer:
    """The step model at a candidate's multiple index j: step times and expected days (`timed`), memory
    (`memory`), and both where they can decide (`evaluate`); counts the evaluations in `stats`."""

    def __init__(self, s: TrainingSearch, lay: LayoutCosts, grid: _Grid, nearest: bool, limit: float,
                 stats: SearchStats) -> None:  # fmt: skip
        self.s, self.lay, self.grid, self.nearest, self.limit, self.stats = s, lay, grid, nearest, limit, stats
        # Every `evaluate` call's (first row number, step times, memory of the checked rows, checked rows).
        self._chunks: list[tuple[int, StepTimes, StepMemory | None, np.ndarray]] = []
        self._rows = 0

    def timed(self, j: np.ndarray, sel: np.ndarray) -> tuple[StepTimes, np.ndarray, np.ndarray]:
        """(step times, dp, expected days) of candidates `sel` at multiple index j."""
        s, grid = self.s, self.grid
        dp = (grid.q[sel] * grid.k(sel, j)).astype(float)
        idx = grid.idx[sel]
        t = step_times(self.lay, idx, dp, grid.zero[sel], s.batch_sequences, s.work.shape.seq_len, s.hw, s.eff,
                       self.nearest)  # fmt: skip
        self.stats.model_evaluations += len(dp)
        return t, dp, s.days(t) / s.goodput(dp * s.group(self.lay, idx), t)

    def memory(self, sel: np.ndarray, dp: np.ndarray, m_eff: np.ndarray) -> np.ndarray:
        """Memory bytes per GPU of candidates `sel` at `dp` and `m_eff` micro-batches."""
        grid = self.grid
        return step_memory(self.lay, grid.idx[sel], dp, grid.zero[sel], m_eff, self.s.hw, self.s.eff).memory_bytes

    def evaluate(self, j: np.ndarray, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fits, expected days, where) at j; memory is worked out only where the deadline is met (about half the
        step model's work): elsewhere the candidate counts as not fitting. `where` numbers the evaluated rows, so
        the winner's figures are read back where they were worked out (`scored`)."""
        t, dp, days = self.timed(j, sel)
        fits = np.zeros(len(dp), dtype=bool)
        check = np.nonzero(days <= self.limit)[0]
        memory = None
        if len(check):
            grid = self.grid
            memory = step_memory(self.lay, grid.idx[sel[check]], dp[check], grid.zero[sel[check]], t.m_eff[check],
                                 self.s.hw, self.s.eff)  # fmt: skip
            fits[check] = memory.memory_bytes <= self.s.hw.hbm_bytes
        where = np.arange(self._rows, self._rows + len(dp))
        self._chunks.append((self._rows, t, memory, check))
        self._rows += len(dp)
        return fits, days, where

    def scored(self, where: int) -> Scored:
        """The step times and memory of evaluated row `where` (one that met the deadline, so its memory was
        checked), as `TrainingSearch.plan` packages them."""
        start, t, memory, check = next(c for c in reversed(self._chunks) if c[0] <= where)
        row = where - start
        assert memory is not None
        return t, row, memory, int(np.searchsorted(check, row))


class _Found:
    """Per candidate, what the branch and bound has found: scored at its largest size (`scored`: fits and expected
    days there), meets the deadline (`met`) at multiple index `hi` with expected days `days_met`, its figures there
    in evaluated row `where` (`_Scorer.scored`)."""

    def __init__(self, grid: _Grid) -> None:
        n = len(grid.idx)
        self.fits_hi, self.days_hi, self.where = np.zeros(n, dtype=bool), np.full(n, np.inf), np.full(n, -1)
        self.scored, self.met, self.hi = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool), grid.j_hi.copy()
        self.days_met = np.full(n, np.inf)  # expected days at `hi` of each candidate that meets the deadline


def smallest(
    s: TrainingSearch, lay: LayoutCosts, deadline_days: float, nearest: bool
) -> tuple[Plan | None, SearchStats, Infeasibility]:
    """The smallest whole-system GPU count whose fastest plan meets the deadline on these layouts.

    Branch and bound: candidates are taken in order of a lower bound on the systems they need
    (`_lowest_index`), in growing chunks; each is checked at its largest size, then bisected down to its
    smallest (`_score_chunk`); once the fewest systems found is below the next candidate's bound the rest cannot
    win or tie. The statistics (`_count`) and the winner (`_winner`) follow.
    """
    stats, miss = SearchStats(), Infeasibility()
    grid = _grid(s, lay, stats, nearest, miss)
    if len(grid.idx) == 0:
        return None, stats, miss
    limit = deadline_days * (1 + 1e-9)
    gps = s.system.gpus_per_system
    scorer = _Scorer(s, lay, grid, nearest, limit, stats)
    j_lb, j_order = _lowest_index(s, lay, grid, limit, nearest)
    possible, order, sorted_lb = _bound_order(grid, j_order, gps)
    found = _Found(grid)
    best, start, chunk = np.inf, 0, BOUND_CHUNK
    while start < len(order) and sorted_lb[start] <= best:
        end = int(np.searchsorted(sorted_lb, sorted_lb[min(start + chunk, len(order)) - 1], side="right"))
        take = order[start:end]
        start, chunk = end, chunk * 2
        _score_chunk(scorer, take, j_lb, j_order, found)
        done = take[found.met[take]]
        if len(done):
            best = min(best, float((-(-(grid.k(done, found.hi[done]) * grid.unit[done]) // gps)).min()))
    _count(stats, found, possible, limit)
    if not np.any(found.met):  # nothing meets it: the closest misses at every candidate's largest size
        record_misses(s, lay, grid, nearest, found.days_hi, found.scored,
                      lambda sel: scorer.timed(grid.j_hi[sel], sel)[2], scorer.memory, miss)  # fmt: skip
        return None, stats, miss
    return _winner(s, lay, grid, found, nearest, scorer), stats, miss


def _score_chunk(scorer: _Scorer, take: np.ndarray, j_lb: np.ndarray, j_order: np.ndarray, found: _Found) -> None:
    """Score candidates `take`: at the pipeline bound's size (unless the whole-run bound already rules it out)
    and at the largest size, in one evaluation. A candidate meeting the deadline at its bound is done (no smaller
    size can); one meeting it only at the largest is bisected in between (`_bisect`)."""
    grid, limit = scorer.grid, scorer.limit
    j0 = np.minimum(j_lb[take], grid.j_hi[take])
    if grid.table is None:
        j0 = np.maximum(j0, 1)
    check = j0 >= j_order[take]
    fits2, days2, where2 = scorer.evaluate(np.concatenate([j0[check], grid.j_hi[take]]),
                                           np.concatenate([take[check], take]))  # fmt: skip
    n_check = int(np.count_nonzero(check))
    met_at_bound = fits2[:n_check] & (days2[:n_check] <= limit)  # of the rows at the bound
    at_bound = np.zeros(len(take), dtype=bool)
    at_bound[check] = met_at_bound
    done = take[at_bound]
    # At the largest size, each candidate's (fits, days, evaluated row); one done at its bound keeps that row and
    # counts as fitting (the rows are this call's own arrays).
    fits_hi, days_hi, where_hi = fits2[n_check:], days2[n_check:], where2[n_check:]
    fits_hi[at_bound] = True
    where_hi[at_bound] = where2[:n_check][met_at_bound]
    found.fits_hi[take], found.days_hi[take], found.where[take] = fits_hi, days_hi, where_hi
    found.scored[take] = True
    found.days_met[done] = days2[:n_check][met_at_bound]
    found.hi[done] = j0[at_bound]
    found.met[done] = True
    sel = take[~at_bound & fits_hi & (days_hi <= limit)]
    if len(sel):
        lo = np.minimum(j_lb[sel], grid.j_hi[sel])
        where = found.where[sel]  # a copy (fancy indexing), updated in place to the bisection's sizes
        found.hi[sel], found.days_met[sel] = _bisect(scorer.evaluate, sel, lo, grid.j_hi[sel].copy(), j_order[sel],
                                                     limit, found.days_hi[sel].copy(), where)  # fmt: skip
        found.where[sel] = where
        found.met[sel] = True


def _count(stats: SearchStats, found: _Found, possible: np.ndarray, limit: float) -> None:
    """The search's statistics: candidates that meet the deadline at their largest size but do not fit (memory),
    that cannot meet it (deadline), and that the bound ruled out unscored (slower_bound)."""
    scored, met = found.scored, found.met
    too_big = scored & ~met & (found.days_hi <= limit)
    stats.reject("memory", np.count_nonzero(too_big))
    stats.reject("deadline", np.count_nonzero(~possible | (scored & ~met & ~too_big)))
    stats.reject("slower_bound", np.count_nonzero(possible & ~scored))
    stats.feasible = int(np.count_nonzero(met))


def _winner(s: TrainingSearch, lay: LayoutCosts, grid: _Grid, found: _Found, nearest: bool, scorer: _Scorer) -> Plan:
    """Fewest systems (a job may leave spare GPUs in its last system when the exact batch needs it), then the
    fewest GPUs, then the fastest (the expected days each was found to meet the deadline with). The winner is
    packaged from the figures its evaluation at that size worked out (`_Scorer.scored`): the same figures as
    evaluating it again alone, as the GPU-count search's plans are packaged (`fixed.py`)."""
    sel = np.flatnonzero(found.met)
    gpus = grid.k(sel, found.hi[sel]) * grid.unit[sel]
    systems = -(-gpus // s.system.gpus_per_system)
    fewest = (systems == systems.min()) & (gpus == gpus[systems == systems.min()].min())
    finalists = sel[fewest]
    k = int(np.argmin(found.days_met[finalists]))
    winner = finalists[k : k + 1]
    dp_all = np.zeros(len(grid.idx))  # the winner's dp alone: packaging reads no other row
    dp_all[winner] = (grid.q[winner] * grid.k(winner, found.hi[winner])).astype(float)
    scored = scorer.scored(int(found.where[winner[0]]))
    return s.plan(lay, grid.idx, grid.zero, dp_all, int(winner[0]), nearest, scored)
