"""GPU-count mode of the training search: the fastest feasible plan on exactly n GPUs, for several n at once.

Why several at once: the frontier asks for the fastest plan at eight GPU counts; numpy's per-call cost dominates
on the search's small batches, so the counts share every pass (filters, bound, scoring) instead of repeating them.
Each count's answer is exactly what a search of that count alone returns (same candidates, same order, same
ties), and the work per count is a few arrays, not a loop over layouts.

Per count: dp = n / (tp x cp x pp) for each layout; layouts whose dp is not whole, does not take ep (a multiple of
ep, or with folded experts of ep / gcd(ep, tp x cp): `grid.expert_dp_factor`), or (with the
exact batch) does not split the global batch are ruled out per layout, then expanded over the ZeRO stages. Branch
and bound: candidates are timed in order of a lower bound on their days (`TrainingSearch.bound`, the pipeline
time alone) until the count's best feasible days is below the next bound, and checked for memory in order of
their days until the best is found; the rest cannot win or tie.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from engine.performance.dp_step import StepMemory, StepTimes, step_memory, step_times
from engine.performance.memory import GIB
from engine.performance.step_time import LayoutCosts
from engine.search.grid import FRONTIER_TIME_CHUNK, MEMORY_CHUNK, TIME_CHUNK, LayoutKeys
from engine.search.package import Scored
from engine.search.results import Infeasibility, Plan, SearchStats

if TYPE_CHECKING:
    from engine.search.layouts import TrainingSearch

__all__ = ["fastest_many"]

Outcome = tuple[Plan | None, SearchStats, Infeasibility]
SECONDS_PER_DAY = 86_400.0


def _filter(s: TrainingSearch, lay: LayoutCosts, counts: np.ndarray, nearest: bool, stats, misses, nz: int,
            fold: bool = False):  # fmt: skip
    """(count index, layout index, dp, lower-bound days, whether each count takes the nearest batch) of every layout
    left per count after the rules.

    The rules (dp whole, pinned, a multiple of ep, splitting the batch) depend on a layout's (group, ep,
    micro_batch) triple alone (`grid.LayoutKeys`), so they run per (count, triple) and are then read per layout;
    a layout is counted under the first rule that rules it out. With `fold` (exact batch), a count on which no
    layout takes the batch exactly is filtered as a nearest-batch search of it would be: the batch rule is not
    applied to it (the rules before it are the same), and its micro-batches are the nearest whole number."""
    keys = s.layout_keys(lay)
    group, ep, mb = keys.triple_group[None, :], keys.triple_ep[None, :], keys.triple_micro_batch[None, :]
    column = counts[:, None]
    divides = column % group == 0
    dp = np.where(divides, column // group, 0)
    alive = np.ones_like(divides)

    def rule(ok: np.ndarray, reason: str) -> None:
        nonlocal alive
        rejected = (alive & ~ok) @ keys.triple_layouts
        for c, k in enumerate(rejected.tolist()):
            stats[c].reject(reason, k * nz)
        alive = alive & ok

    rule(divides, "gpus_not_divisible")
    if s.spec.parallelism.dp is not None:
        rule(dp == s.spec.parallelism.dp, "pinned_dp")
    rule(dp % ep == 0, "ep_not_dividing_dp")
    near = np.full(len(counts), nearest)
    if not nearest:
        exact = s.batch_sequences % np.maximum(dp * mb, 1) == 0
        inexact = alive.any(axis=1) & ~(alive & exact).any(axis=1)
        for c, flag in enumerate(inexact.tolist()):
            misses[c].no_exact_batch = flag
        if fold and inexact.any():
            near = inexact
            exact = exact | inexact[:, None]
        rule(exact, "batch_not_exact")
    cells = _cells(s, keys, dp, near)
    alive = _fill_pipeline(s, lay, keys, alive, cells[0], stats, misses, nz)
    # (count, layout) pairs alive, count-major as np.nonzero lists them, from the flat mask (a 2-D nonzero walks
    # an iterator per element: about three times the work); each layout's row of counts is copied whole from
    # its quad's (a gather along the counts' axis copies them one by one)
    n_layouts = len(keys.quad)
    flat = np.flatnonzero(np.ascontiguousarray(alive.T).take(keys.quad, axis=0).T)
    ci = flat // n_layouts
    li = flat - ci * n_layouts
    dp_pair, days_lb = _pair_bounds(keys, cells, ci, li)
    return ci, li, dp_pair, days_lb, near


def _cells(s: TrainingSearch, keys: LayoutKeys, dp_triples: np.ndarray, near: np.ndarray):
    """(micro-batches per step, dp, days per second of pipeline) per (count, triple): what `TrainingSearch.bound`
    works out per candidate that depends on its count and (group, ep, micro_batch) triple alone, on `dp_triples`
    (count x triple dp, whole where the count divides); `near` says per count whether its batch is the nearest.
    Each figure is `bound`'s expression on the same values (dp = count // group is a whole number, exact as a
    float), so every bound read from them is bit for bit the same."""
    dp_f = np.maximum(dp_triples, 1).astype(float)  # cells the count does not divide are never read
    mb = keys.triple_micro_batch.astype(float)[None, :]
    ratio = s.batch_sequences / (dp_f * mb)
    if near.all():
        m = np.maximum(np.rint(ratio), 1.0)
    elif near.any():  # a folded count's row: the nearest whole number of micro-batches (`_filter`)
        m = np.where(near[:, None], np.maximum(np.rint(ratio), 1.0), np.floor(ratio))
    else:
        m = np.floor(ratio)
    return m, dp_f, s.spec.tokens / np.maximum(dp_f * mb * m * s.work.shape.seq_len, 1.0)


def _fill_pipeline(s, lay, keys: LayoutKeys, alive: np.ndarray, m: np.ndarray, stats, misses, nz: int):
    """The last rule, per (count, quad): enough micro-batches per step to fill the pipeline (m >= need_m, which
    depends on pp alone, so on a layout's (group, ep, micro_batch, pp) quad); its rejections are counted under
    global_batch, and a count it empties records the most GPUs the batch can feed (`Infeasibility.batch_cap_gpus`).
    Returns the (count, quad) mask of what is left.

    Why per quad: before it, the rule was checked per (count, layout) pair after every pair's bound was worked out,
    and it rules out about half the pairs of an auto plan's frontiers."""
    quad_triple = keys.triple.take(keys.quad_first)
    alive_q = alive[:, quad_triple]
    fill = m[:, quad_triple] >= keys.need_m.take(keys.quad_first)[None, :]
    rejected = (alive_q & ~fill) @ keys.quad_layouts
    if not rejected.any():
        return alive_q
    for c, k in enumerate(rejected.tolist()):
        stats[c].reject("global_batch", k * nz)
    left = alive_q & fill
    for c in np.flatnonzero(alive_q.any(axis=1) & ~left.any(axis=1)).tolist():
        misses[c].batch_cap_gpus = s._batch_cap_gpus(lay, np.flatnonzero(alive_q[c].take(keys.quad)))
    return left


def _pair_bounds(keys: LayoutKeys, cells, ci: np.ndarray, li: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dp, the lower bound on the ideal days) of each (count, layout) pair: the pipeline time alone,
    `TrainingSearch.bound`, read from its (count, triple) cell (`_cells`).

    Why: a frontier's eight counts give thousands of pairs but share a few hundred (count, triple) cells, and the
    bound is most of the per-pair work of `_filter`."""
    m, dp_f, per_pipeline_s = cells
    cell = ci * m.shape[1] + keys.triple.take(li)
    pipeline = np.maximum(m.ravel().take(cell), 1.0) * keys.per_micro_batch_s.take(li) + keys.bubble_s.take(li)
    return dp_f.ravel().take(cell), per_pipeline_s.ravel().take(cell) * pipeline / SECONDS_PER_DAY


def fastest_many(
    s: TrainingSearch, lay: LayoutCosts, gpu_counts: list[int], nearest: bool, fold_nearest: bool = False
) -> list[Outcome]:
    """The fastest feasible plan on each GPU count (None where nothing fits), with its statistics and misses.

    `fold_nearest` (exact batch only): a count no layout can take the batch on exactly is searched with the nearest
    batch in the same pass (`_filter`'s `fold`), instead of a second call: the same plans as that call (its
    candidates, in its order, on the same rules), at one pass's numpy cost instead of two. Its statistics are the
    nearest search's alone, and may count candidates timed or checked for memory differently, as the shared pass's
    chunks grow with every count's work: only for callers that read the plans alone (the frontier). For them the
    first chunk timed per count is `FRONTIER_TIME_CHUNK`: no reported figure counts the candidates timed, and the
    branch and bound finds the same winners whatever the chunks (every candidate that could win or tie is timed)."""
    counts = np.asarray(gpu_counts, dtype=np.int64)
    zeros = np.array(s._zero_options(), dtype=np.int64)
    nz = len(zeros)
    stats = [SearchStats(candidates_evaluated=len(lay.tp) * nz) for _ in counts]
    misses = [Infeasibility() for _ in counts]
    fold = fold_nearest and not nearest
    ci, li, dp, days_lb, near_counts = _filter(s, lay, counts, nearest, stats, misses, nz, fold)
    near: bool | np.ndarray = nearest
    if fold and near_counts.any():
        near = near_counts.take(ci)  # per pair
    pairs = _Pairs(ci, li, dp, zeros, near)
    ci = np.repeat(ci, nz)
    chunk = FRONTIER_TIME_CHUNK if fold_nearest else TIME_CHUNK
    days, mem, scored = _score_in_bound_order(s, lay, pairs, ci, days_lb, stats, len(counts), chunk)
    done = np.isfinite(mem)
    fits = done & (mem <= s.hw.hbm_bytes)
    bounds = np.searchsorted(ci, np.arange(len(counts) + 1)).tolist()
    # Per count: candidates checked for memory and those that fit (fits is a subset of done)
    n_done = np.bincount(ci[done], minlength=len(counts)).tolist()
    n_fits = np.bincount(ci[fits], minlength=len(counts)).tolist()
    fit_days = np.where(fits, days, np.inf)  # each count's winner: its lowest, the first of equals
    out: list[Outcome] = []
    for c in range(len(counts)):
        lo, hi = bounds[c], bounds[c + 1]  # this count's candidates, in the order a lone search would see them
        st, miss = stats[c], misses[c]
        st.reject("memory", n_done[c] - n_fits[c])
        st.reject("slower_bound", hi - lo - n_done[c])
        st.feasible = n_fits[c]
        if not n_fits[c]:
            if hi > lo:  # every candidate was scored (the bound prunes only once one fits)
                k = int(lo + np.argmin(mem[lo:hi]))
                miss.min_memory_gib = float(mem[k]) / GIB
                layout = int(li[k // nz])
                miss.min_memory_layout = (int(lay.tp[layout]), int(lay.pp[layout]))
            plan = None
        else:
            best = lo + int(fit_days[lo:hi].argmin())
            idx, zero, dp_best, near_best = pairs.rows(np.array([best]))
            row_near = bool(near_best[0]) if isinstance(near_best, np.ndarray) else near_best
            plan = s.plan(lay, idx, zero, dp_best, 0, row_near, scored(best))
        out.append((plan, st, miss))
    return out


def _lowest(pending: np.ndarray, ci: np.ndarray, key: np.ndarray, limit: int, n_counts: int) -> np.ndarray:
    """Of the `pending` candidates (ascending, so grouped by count), each count's `limit` lowest by `key`."""
    cuts = np.searchsorted(ci.take(pending), np.arange(n_counts + 1))
    if (cuts[1:] - cuts[:-1] <= limit).all():
        return pending  # every count's pending fit in the chunk: all of them, in the same order
    parts = []
    for start, end in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
        part = pending[start:end]
        if len(part) > limit:
            part = part[np.argpartition(key[part], limit - 1)[:limit]]
        parts.append(part)
    return np.concatenate(parts) if parts else pending


class _Pairs(NamedTuple):
    """The (count, layout) pairs left by `_filter` (count index, layout, dp, nearest batch: a bool, or one per pair)
    and the ZeRO stages each is searched at: candidate c is pair c // nz at stage c % nz.

    Why not one row per candidate: the search times and checks a few of them; expanding every pair over its stages
    (four arrays of thousands) cost more than reading the few it scores (`rows`)."""

    ci: np.ndarray
    li: np.ndarray
    dp: np.ndarray
    zeros: np.ndarray
    near: bool | np.ndarray

    def rows(self, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool | np.ndarray]:
        """(layout, ZeRO stage, dp, nearest batch) of candidates `cand`."""
        pair, stage = np.divmod(cand, len(self.zeros))
        near = self.near.take(pair) if isinstance(self.near, np.ndarray) else self.near
        return self.li.take(pair), self.zeros.take(stage), self.dp.take(pair), near


def _score_in_bound_order(s, lay, cands: _Pairs, ci, pair_lb, stats, n_counts, time_chunk=TIME_CHUNK):
    """Branch and bound over all counts at once, in two tiers. Step times (the exact days) are worked out for
    each count's `time_chunk` lowest pipeline bounds (then doubling), then for every other candidate whose bound
    does not exceed its count's best feasible days; memory (`dp_step.step_memory`, most of the step model's work
    per candidate) only for timed candidates whose exact days do not exceed it, lowest days first (MEMORY_CHUNK
    per count, then doubling); a count still without a feasible plan times no more until its timed candidates
    are checked. Every candidate whose days could win or tie is checked, so each count's winner is the one a
    full scoring finds; most of the rest are never checked for memory. Each count's candidates are one
    contiguous slice (`ci` is sorted). Returns (days, memory bytes (inf where not checked), scored) with
    `scored(i)` where checked candidate i's figures are (`package.Scored`).

    `cands` are the (count, layout) pairs, each searched at `nz` ZeRO stages, consecutive candidates; `ci` is each
    candidate's count index; `pair_lb` is each pair's bound, the same for its stages. Speed (issue 13): the bound
    tier runs over the pairs (a quarter of the candidates) and times a pair's stages together; the memory tier,
    over the few timed candidates, stays per candidate. The same candidates can win or tie, so the same winners."""
    nz = len(cands.zeros)
    pair_ci = cands.ci
    stages = np.arange(nz)
    n = len(ci)
    days, mem, m_eff = np.full(n, np.inf), np.full(n, np.inf), np.zeros(n)
    t_chunk, t_row, m_chunk, m_row = (np.zeros(n, dtype=np.int64) for _ in range(4))  # where each was scored
    time_chunks: list[StepTimes] = []
    memory_chunks: list[StepMemory] = []
    best = np.full(n_counts, np.inf)
    limit, memory_limit = max(1, time_chunk // nz), MEMORY_CHUNK  # pairs (of nz candidates), candidates
    seq = s.work.shape.seq_len
    unchecked = np.zeros(0, dtype=np.int64)  # timed, memory not yet checked (ascending)
    # The bounds of the pairs not yet timed (NaN once timed: never <= anything), so one comparison per pass
    # finds those open.
    untimed_lb = pair_lb.copy()
    while True:
        waiting = unchecked[days[unchecked] <= best[ci[unchecked]]]
        hold = ~np.isfinite(best) & (np.bincount(ci[waiting], minlength=n_counts) > 0)
        open_ = untimed_lb <= best.take(pair_ci)
        pending = np.flatnonzero(open_ & ~hold.take(pair_ci) if hold.any() else open_)
        pairs = _lowest(pending, pair_ci, pair_lb, limit, n_counts)
        take = (pairs[:, None] * nz + stages).ravel()
        if len(take):
            idx, zero, dp, near = cands.rows(take)
            t = step_times(lay, idx, dp, zero, s.batch_sequences, seq, s.hw, s.eff, near)
            days[take], m_eff[take] = s.days(t), t.m_eff
            untimed_lb[pairs] = np.nan
            t_chunk[take], t_row[take] = len(time_chunks), np.arange(len(take))
            time_chunks.append(t)
            for k, count in enumerate(np.bincount(ci[take], minlength=n_counts).tolist()):
                stats[k].model_evaluations += count
            limit *= 2
            unchecked = np.sort(np.concatenate([unchecked, take]))
            waiting = unchecked[days[unchecked] <= best[ci[unchecked]]]
        check = _lowest(waiting, ci, days, memory_limit, n_counts)
        if len(check) == 0 and len(take) == 0:
            break
        if len(check):
            idx, zero, dp, _near = cands.rows(check)
            memory = step_memory(lay, idx, dp, zero, m_eff[check], s.hw, s.eff)
            mem[check] = memory.memory_bytes
            m_chunk[check], m_row[check] = len(memory_chunks), np.arange(len(check))
            memory_chunks.append(memory)
            fit = memory.memory_bytes <= s.hw.hbm_bytes
            np.minimum.at(best, ci[check][fit], days[check][fit])
            memory_limit *= 2
            unchecked = unchecked[~np.isfinite(mem[unchecked])]

    def scored(i: int) -> Scored:
        return time_chunks[int(t_chunk[i])], int(t_row[i]), memory_chunks[int(m_chunk[i])], int(m_row[i])

    return days, mem, scored
