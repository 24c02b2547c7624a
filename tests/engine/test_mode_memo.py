"""The recovery mode and goodputs remembered per GPU count (`performance/mode_memo.py`) must be the figures worked
out directly: the mode `auto` picks, every mode's goodput, and the whole run's goodput rows read with it.

Hand inputs (as test_whole_run.py): 405B parameters, 14 checkpoint bytes each; H100 systems fail every 6,335 h.
"""

from __future__ import annotations

import numpy as np

from engine.assumptions.registry import Assumptions
from engine.performance.mode_memo import FEW_COUNTS, modes_at, range_goodputs, range_table
from engine.performance.whole_run import WholeRunInputs


def _auto() -> WholeRunInputs:
    return WholeRunInputs.resolve(params=405e9, checkpointing="auto", node_mtbf_hours=6335.0, gpus_per_system=8,
                                  a=Assumptions())  # fmt: skip


def test_the_mode_by_scale_as_worked_out_directly():
    """Asynchronous checkpoints keep above 90 % at 1,024 GPUs; at 98,304 GPUs a failure comes every 31 minutes and
    restarting from storage keeps well under half the time (test_whole_run), so `auto` moves to a later mode."""
    inputs = _auto()
    modes_at.cache_clear()
    for gpus in (1024, 16_384, 98_304):
        index, goodputs = modes_at(inputs, gpus)
        assert index == int(inputs.mode_index(gpus))
        assert list(goodputs) == inputs.mode_goodputs(gpus).tolist()
        assert inputs.mode_at(gpus).name == inputs.modes[index].name
    assert inputs.mode_at(1024).name == "asynchronous"
    assert inputs.mode_at(98_304).name != "asynchronous"
    assert modes_at(inputs, 1024) is modes_at(inputs, 1024.0)  # one entry per count, int or float


def test_goodput_rows_of_a_few_counts_match_the_vectorised_rows():
    """Up to FEW_COUNTS counts `goodput` reads each count's mode from the memo; more go through `mode_index`: the
    same rows either way, at the p50 and the MTBF range's two ends."""
    inputs = _auto()
    few = np.array([1024.0, 16_384.0, 98_304.0, 131_072.0])
    many = np.concatenate([few, np.arange(1, FEW_COUNTS + 1) * 8.0])
    scales = np.array([[1.0], [0.5], [2.0]])
    assert inputs.goodput(few, scales).tolist() == inputs.goodput(many, scales)[:, : len(few)].tolist()


def test_range_goodputs_are_the_goodput_rows_whatever_was_asked_before():
    """The whole run's failure range per count (`range_goodputs`) is `goodput` at the MTBF's p50 and its two range
    ends, whether a count was worked out alone or with others (and read back later): a count's figures must not
    depend on its companions. At 98,304 GPUs a shorter MTBF loses more, so low < p50 < high."""
    inputs = _auto()
    range_table.cache_clear()
    f = inputs.mtbf_range_factor
    scales = np.array([[1.0], [1.0 / f], [f]])
    alone = range_goodputs(inputs, [98_304.0])
    together = range_goodputs(inputs, [1024.0, 16_384.0, 98_304.0])
    direct = inputs.goodput(np.array([1024.0, 16_384.0, 98_304.0]), scales).T.tolist()
    assert [list(row) for row in together] == direct
    assert together[2] == alone[0]
    low_end, p50, high_end = direct[2][1], direct[2][0], direct[2][2]
    assert low_end < p50 < high_end
