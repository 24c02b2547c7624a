"""The divisor table of the deadline search (`grid.DivisorTable`) against divisors listed by hand: the smallest
divisor at least x and the largest at most a cap, per row, whether the table looks its answers up (a small span)
or searches them (a span above `DENSE_KEYS_MAX`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.search import grid
from engine.search.grid import DivisorTable

VALUES = np.array([512, 96, 1, 60, 7], dtype=np.int64)
# Divisors by hand: 512 = 2^9; 96 = 2^5 x 3; 60 = 2^2 x 3 x 5; 7 is prime.
DIVISORS = {
    512: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    96: [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 96],
    1: [1],
    60: [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60],
    7: [1, 7],
}


@pytest.fixture(params=["listed", "searched"])
def table(request, monkeypatch) -> DivisorTable:
    if request.param == "searched":
        monkeypatch.setattr(grid, "DENSE_KEYS_MAX", 0)
    made = DivisorTable(VALUES)
    assert bool(made._dense) is (request.param == "listed")
    return made


def test_rows_hold_the_divisors(table):
    for n, divisors in DIVISORS.items():
        row = table.rows(np.array([n]))
        listed = table.at(np.repeat(row, len(divisors)), np.arange(len(divisors)))
        assert listed.tolist() == divisors


@pytest.mark.parametrize("x", [-3.0, 0.0, 0.5, 1.0, 2.5, 3.0, 11.0, 12.0, 12.000001, 59.9, 60.0, 97.0, 600.0, 1e18])
def test_first_index_at_least(table, x):
    for n, divisors in DIVISORS.items():
        row = table.rows(np.array([n]))
        want = next((i for i, d in enumerate(divisors) if d >= math.ceil(x)), len(divisors))
        assert int(table.first_index_at_least(row, np.array([x]))[0]) == want, (n, x)


@pytest.mark.parametrize("cap", [0.0, 0.99, 1.0, 4.5, 7.0, 31.0, 96.0, 511.0, 512.0, 5e6])
def test_largest_index_at_most(table, cap):
    for n, divisors in DIVISORS.items():
        row = table.rows(np.array([n]))
        want = max((i for i, d in enumerate(divisors) if d <= cap), default=-1)
        assert int(table.largest_index_at_most(row, np.array([cap]))[0]) == want, (n, cap)
