"""The deadline search's vectorised bisection: for each candidate still open, the smallest size that meets the
deadline, one step model evaluation per step for all of them at once.

Why a module of its own: `deadline.py` reads as the branch and bound (bounds, order, chunks, winner); the
bisection is one self-contained step of it, with its own tests (`tests/engine/test_deadline_bisect.py`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["bisect_sizes"]


def bisect_sizes(evaluate, sel: np.ndarray, lo: np.ndarray, hi: np.ndarray, floor: np.ndarray, limit: float,
                 days: np.ndarray, where: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Vectorised bisection on j in (lo, hi]: hi meets the deadline, lo does not (a bound or a sentinel). A
    midpoint below `floor` (the whole-run bound) is known not to meet it and is not evaluated: the bisection takes
    the same steps, and finds the same size, as one that evaluated it. Returns the sizes found and the expected
    days at them (`days`: those at the starting hi); `where`, if given (those of the starting hi), is updated in
    place to the evaluated rows (`evaluate`'s third value) at the sizes found."""
    while True:
        active = np.nonzero(hi - lo > 1)[0]
        if len(active) == 0:
            return hi, days
        mid = (lo[active] + hi[active]) // 2
        good = np.zeros(len(active), dtype=bool)
        run = mid >= floor[active]
        if run.any():
            fits, at_mid, evaluated = evaluate(mid[run], sel[active[run]])
            good[run] = fits & (at_mid <= limit)
            days[active[run][good[run]]] = at_mid[good[run]]
            if where is not None:
                where[active[run][good[run]]] = evaluated[good[run]]
        hi[active] = np.where(good, mid, hi[active])
        lo[active] = np.where(good, lo[active], mid)
