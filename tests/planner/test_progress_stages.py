"""The run card lists the stages the plan's workload runs, no more: each list is checked against the stages the
chain itself reports while it runs (a capacity plan never runs an "inference" or "training" stage)."""

from __future__ import annotations

import pytest

from planner.adapter import plan_compute
from planner.views import progress_stages
from tests.samples import INFERENCE_REQUEST

pytestmark = pytest.mark.django_db

CAPACITY = {"workload": "capacity", "hardware": {"system": "dgx-h100"}, "envelope": {"facility_mw": 2}}
TRAINING = {
    "workload": "training",
    "model": {"preset": "llama-3-8b"},
    "training": {"tokens": 1e12, "gpus": 64},
    "hardware": {"system": "dgx-h100"},
}


def _reported(body: dict) -> list[str]:
    seen: list[str] = []
    plan_compute(request_data=body, price_snapshot=None, progress=lambda stage, _pct: seen.append(stage))
    return list(dict.fromkeys(seen))


@pytest.mark.parametrize("body", [CAPACITY, TRAINING, INFERENCE_REQUEST], ids=["capacity", "training", "inference"])
def test_the_stages_shown_are_the_stages_the_chain_reports(body):
    assert progress_stages(body["workload"]) == [*_reported(body), "done"]


def test_a_capacity_plan_shows_no_workload_stage(user, alice_client):
    from planner import services

    plan = services.plan_create_synchronous(owner=user, request_data=CAPACITY)
    page = alice_client.get(plan.get_absolute_url()).content.decode()
    assert 'data-stage="build"' in page and 'data-stage="costing"' in page
    for stage in ("workload", "training", "inference"):
        assert f'data-stage="{stage}"' not in page
