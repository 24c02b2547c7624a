"""Searches that reuse what an earlier search derived from the same layout costs (the deadline grid and the layout
keys kept in `LayoutCosts.derived`, the costs themselves in `search/layout_cache.py`) must answer and count exactly
as a search that builds everything itself: the same plan, and the same statistics (candidates, model evaluations,
rejections by reason), which the plan reports.
"""

from __future__ import annotations

import pytest

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import load_catalog
from engine.request.spec import PlanRequest
from engine.search.count_efficiency import COUNT_EFFICIENCIES
from engine.search.grid import _layout_grid
from engine.search.layout_cache import ACTIVATION_FLOORS, LAYOUTS
from engine.search.shared import SearchMemo
from engine.search.training import TrainingResult, size_training
from engine.workload.model import analyse_model


def _size(system_id: str, training: dict) -> dict:
    catalog = load_catalog()
    request = PlanRequest.model_validate({"workload": "training", "model": {"preset": "llama-3-70b"},
                                          "training": training})  # fmt: skip
    system = catalog.systems[system_id]
    assert request.training is not None
    result = size_training(analyse_model(request.model), request.training, system, catalog.gpu_of(system),
                           Assumptions())  # fmt: skip
    stats = result.search.as_dict() if result.search is not None else {}
    stats.pop("seconds", None)
    stats.pop("configs_per_s", None)
    return {"feasible": result.feasible, "problems": result.problems, "gpus": result.gpus, "days": result.days,
            "layout": result.layout, "frontier": result.frontier, "stats": stats}  # fmt: skip


def _cold(system_id: str, training: dict) -> dict:
    LAYOUTS.clear()
    ACTIVATION_FLOORS.clear()
    COUNT_EFFICIENCIES.clear()
    _layout_grid.cache_clear()
    return _size(system_id, training)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # the same request again: every derived figure reused
        (("dgx-h100", {"tokens": 15e12, "deadline_days": 90}), ("dgx-h100", {"tokens": 15e12, "deadline_days": 90})),
        # another deadline and token count: the deadline grid does not depend on them
        (("dgx-h100", {"tokens": 15e12, "deadline_days": 90}), ("dgx-h100", {"tokens": 5e12, "deadline_days": 20})),
        # another system with the same GPU, NVLink domain and fabric: the same layout costs, the same grid
        (
            ("dgx-h100", {"tokens": 15e12, "deadline_days": 90}),
            ("hgx-h100-oem", {"tokens": 15e12, "deadline_days": 90}),
        ),
        # no size meets the deadline (the closest miss is named from the reused grid's caps)
        (("aws-p4d", {"tokens": 15e12, "deadline_days": 90}), ("aws-p4d", {"tokens": 15e12, "deadline_days": 90})),
        # a GPU count, then a deadline on the same costs
        (("dgx-b200", {"tokens": 15e12, "gpus": 2048}), ("dgx-b200", {"tokens": 15e12, "deadline_days": 60})),
    ],
)
def test_a_search_reusing_derived_figures_answers_and_counts_as_a_fresh_one(first, second):
    fresh = _cold(*second)
    _cold(*first)
    reused = _size(*second)  # the first search's layout costs and derived figures are in place
    assert reused == fresh
    assert fresh["stats"]["candidates_evaluated"] > 0


def _size_with(memo: SearchMemo, system_id: str) -> TrainingResult:
    catalog = load_catalog()
    request = PlanRequest.model_validate({"workload": "training", "model": {"preset": "llama-3-70b"},
                                          "training": {"tokens": 15e12, "deadline_days": 90}})  # fmt: skip
    assert request.training is not None
    system = catalog.systems[system_id]
    return size_training(analyse_model(request.model), request.training, system, catalog.gpu_of(system),
                         Assumptions(), memo=memo)  # fmt: skip


def test_systems_with_equal_search_inputs_share_one_search_per_plan():
    """The OEM HGX H100 is the DGX H100 to the step model: sized after it with the plan's memo, it takes the DGX's
    search answers (deadline search and frontier) and reports what its own search reports; its goodput record is
    its own system's. A system with another fabric (AWS p5, EFA) searches for itself."""
    memo = SearchMemo()
    _size_with(memo, "dgx-h100")
    shared = _size_with(memo, "hgx-h100-oem")
    assert memo.hits == 2  # the deadline search and the frontier
    alone = _size_with(SearchMemo(), "hgx-h100-oem")
    for name in ("gpus", "days", "days_ideal", "step_time_s", "mfu", "layout", "frontier", "goodput", "whole_run"):
        assert getattr(shared, name) == getattr(alone, name), name
    assert shared.search is not None and alone.search is not None
    assert {**shared.search.as_dict(), "seconds": 0, "configs_per_s": 0} == {
        **alone.search.as_dict(), "seconds": 0, "configs_per_s": 0}  # fmt: skip
    _size_with(memo, "aws-p5")
    assert memo.hits == 2
