"""The layout grid of the training search, built as numpy arrays: every (tp, pp, micro_batch, interleave,
recompute, ep, cp, stage split) a request allows, and the divisor tables that keep the global batch exact.

Why arrays and not nested loops: the grid grew with context parallelism and uneven stage splits to tens of
thousands of layouts per system; building it with a Cartesian product over arrays and boolean masks keeps it
at numpy speed (`make bench`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from engine.performance.stages import SPLIT_DISCOUNTS, pinned_split, stage_positions, stage_split
from engine.performance.step_time import LayoutCosts

__all__ = [
    "BOUND_CHUNK",
    "CP_OPTIONS",
    "FRONTIER_TIME_CHUNK",
    "INTERLEAVE_OPTIONS",
    "MEMORY_CHUNK",
    "MICRO_BATCH_OPTIONS",
    "MISS_CHUNK",
    "PP_POWERS",
    "TIME_CHUNK",
    "DivisorTable",
    "GridOptions",
    "LayoutKeys",
    "expert_dp_factor",
    "layout_grid",
    "layout_keys",
]

MICRO_BATCH_OPTIONS = (1, 2, 4, 8)
INTERLEAVE_OPTIONS = (1, 2, 3, 4)
# Context-parallel degrees searched (Megatron-Core CP is used at 2-32 in published runs).
CP_OPTIONS = (1, 2, 4, 8, 16, 32)
# Pipeline degrees searched besides the divisors of the layer count (uneven stages make these possible).
PP_POWERS = (1, 2, 4, 8, 16, 32, 64)
# First chunk of candidates scored in lower-bound order (then doubling); a speed knob, not a model constant.
BOUND_CHUNK = 256
# GPU-count mode (`fixed.py`): first chunk of candidates timed per count, lowest pipeline bound first, and of timed
# candidates checked for memory, lowest days first (each then doubling); speed knobs too.
TIME_CHUNK = 64
MEMORY_CHUNK = 16
# The frontier's first chunk (`fixed.fastest_many` with `fold_nearest`): its statistics are not reported, so the
# chunk is sized for speed alone. Measured on the auto 70B plan's eight frontiers: 64 -> 256 pairs' candidates
# per count, about 3.4 -> 2 passes and 30 -> 27 ms (fewer numpy calls outweigh the extra rows timed).
FRONTIER_TIME_CHUNK = 256
# Deadline mode's closest miss: first chunk of candidates checked for memory in order (then doubling).
MISS_CHUNK = 64
# Most keys a divisor table lists its answers for (`DivisorTable._count_below`): 2 x 512 kB of int64.
DENSE_KEYS_MAX = 1 << 16


@dataclass(frozen=True)
class GridOptions:
    """The option lists of each degree, after pins (a pinned degree is a one-element list)."""

    tps: tuple[int, ...]
    pps: tuple[int, ...]
    mbs: tuple[int, ...]
    rcs: tuple[int, ...]
    eps: tuple[int, ...]
    cps: tuple[int, ...]
    interleave: int | None  # pinned virtual stages, or None (searched)
    first_layers: int | None  # pinned end stages
    last_layers: int | None
    # Drop cp > 1 with micro_batch > 1: (cp, mb) gives each GPU the same tokens, memory, collectives and GPU
    # counts as (cp / 2, mb / 2) with twice the dp, plus ring-attention transfers, so it never wins. Only
    # valid when neither is pinned.
    prune_cp_micro_batch: bool = True
    # Layers whose activations are kept in host memory (0: none). Megatron-Core's layer-level activation offload
    # works only without pipelining and without recompute, so other counts pair with pp = 1, recompute none.
    act_offloads: tuple[int, ...] = (0,)
    # 1: the experts are folded over the tensor-parallel ranks (expert tensor parallelism 1, Megatron-Core's MoE
    # parallel folding); 0: split by them (expert tensor parallelism tp). Folding pairs only with tp > 1 and
    # ep > 1, where it differs from the split layout.
    folds: tuple[int, ...] = (0,)
    fold_only: bool = False  # expert tensor parallelism pinned to 1: no split layout where tp > 1
    # 1: the expert all-to-alls overlap the other micro-batch's computation (Megatron-Core's EP overlap, the
    # combined 1F1B schedule). It needs expert parallelism, no full recompute, no activation offload, and
    # interleaving when pipelined (Megatron-Core's TransformerConfig checks).
    ep_overlaps: tuple[int, ...] = (0,)


def _product(*options: list[int]) -> list[np.ndarray]:
    """Every combination of the options, one flat int64 array per option."""
    grids = np.meshgrid(*[np.asarray(o, dtype=np.int64) for o in options], indexing="ij")
    return [g.ravel() for g in grids]


def layout_grid(layers: int, opt: GridOptions) -> dict[str, np.ndarray]:
    """`_layout_grid`, remembered: an auto plan asks for the same grid for every system with the same NVLink
    domain (the options depend on the model, the request and the TP limit only), and a re-planned request asks
    again. The arrays are shared read-only; the dict is the caller's."""
    return dict(zip(_GRID_KEYS, _layout_grid(layers, opt), strict=True))


_GRID_KEYS = ("tp", "pp", "micro_batch", "interleave", "recompute", "ep", "cp", "first", "last", "act_offload", "fold",
              "ep_overlap")  # fmt: skip


@lru_cache(maxsize=64)  # a grid is a few hundred kB of integers
def _layout_grid(layers: int, opt: GridOptions) -> tuple[np.ndarray, ...]:
    """Flat arrays (tp, pp, micro_batch, interleave, recompute, ep, cp, first, last, act_offload, fold, ep_overlap)
    of every valid layout.

    Stage splits: the pinned one, else the balanced split and Megatron's embedding/loss-aware split
    (`stages.SPLIT_DISCOUNTS`), the second dropped where it equals the first. Every stage needs at least one
    layer, and at least `interleave` layers (virtual stages hold whole layers; the end stages count the embedding
    or the loss as one); interleaving needs pp > 1.
    Context parallelism pairs only with one sequence per micro-batch (`GridOptions.prune_cp_micro_batch`).
    Activation offload (`GridOptions.act_offloads`) pairs only with pp = 1 and no recompute. Folded experts
    (`GridOptions.folds`) pair only with tp > 1 and ep > 1. EP overlap (`GridOptions.ep_overlaps`) pairs only with
    ep > 1, recompute other than full, no activation offload, and interleaving where pp > 1.
    """
    pps = np.asarray(opt.pps, dtype=np.int64)
    if opt.first_layers is not None or opt.last_layers is not None:
        pairs = [pinned_split(layers, int(p), opt.first_layers, opt.last_layers) for p in pps]
        split_pp = pps
        first = np.array([f for f, _ in pairs], dtype=np.int64)
        last = np.array([la for _, la in pairs], dtype=np.int64)
    else:
        splits = [stage_split(layers, pps, d_first, d_last) for d_first, d_last in SPLIT_DISCOUNTS]
        split_pp = np.concatenate([pps for _ in splits])
        first = np.concatenate([f for f, _ in splits])
        last = np.concatenate([la for _, la in splits])
        keep = np.ones(len(split_pp), dtype=bool)
        for k in range(1, len(splits)):  # drop a split equal to the balanced one
            sl = slice(k * len(pps), (k + 1) * len(pps))
            keep[sl] = (first[sl] != splits[0][0]) | (last[sl] != splits[0][1])
        split_pp, first, last = split_pp[keep], first[keep], last[keep]
    counts, _index, _emb, _head, valid = stage_positions(layers, split_pp, first, last)
    # Virtual stages hold whole layers; the first and last stages may give one of theirs to the embedding or the
    # loss alone (Megatron-Core's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split:
    # 126 layers + 2 on PP16 x VP8), so they count one more
    ends = np.array([1, 0, 0, 1]) * (split_pp[:, None] > 1)
    fewest = np.where(counts > 0, counts + ends, layers).min(axis=1)
    split_pp, first, last, fewest = split_pp[valid], first[valid], last[valid], fewest[valid]
    vs = [opt.interleave] if opt.interleave is not None else list(INTERLEAVE_OPTIONS)
    s_i, v, tp, mb, rc, ep, cp, ao, fold, epo = _product(
        list(range(len(split_pp))),
        vs,
        opt.tps,
        opt.mbs,
        opt.rcs,
        opt.eps,
        opt.cps,
        opt.act_offloads,
        opt.folds,
        opt.ep_overlaps,
    )
    pp = split_pp[s_i]
    ok = (v <= fewest[s_i]) & ((v == 1) | (pp > 1)) & ((ao == 0) | ((pp == 1) & (rc == 0)))
    ok &= (fold == 0) | ((tp > 1) & (ep > 1))
    ok &= (epo == 0) | ((ep > 1) & (rc != 2) & (ao == 0) & ((pp == 1) | (v > 1)))
    if opt.fold_only:  # etp 1 pinned: split experts only where tp is 1 (the same thing)
        ok &= (fold == 1) | (tp == 1)
    else:  # searched folding spans the tensor-parallel ranks at least (ep >= tp), as the published recipes do:
        ok &= (fold == 0) | (ep >= tp)  # fewer expert ranks than tp would copy each expert over the TP group
    if opt.prune_cp_micro_batch:
        ok &= (cp == 1) | (mb == 1)
    out = (tp[ok], pp[ok], mb[ok], v[ok], rc[ok], ep[ok], cp[ok], first[s_i][ok], last[s_i][ok], ao[ok], fold[ok],
           epo[ok])  # fmt: skip
    for array in out:
        array.setflags(write=False)
    return out


class LayoutKeys(NamedTuple):
    """Per-layout figures of one grid that the GPU-count and deadline queries filter and bound on, worked out
    once per grid: the queries then gather them per candidate instead of recomputing them each time."""

    group: np.ndarray  # GPUs per data-parallel rank, tp x cp x pp (int)
    ep: np.ndarray  # the part of the expert-parallel degree dp must hold (int): ep, or ep / gcd(ep, tp x cp) folded
    micro_batch: np.ndarray  # sequences per micro-batch (int)
    micro_batch_f: np.ndarray  # the same as floats, as the step model reads it
    need_m: np.ndarray  # fewest micro-batches per step that fill the pipeline
    per_micro_batch_s: np.ndarray  # t_stage + p2p: pipeline time per micro-batch
    bubble_s: np.ndarray  # (pp - 1) / interleave x t_body
    # The distinct (group, ep, micro_batch) triples: whether a GPU count can take a layout (dp whole, a multiple
    # of ep, splitting the batch) depends on these alone, so the rules run once per triple, not per layout.
    triple: np.ndarray  # each layout's triple
    triple_group: np.ndarray
    triple_ep: np.ndarray
    triple_micro_batch: np.ndarray
    triple_layouts: np.ndarray  # layouts per triple
    # The distinct (group, ep, micro_batch, pp) quads: a layout's whole-system dp step and batch and cluster caps
    # in deadline mode depend on these alone (pp through need_m), so they are worked out once per quad.
    quad: np.ndarray  # each layout's quad
    quad_first: np.ndarray  # a layout of each quad
    quad_layouts: np.ndarray  # layouts per quad


def layout_keys(lay: LayoutCosts, group: np.ndarray, min_m_per_stage: float) -> LayoutKeys:
    """The grid's `LayoutKeys` (`group` = tp x cp x pp as integers, as the search caches it)."""
    assert lay.ep is not None
    ep, mb = expert_dp_factor(lay), lay.micro_batch.astype(np.int64)
    code = (group * (int(ep.max(initial=1)) + 1) + ep) * (int(mb.max(initial=1)) + 1) + mb
    _codes, first, triple, sizes = np.unique(code, return_index=True, return_inverse=True, return_counts=True)
    pp = lay.pp.astype(np.int64)
    quad_code = triple.ravel() * (int(pp.max(initial=1)) + 1) + pp
    _q, quad_first, quad, quad_sizes = np.unique(quad_code, return_index=True, return_inverse=True, return_counts=True)
    return LayoutKeys(
        group=group,
        ep=ep,
        micro_batch=mb,
        micro_batch_f=lay.micro_batch,
        need_m=np.where(lay.pp > 1, min_m_per_stage * lay.pp, 1.0),
        per_micro_batch_s=lay.stage_time_s + lay.p2p_time_s,
        bubble_s=(lay.pp - 1.0) / lay.interleave * lay.body_stage_time_s,
        triple=triple.ravel(),
        triple_group=group[first],
        triple_ep=ep[first],
        triple_micro_batch=mb[first],
        triple_layouts=sizes,
        quad=quad.ravel(),
        quad_first=quad_first,
        quad_layouts=quad_sizes,
    )


def expert_dp_factor(lay: LayoutCosts) -> np.ndarray:
    """The part of each layout's expert-parallel degree the data-parallel degree must be a multiple of. Split
    experts (expert tensor parallelism tp) carve their ep groups out of dp: ep. Folded experts (etp 1) carve them
    out of the tp x cp x dp ranks of a pipeline stage, so dp needs only ep / gcd(ep, tp x cp) (Megatron-Core: ep x
    etp x expert dp = tp x cp x dp)."""
    assert lay.ep is not None
    ep = lay.ep.astype(np.int64)
    if lay.etp is None:
        return ep
    tp = lay.tp.astype(np.int64)
    cp = lay.cp.astype(np.int64) if lay.cp is not None else np.ones_like(tp)
    folded = lay.etp.astype(np.int64) < tp
    return np.where(folded, ep // np.gcd(ep, tp * cp), ep)


class DivisorTable:
    """Sorted divisors of a few whole numbers, padded into one array so candidates look theirs up vectorised.

    The global batch is exact when dp x micro_batch divides it: with dp = q x k (q the whole-system step), k
    must divide N = sequences / (micro_batch x q). Candidates share few distinct N, so the divisors are listed
    once per N (trial division up to sqrt(N)) and looked up by row.
    """

    def __init__(self, values: np.ndarray) -> None:
        self.values = np.unique(values[values > 0])
        lists = [_divisors(int(n)) for n in self.values]
        width = max((len(d) for d in lists), default=1)
        self.table = np.full((max(len(lists), 1), width), np.iinfo(np.int64).max, dtype=np.int64)
        for i, d in enumerate(lists):
            self.table[i, : len(d)] = d
        # Every row in one sorted array, so a lookup is one searchsorted over all candidates: row r's divisors
        # shifted by r x span, its padding at the row's end (span - 1 exceeds every divisor).
        self._width = width
        self._table_flat = self.table.ravel()
        self._span = int(self.values.max()) + 2 if len(self.values) else 2
        shifted = np.where(self.table == np.iinfo(np.int64).max, self._span - 1, self.table)
        self._flat = (shifted + np.arange(len(self.table), dtype=np.int64)[:, None] * self._span).ravel()
        # Speed: a search costs about a hundred instructions per candidate, so when the table spans few whole
        # numbers (sequences per step: 512 for Llama 3 70B) the answer to every possible key is listed once, by
        # the same search, and looked up (`_count_below`): the same counts, exactly.
        self._dense: dict[str, np.ndarray] = {}
        every = len(self.table) * self._span
        if every <= DENSE_KEYS_MAX:
            keys = np.arange(every, dtype=np.int64)
            start = keys // self._span * self._width
            for side in ("left", "right"):
                self._dense[side] = np.searchsorted(self._flat, keys, side=side) - start  # type: ignore[call-overload]

    def rows(self, values: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.values, values).clip(0, max(len(self.values) - 1, 0))

    def _count_below(self, rows: np.ndarray, whole: np.ndarray, side: str) -> np.ndarray:
        """Per candidate, how many of its row's entries are < `whole` (side left) or <= it (right)."""
        key = np.minimum(np.maximum(whole, 0), self._span - 1).astype(np.int64) + rows * self._span
        dense = self._dense.get(side)
        if dense is not None:
            return dense.take(key)
        return np.searchsorted(self._flat, key, side=side) - rows * self._width  # type: ignore[call-overload]

    def largest_index_at_most(self, rows: np.ndarray, cap: np.ndarray) -> np.ndarray:
        """Index of the largest divisor <= cap in each row (-1 when none): divisors <= cap are those <= floor(cap)."""
        return self._count_below(rows, np.floor(np.minimum(cap, self._span - 2)), "right") - 1

    def first_index_at_least(self, rows: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Index of the smallest divisor >= x in each row (the row's divisor count when none): divisors >= x are
        those >= ceil(x)."""
        return self._count_below(rows, np.ceil(np.minimum(x, self._span - 1)), "left")

    def at(self, rows: np.ndarray, index: np.ndarray) -> np.ndarray:
        """Row r's index-th divisor per candidate (index < 0 reads the first), as one flat `take`."""
        return self._table_flat.take(rows * self._width + np.maximum(index, 0))


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))
