"""Pipeline stages that need not divide the layer count: how layers are split over stages, and which stages can
set the memory need.

Why: published frontier layouts put 126 layers (Llama 3.1 405B) or 61 layers (DeepSeek-V3) on 8 or 16 pipeline
stages. Megatron-LM does it by giving the first and last stages fewer layers, since they also hold the embedding
and the LM head + loss (`--account-for-embedding-in-pipeline-split`, `--account-for-loss-in-pipeline-split`, or
`--decoder-first-pipeline-num-layers` / `--decoder-last-pipeline-num-layers`). Stages get whole layers.

A split is (first, last) layers; the middle stages share the rest as evenly as possible, the extra layers going to
the later middle stages (they hold fewer micro-batches in flight under 1F1B, so memory stays balanced). The step
time is set by the slowest stage; memory by the fullest, where stage i holds min(pp - i, m) micro-batches in
flight: only four stages can be the fullest (first, the first middle stage of each size, last), so the model
evaluates those four "positions" as arrays of shape (layouts, 4).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = [
    "POSITIONS",
    "SPLIT_DISCOUNTS",
    "pinned_split",
    "stage_layer_counts",
    "stage_positions",
    "stage_split",
]

# The end-stage discounts, in layers, of the splits the search considers when the user pins none: balanced
# (0, 0) and Megatron's "account for embedding and loss" split, each end counted as one layer (1, 1).
SPLIT_DISCOUNTS = ((0, 0), (1, 1))
# Stage positions that can hold the most memory: first, first middle stage of the smaller size, first middle
# stage of the larger size, last.
POSITIONS = 4


def stage_split(layers: int, pp: np.ndarray, first_discount: int, last_discount: int) -> tuple[np.ndarray, np.ndarray]:
    """(first, last) stage layers when `layers` + the discounts are spread as evenly as possible over pp stages.

    Units = layers + discounts; each stage gets units // pp, the remainder going to the middle stages first, then
    to the first stage, then the last; each end then gives back its discount. 126 layers on pp 8 with (1, 1):
    128 units, 16 per stage, first and last 15, six middle stages of 16. pp = 1 is one stage with every layer.
    """
    pp = np.asarray(pp, dtype=np.int64)
    units = layers + first_discount + last_discount
    q, r = np.divmod(units, np.maximum(pp, 1))
    to_ends = r - np.minimum(r, np.maximum(pp - 2, 0))
    first = q + (to_ends >= 1) - first_discount
    last = q + (to_ends >= 2) - last_discount
    single = pp == 1
    return np.where(single, layers, first), np.where(single, layers, last)


def pinned_split(layers: int, pp: int, first: int | None, last: int | None) -> tuple[int, int]:
    """A user's pinned end stages; an unpinned end takes an even share of what the pinned one leaves."""
    if pp == 1:
        return layers, layers
    if first is not None and last is not None:
        return first, last
    if first is not None:
        return first, (layers - first) // (pp - 1)
    if last is not None:
        return (layers - last) // (pp - 1), last
    f, lst = stage_split(layers, np.array([pp]), 0, 0)
    return int(f[0]), int(lst[0])


def _middle(layers: int, pp: np.ndarray, first: np.ndarray, last: np.ndarray):
    """Middle stages' (smaller count, larger count, number with the larger count); zeros when pp <= 2."""
    n_mid = np.maximum(pp - 2, 0)
    rest = np.where(pp > 2, layers - first - last, 0)
    lo, extra = np.divmod(rest, np.maximum(n_mid, 1))
    return lo, lo + (extra > 0), extra


def stage_layer_counts(layers: int, pp: int, first: int, last: int) -> list[int]:
    """Every stage's layer count, first to last (what the plan reports)."""
    return list(_stage_layer_counts(layers, pp, first, last))


@lru_cache(maxsize=1024)
def _stage_layer_counts(layers: int, pp: int, first: int, last: int) -> tuple[int, ...]:
    """`stage_layer_counts`, remembered: a pure function of four whole numbers that every packaged plan asks for
    (seventy times per auto plan, numpy on one-element arrays each time)."""
    if pp == 1:
        return (layers,)
    lo, hi, extra = (int(x[0]) for x in _middle(layers, np.array([pp]), np.array([first]), np.array([last])))
    return (first,) + (lo,) * (pp - 2 - extra) + (hi,) * extra + (last,)


def stage_positions(layers: int, pp, first, last) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Arrays of shape (n, 4): layers on each position, its stage index i (for min(pp - i, m) in flight), and
    whether it holds the embedding, and the LM head. Positions that do not exist (the middle ones at pp <= 2,
    the last at pp = 1) get 0 layers and no embedding or head, so they never bind.

    Also the valid mask of shape (n,): every stage has at least one layer and the counts add up to `layers`.
    """
    pp = np.asarray(pp, dtype=np.int64)
    first = np.asarray(first, dtype=np.int64)
    last = np.asarray(last, dtype=np.int64)
    lo, hi, extra = _middle(layers, pp, first, last)
    mid = pp > 2
    has_last = pp > 1
    counts = np.stack(
        [
            np.where(has_last, first, layers),
            np.where(mid, lo, 0),
            np.where(mid & (extra > 0), hi, 0),
            np.where(has_last, last, 0),
        ],
        axis=-1,
    )
    index = np.stack(
        [np.zeros_like(pp), np.ones_like(pp), np.maximum(pp - 1 - extra, 1), np.maximum(pp - 1, 0)], axis=-1
    )
    none = np.zeros_like(mid)
    embedding = np.stack([np.ones_like(mid), none, none, none], axis=-1)
    head = np.stack([~has_last, none, none, has_last], axis=-1)
    total = np.where(has_last, first + last + np.where(mid, lo * np.maximum(pp - 2, 0) + extra, 0), layers)
    valid = (first >= 1) & np.where(has_last, last >= 1, True) & np.where(mid, lo >= 1, True) & (total == layers)
    return counts, index, embedding, head, valid
