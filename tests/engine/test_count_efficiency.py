"""The whole-run efficiency table by GPU count (`search/count_efficiency.py`), shared by searches with equal
whole-run inputs: every value must be the efficiency of that count worked out alone, however the counts were asked
(one batch or several, any order, repeats), and equal inputs must share one table.

Hand inputs (as test_whole_run.py): H100 systems fail every 6,335 h; 405B parameters x 14 checkpoint bytes;
asynchronous checkpoints stall at 20 GB/s per GPU to host; restart 15 min + 0.25 min per doubling of systems.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from engine.assumptions.registry import Assumptions
from engine.performance.whole_run import WholeRunInputs, run_efficiency
from engine.search.count_efficiency import (
    CEILINGS,
    COUNT_EFFICIENCIES,
    CeilingTable,
    CountEfficiency,
    ceiling_table,
    count_efficiency,
)


def _inputs() -> WholeRunInputs:
    return WholeRunInputs.resolve(params=405e9, checkpointing="asynchronous", node_mtbf_hours=6335.0,
                                  gpus_per_system=8, a=Assumptions())  # fmt: skip


def test_a_count_by_hand():
    """16,384 GPUs = 2,048 systems: job MTBF 6,335 h x 3,600 / 2,048 = 11,136 s; stall 405e9 x 14 / (16,384 x
    20e9) s; restart 15 + 0.25 x 11 = 17.75 min; Daly's interval; then the production, evaluation and straggler
    efficiencies (assumption defaults) at log2(2,048) = 11 doublings."""
    a = Assumptions()
    delta, mtbf, restart = 405e9 * 14 / (16_384 * 20e9), 6335.0 * 3600 / 2048, 17.75 * 60
    x = delta / (2 * mtbf)
    tau = math.sqrt(2 * delta * mtbf) * (1 + math.sqrt(x) / 3 + x / 9) - delta
    goodput = tau / (tau + delta) * (1 - ((tau + delta) / 2 + restart) / mtbf)
    expected = (goodput * a["production_efficiency"] * (1 - a["eval_and_stall_fraction"])
                / (1 + a["straggler_slowdown_per_doubling"] * 11))  # fmt: skip
    table = CountEfficiency(_inputs())
    assert float(table(np.array([16_384.0]))[0]) == pytest.approx(expected, rel=1e-9)


def test_every_value_is_the_count_worked_out_alone_however_asked():
    inputs = _inputs()
    table = CountEfficiency(inputs)
    batches = [np.array([4096.0, 512.0, 4096.0]), np.array([8.0, 16_384.0, 512.0]), np.array([2048.0, 8.0])]
    for gpus in batches:
        got = table(gpus)
        alone = np.array([float(run_efficiency(np.array([n]), inputs)[0]) for n in gpus])
        assert got.tolist() == alone.tolist()  # exact: the same expression per element
    assert table(np.zeros(0)).shape == (0,)


def test_equal_inputs_share_one_table():
    COUNT_EFFICIENCIES.clear()
    first = count_efficiency(_inputs())
    assert count_efficiency(replace(_inputs())) is first  # equal by value, another object
    assert count_efficiency(replace(_inputs(), node_mtbf_hours=704.0)) is not first


def test_ceiling_table_by_hand():
    """The efficiency ceiling at 16,384 GPUs = 2,048 systems, 11 doublings: goodput bounded by 1 - R x systems / M
    with the least restart of any mode (15 + 0.25 x 11 min for the asynchronous mode, the only one here), node
    MTBF 6,335 h; then production, evaluation and stragglers as in the count above. A count just above 2,048
    systems' GPUs (16,385) needs 2,049 systems."""
    a = Assumptions()
    inputs = _inputs()
    restarts = [m.restart_s + m.restart_per_doubling_s * 11 for m in inputs.modes]
    goodput = 1 - min(restarts) * 2048 / (6335.0 * 3600)
    expected = (goodput * a["production_efficiency"] * (1 - a["eval_and_stall_fraction"])
                / (1 + a["straggler_slowdown_per_doubling"] * 11))  # fmt: skip
    table = CeilingTable(inputs)
    got = table(np.array([16_384.0, 16_385.0]))
    assert float(got[0]) == pytest.approx(expected, rel=1e-9)
    assert float(got[1]) < float(got[0])  # one more system: more failures, more stragglers


def test_ceiling_table_is_the_ceiling_worked_out_alone_however_asked():
    """Read by systems from a list that grows: each value exactly the ceiling of that count worked out alone."""
    inputs = _inputs()
    table = CeilingTable(inputs)
    for gpus in (np.array([8.0, 1.0, 72.0]), np.array([1_048_576.0, 9.0, 4096.0]), np.array([0.0, 16.0])):
        alone = np.array([float(inputs.efficiency_ceiling(np.array([n]))[0]) for n in gpus])
        assert table(gpus).tolist() == alone.tolist()
    CEILINGS.clear()
    assert ceiling_table(replace(inputs)) is ceiling_table(inputs)
