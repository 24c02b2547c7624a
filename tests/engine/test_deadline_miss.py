"""The closest misses of a deadline no size meets (`search/deadline_miss.py`) are worked out lazily (candidates
timed in order of a lower bound on their days); they must be those of the plain definition, checked here by
brute force: every candidate timed and checked for memory at its largest size, then the fewest expected days among
those that fit (among those the cluster cap limits first), the most GPUs the batch feeds among those that fit,
and the least memory when none fits.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.assumptions.registry import Assumptions
from engine.performance.memory import GIB
from engine.request.spec import PlanRequest
from engine.search import deadline
from engine.search.layouts import TrainingSearch
from engine.search.results import Infeasibility, SearchStats
from engine.workload.model import analyse_model


def _search(catalog, preset: str, system: str, days: float, **overrides: float) -> TrainingSearch:
    body = {"workload": "training", "model": {"preset": preset}, "training": {"tokens": 15e12, "deadline_days": days}}
    request = PlanRequest.model_validate(body, context={"catalog": catalog})
    s = catalog.systems[system]
    return TrainingSearch(analyse_model(request.model), request.training, s, catalog.gpu_of(s),
                          Assumptions(overrides=dict(overrides)))  # fmt: skip


def _brute_force(s: TrainingSearch) -> Infeasibility:
    lay = s.layouts
    assert lay is not None
    grid = deadline._grid(s, lay, SearchStats(), False, Infeasibility())
    everything = np.arange(len(grid.idx))
    k_hi = grid.k(everything, grid.j_hi)
    dp = (grid.q * k_hi).astype(float)
    c = s.step(lay, grid.idx, dp, grid.zero, False)
    days = s.days(c) / s.goodput(dp * s.group(lay, grid.idx), c)
    fits = c.memory_bytes <= s.hw.hbm_bytes
    capped = grid.k_cap_cluster <= grid.k_cap_batch
    out = Infeasibility()
    if not fits.any():
        k = int(np.argmin(c.memory_bytes))
        out.min_memory_gib = float(c.memory_bytes[k]) / GIB
        out.min_memory_layout = (int(lay.tp[grid.idx[k]]), int(lay.pp[grid.idx[k]]))
        return out
    pool = fits & capped if (fits & capped).any() else fits
    best = int(np.argmin(np.where(pool, days, np.inf)))  # argmin: the lowest index among equal days
    out.best_days, out.best_days_gpus = float(days[best]), int(k_hi[best] * grid.unit[best])
    out.best_days_limit = "cluster size" if (fits & capped).any() else "global batch"
    feeds = grid.k_cap_batch * grid.unit
    out.batch_cap_gpus = int(np.max(np.where(fits, feeds, -1)))
    return out


@pytest.mark.parametrize(
    ("system", "days", "overrides", "limit"),
    [
        ("aws-p4d", 60, {}, "global batch"),  # A100s cannot train 70B on 15T tokens in 60 days at any size
        ("dgx-h100", 1, {}, "global batch"),  # nor H100s in a day
        ("dgx-h100", 90, {"max_cluster_gpus": 512}, "cluster size"),  # a cap below the size the deadline needs
    ],
)
def test_lazy_misses_are_those_of_checking_every_candidate(catalog, system, days, overrides, limit):
    s = _search(catalog, "llama-3-70b", system, days, **overrides)
    assert s.layouts is not None
    plan, stats, miss = deadline.smallest(s, s.layouts, days, False)
    assert plan is None
    expected = _brute_force(s)
    assert miss == expected
    assert miss.best_days_limit == limit
    assert miss.best_days is not None and miss.best_days > days
    assert miss.batch_cap_gpus is not None and miss.batch_cap_gpus >= miss.best_days_gpus
    # Only some candidates were timed to find them (every one of them, before: one per candidate at least).
    assert stats.model_evaluations < len(s.layouts.tp)


def test_when_nothing_fits_the_least_memory_is_named(catalog):
    """405B on 64 A100 40GB GPUs at most: no layout's fullest stage fits 40 GB without offload."""
    s = _search(catalog, "llama-3-405b", "dgx-a100-40gb", 90, max_cluster_gpus=64)
    assert s.layouts is not None
    plan, _stats, miss = deadline.smallest(s, s.layouts, 90, False)
    assert plan is None
    assert miss == _brute_force(s)
    assert miss.min_memory_gib is not None and miss.min_memory_gib > 40
