"""The deadline search's bisection (`search/deadline._bisect`): the smallest size that meets the deadline, one
evaluation per step for every candidate still open, midpoints below the floor not evaluated.

Hand-made candidates: candidate i meets the deadline from size `first_ok[i]` on (its days at size j are
first_ok[i] - j against a limit of 0), every size fits memory; `hi` meets it, `lo` does not, and sizes below
`floor` are known to miss.
"""

from __future__ import annotations

import numpy as np

from engine.search.deadline import _bisect


def _evaluator(first_ok: np.ndarray, calls: list[int]):
    def evaluate(j: np.ndarray, sel: np.ndarray):
        calls.append(len(j))
        days = (first_ok[sel] - j).astype(float)
        return np.ones(len(j), dtype=bool), days, np.zeros(len(j))

    return evaluate


def test_narrow_intervals():
    """(0, 4] with first size 2, floor 1: midpoints 2 (meets), 1 (misses) -> 2. (2, 8] with 7, floor 3: 5, 6 (miss),
    7 (meets) -> 7. (5, 6] is already found: 6. Steps evaluate the open candidates together: 2, 2, then 1 rows."""
    first_ok = np.array([2, 7, 6])
    calls: list[int] = []
    lo, hi, floor = np.array([0, 2, 5]), np.array([4, 8, 6]), np.array([1, 3, 0])
    found, days = _bisect(_evaluator(first_ok, calls), np.arange(3), lo, hi, floor, 0.0, np.array([-2.0, -1.0, 0.0]))
    assert found.tolist() == [2, 7, 6]
    assert days.tolist() == [0.0, 0.0, 0.0]  # first_ok - size at the sizes found
    assert calls == [2, 2, 1]


def test_floor_skips_known_misses():
    """(0, 8] with first size 7 and floor 7: midpoints 4 and 6 are below the floor (not evaluated), 7 meets."""
    calls: list[int] = []
    found, _days = _bisect(_evaluator(np.array([7]), calls), np.arange(1), np.array([0]), np.array([8]),
                           np.array([7]), 0.0, np.array([-1.0]))  # fmt: skip
    assert found.tolist() == [7]
    assert calls == [1]


def test_wide_interval_steps():
    """(0, 20] with first size 13: midpoints 10 (miss), 15 (meets), 12 (miss), 13 (meets) -> 13, one call per step."""
    calls: list[int] = []
    found, days = _bisect(_evaluator(np.array([13]), calls), np.arange(1), np.array([0]), np.array([20]),
                          np.array([0]), 0.0, np.array([-7.0]))  # fmt: skip
    assert found.tolist() == [13]
    assert days.tolist() == [0.0]
    assert calls == [1, 1, 1, 1]
