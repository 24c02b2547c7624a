"""The exact bounds that let the deadline search rule candidates out without the step model (issue 13's speed
goal): the whole-run efficiency ceiling is never below the efficiency it bounds, no GPU count below a candidate's
bound meets the deadline, and a bisection that skips midpoints known to fail finds the same size.

Hand inputs as in test_whole_run.py: H100 systems fail every 6,335 h (Llama 3 paper, section 3.3.4), restart
15 min + 0.25 min per doubling of systems, production efficiency 0.795, evaluations and stalls 3 %, stragglers
0.3 % per doubling of systems.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.assumptions.registry import Assumptions
from engine.performance.whole_run import Z90, WholeRunInputs, run_efficiency
from engine.request.spec import PlanRequest
from engine.search import deadline
from engine.search.layouts import TrainingSearch
from engine.workload.model import analyse_model

NODE_MTBF_H = 6335.0
GPU_COUNTS = np.array([8, 64, 512, 2048, 8192, 16_384, 65_536, 131_072], dtype=float)


def _inputs(checkpointing: str = "asynchronous", mtbf_h: float = NODE_MTBF_H, **overrides: float) -> WholeRunInputs:
    return WholeRunInputs.resolve(params=405e9, checkpointing=checkpointing, node_mtbf_hours=mtbf_h,
                                  gpus_per_system=8, a=Assumptions(overrides=dict(overrides)))  # fmt: skip


def test_efficiency_ceiling_by_hand():
    # One system that never fails: 0.795 x 0.97 (no stragglers on one system, goodput at most 1).
    assert float(_inputs(mtbf_h=1e12).efficiency_ceiling(8)) == pytest.approx(0.795 * 0.97, rel=1e-9)
    # 16,384 GPUs = 2,048 systems: restart 15 + 0.25 x 11 = 17.75 min = 1,065 s; job MTBF 6,335 h / 2,048 =
    # 11,135.74 s; goodput <= 1 - 1,065 / 11,135.74 = 0.904362; stragglers 1 / (1 + 0.003 x 11) = 0.968054.
    assert float(_inputs().efficiency_ceiling(16_384)) == pytest.approx(0.904362 * 0.968054 * 0.795 * 0.97, rel=1e-5)


@pytest.mark.parametrize(
    "inputs",
    [
        _inputs(),
        _inputs("synchronous"),
        _inputs("in_memory"),
        _inputs(mtbf_h=50.0),  # failures faster than progress at scale: goodput floored
        _inputs(straggler_slowdown_per_doubling=0.2, production_efficiency=1.0, eval_and_stall_fraction=0.0),
        _inputs(restart_minutes=0.0, restart_minutes_per_doubling=0.0),
    ],
)
@pytest.mark.parametrize("ramp_excess", [0.0, 0.7])
@pytest.mark.parametrize("deadline_z", [0.0, Z90])
def test_efficiency_ceiling_bounds_every_larger_count(inputs, ramp_excess, deadline_z):
    """At every count from `gpus` up, for any step breakdown, the whole-run efficiency stays below the ceiling."""
    from dataclasses import replace

    inputs = replace(inputs, ramp_excess=ramp_excess, deadline_z=deadline_z)
    for i, gpus in enumerate(GPU_COUNTS):
        ceiling = float(inputs.efficiency_ceiling(gpus))
        for share in (0.0, 0.3, 1.0):
            assert np.all(run_efficiency(GPU_COUNTS[i:], inputs, share) <= ceiling * (1 + 1e-12))


def _search(catalog, preset: str, system: str, tokens: float, deadline_days: float) -> TrainingSearch:
    body = {"workload": "training", "model": {"preset": preset},
            "training": {"tokens": tokens, "deadline_days": deadline_days}}  # fmt: skip
    request = PlanRequest.model_validate(body, context={"catalog": catalog})
    sys_ = catalog.systems[system]
    return TrainingSearch(analyse_model(request.model), request.training, sys_, catalog.gpu_of(sys_), Assumptions())


@pytest.mark.parametrize(
    ("preset", "system", "tokens", "days"),
    [
        ("llama-3-70b", "dgx-h100", 15e12, 90),
        ("llama-3-8b", "gb200-nvl72", 2e12, 10),
        ("mixtral-8x7b", "dgx-b200", 2e12, 30),
    ],
)
def test_no_size_below_the_bounds_meets_the_deadline(catalog, preset, system, tokens, days):
    """Brute force: every candidate at every allowed multiple below its whole-run bound misses the deadline
    (or memory), so ruling those sizes out without the step model loses nothing."""
    s = _search(catalog, preset, system, tokens, days)
    assert s.layouts is not None
    lay = s.layouts
    from engine.search.results import Infeasibility, SearchStats

    grid = deadline._grid(s, lay, SearchStats(), False, Infeasibility())
    limit = days * (1 + 1e-9)
    pipeline, whole = deadline._lowest_index(s, lay, grid, limit, False)
    assert np.all(whole >= pipeline)
    assert np.count_nonzero(whole > pipeline) > len(whole) // 4  # the whole-run bound is the tighter one
    below = [(i, j) for i in range(len(grid.idx)) for j in range(min(int(whole[i]), int(grid.j_hi[i]) + 1))]
    assert len(below) > 1000
    cand = np.array([i for i, _ in below])
    j = np.array([j for _, j in below])
    dp = (grid.q[cand] * grid.k(cand, j)).astype(float)
    c = s.step(lay, grid.idx[cand], dp, grid.zero[cand], False)
    days_whole = s.days(c) / s.goodput(dp * s.group(lay, grid.idx[cand]), c)
    meets = (c.memory_bytes <= s.hw.hbm_bytes) & (days_whole <= limit)
    assert not np.any(meets)


def test_bisection_skipping_known_misses_finds_the_same_size():
    """A bisection that does not evaluate midpoints below a floor (known to miss) takes the same steps and finds
    the same index as one evaluating every midpoint, with fewer evaluations; also when the predicate is not
    monotone (the path, not only the smallest index, must be the same)."""
    rng = np.random.default_rng(13)
    n = 500
    hi = rng.integers(5, 200, n)
    meets_table = rng.random((n, 201)) < 0.5  # arbitrary, not monotone
    first = rng.integers(0, hi)  # below it nothing meets: the floor
    for i in range(n):
        meets_table[i, : first[i]] = False
        meets_table[i, hi[i]] = True
    calls = {"all": 0, "floor": 0}

    def evaluate_with(key):
        def evaluate(j, sel):
            calls[key] += len(j)
            good = meets_table[sel, j]
            return good, np.where(good, 1.0, 2.0), np.zeros(len(j))

        return evaluate

    sel = np.arange(n)
    lo = np.full(n, -1)
    start = np.full(n, 1.0)
    everything, _ = deadline._bisect(evaluate_with("all"), sel, lo.copy(), hi.copy(), np.zeros(n, dtype=int), 1.5,
                                     start.copy())  # fmt: skip
    floored, _ = deadline._bisect(evaluate_with("floor"), sel, lo.copy(), hi.copy(), first, 1.5, start.copy())
    assert np.array_equal(everything, floored)
    assert calls["floor"] < calls["all"]


def test_layout_cache_keeps_the_most_recent_entries():
    from engine.search.layout_cache import LruCache

    cache: LruCache[int] = LruCache(2)
    built: list[str] = []

    def build(key: str) -> int:
        built.append(key)
        return len(built)

    assert cache.get_or_build("a", lambda: build("a")) == 1
    assert cache.get_or_build("b", lambda: build("b")) == 2
    assert cache.get_or_build("a", lambda: build("a")) == 1  # hit: "a" is now the most recent
    assert cache.get_or_build("c", lambda: build("c")) == 3  # evicts "b", the least recent
    assert cache.get_or_build("a", lambda: build("a")) == 1
    assert cache.get_or_build("b", lambda: build("b")) == 4  # rebuilt
    assert built == ["a", "b", "c", "b"] and len(cache) == 2


def test_layout_cache_evicts_by_bytes_and_keeps_the_newest():
    """With a byte budget, the least recent values go until the rest fit it; a value larger than the whole
    budget is still kept (alone) so the search that built it can use it."""
    from engine.search.layout_cache import LruCache

    cache: LruCache[int] = LruCache(10, max_bytes=100, weigh=lambda v: v)
    for key, weight in (("a", 40), ("b", 40), ("c", 30)):  # 110 > 100: "a" goes
        cache.get_or_build(key, lambda w=weight: w)
    assert len(cache) == 2 and cache.nbytes == 70
    cache.get_or_build("big", lambda: 500)
    assert len(cache) == 1 and cache.nbytes == 500


def test_two_auto_plans_stay_cached(plan):
    """The byte budget holds the layout costs of two 70B auto plans (13 systems each, about 25 MB as stored):
    planning the first again builds nothing."""
    from engine.search.layout_cache import LAYOUTS

    LAYOUTS.clear()
    first = {"workload": "training", "model": {"preset": "llama-3-70b"},
             "training": {"tokens": 15e12, "deadline_days": 90}, "hardware": {"system": "auto"}}  # fmt: skip
    second = {**first, "model": {"preset": "llama-3-8b"}}
    plan(first)
    plan(second)
    misses = LAYOUTS.misses
    plan(first)
    assert LAYOUTS.misses == misses


def test_a_replanned_request_reuses_the_layouts_and_answers_the_same(plan):
    """The second plan of the same model and hardware (another deadline) reads the remembered layout costs; a
    plan with the cache emptied first gives the same figures."""
    from engine.search.layout_cache import LAYOUTS

    body = {"workload": "training", "model": {"preset": "llama-3-8b"},
            "training": {"tokens": 1e12, "deadline_days": 20}, "hardware": {"system": "dgx-h100"}}  # fmt: skip
    first = plan(body)
    hits = LAYOUTS.hits
    again = plan({**body, "training": {"tokens": 1e12, "deadline_days": 10}})
    assert LAYOUTS.hits > hits
    LAYOUTS.clear()
    cold = plan({**body, "training": {"tokens": 1e12, "deadline_days": 10}})
    for key in ("gpus", "days", "step_time_s", "parallelism", "memory_per_gpu_gib", "frontier"):
        assert again["training"][key] == cold["training"][key]
    assert again["training"]["gpus"] > first["training"]["gpus"]  # half the deadline: a different answer
