"""The recovery mode and every mode's goodput at one GPU count, remembered per whole-run inputs and count.

Why: a plan asks for them several times per count (the goodput record, the recovery reason, the whole run's p10-p90
range) and an auto plan's 8-GPU systems share their whole-run inputs and often their GPU count; on one value
numpy's cost per call is all there is (about 80 us each time, a few per cent of an auto 70B plan). The figures are
`WholeRunInputs.mode_goodputs` and `mode_index` of that count, worked out once: the same values. Keyed by value
(the inputs are a frozen dataclass; 4096 and 4096.0 are one key, as both give the same figures) and bounded (an
entry is a few floats).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from engine.performance.recovery import choose_modes

if TYPE_CHECKING:
    from engine.performance.whole_run import WholeRunInputs

__all__ = ["FEW_COUNTS", "modes_at", "modes_of", "range_goodputs", "range_table"]

# Up to this many GPU counts (a plan's, a frontier's), `WholeRunInputs.goodput` reads each count's mode from here.
FEW_COUNTS = 16


@functools.lru_cache(maxsize=4096)
def modes_at(inputs: WholeRunInputs, gpus: float) -> tuple[int, tuple[float, ...]]:
    """(index of the mode used, every mode's goodput) on `gpus` GPUs: `mode_index` and `mode_goodputs` of it."""
    goodputs = inputs.mode_goodputs(gpus, 1.0)
    if len(inputs.modes) == 1:
        return 0, tuple(goodputs.tolist())
    index = choose_modes(goodputs, np.asarray(gpus, dtype=float), inputs.modes, inputs.goodput_target)
    return int(index), tuple(goodputs.tolist())


# The attribute under which `modes_of` keeps an inputs object's own answers (not a dataclass field: equality and
# hashing ignore it).
_OWN = "_modes_by_count"


def modes_of(inputs: WholeRunInputs, gpus: float) -> tuple[int, tuple[float, ...]]:
    """`modes_at`, also remembered on the inputs object itself: the same answers (each from `modes_at`, shared by
    equal inputs), found again without hashing and comparing the inputs. Why: the shared cache's key is the whole
    frozen dataclass (its recovery modes included), whose hash and equality a lookup works out field by field each
    time, about ten times the cost of a dictionary lookup; a plan asks about a hundred times, mostly for counts
    its own search asked before."""
    own = inputs.__dict__.get(_OWN)
    if own is None:
        own = {}
        object.__setattr__(inputs, _OWN, own)
    found = own.get(gpus)
    if found is None:
        found = own[gpus] = modes_at(inputs, gpus)
    return found


@functools.lru_cache(maxsize=64)
def range_table(inputs: WholeRunInputs) -> dict[float, tuple[float, float, float]]:
    """The goodputs at the MTBF range's p50 and two ends per GPU count of these inputs, filled in by
    `range_goodputs` (a dict of a few floats per count; one per distinct inputs)."""
    return {}


def range_goodputs(inputs: WholeRunInputs, gpus: list[float]) -> list[tuple[float, float, float]]:
    """Per GPU count, the failure goodput at the MTBF's p50, its low end (MTBF / range factor) and high end (MTBF x
    range factor): `WholeRunInputs.goodput` of those three scales, remembered per inputs and count.

    Why: a plan asks for the whole run's range on the same few counts many times (each system's plan and its
    frontier's eight counts, and the 8-GPU systems share their inputs and often their counts), about 90 us of
    numpy per ask on a handful of values. The counts not yet known are worked out in one pass, element for element
    the expression of `goodput` (as `modes_at`), so the figures are the same."""
    table = range_table(inputs)
    missing = sorted({g for g in gpus if g not in table})
    if missing:
        f = inputs.mtbf_range_factor
        rows = inputs.goodput(np.asarray(missing, dtype=float), np.array([[1.0], [1.0 / f], [f]])).T.tolist()
        for g, row in zip(missing, rows, strict=True):
            table[g] = (row[0], row[1], row[2])
    return [table[g] for g in gpus]
