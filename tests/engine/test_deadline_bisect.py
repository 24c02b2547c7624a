"""The deadline search's bisection (`search/deadline._bisect`): the smallest size that meets the deadline, whether
the intervals are narrow (every size they could visit evaluated in one pass) or wide (one evaluation per step).

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


def test_narrow_intervals_one_pass():
    """(0, 4] with first size 2; (2, 8] with 7; (5, 6] already found: sizes 2, 7, 6, one evaluation call."""
    first_ok = np.array([2, 7, 6])
    calls: list[int] = []
    lo, hi, floor = np.array([0, 2, 5]), np.array([4, 8, 6]), np.array([1, 3, 0])
    found, days = _bisect(_evaluator(first_ok, calls), np.arange(3), lo, hi, floor, 0.0, np.array([-2.0, -1.0, 0.0]))
    assert found.tolist() == [2, 7, 6]
    assert days.tolist() == [0.0, 0.0, 0.0]  # first_ok - size at the sizes found
    assert len(calls) == 1
    # sizes (0, 4) from floor 1: 1, 2, 3; (2, 8) from floor 3: 3..7; nothing inside (5, 6)
    assert calls == [3 + 5]


def test_wide_interval_steps():
    """(0, 20] with first size 13: midpoints 10 (miss), 15 (meets), 12 (miss), 13 (meets) -> 13, one call per step."""
    calls: list[int] = []
    found, days = _bisect(_evaluator(np.array([13]), calls), np.arange(1), np.array([0]), np.array([20]),
                          np.array([0]), 0.0, np.array([-7.0]))  # fmt: skip
    assert found.tolist() == [13]
    assert days.tolist() == [0.0]
    assert calls == [1, 1, 1, 1]
