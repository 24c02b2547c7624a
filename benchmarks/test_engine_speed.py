"""Engine speed: a whole plan, with every candidate system, must return well under a second."""

from __future__ import annotations

import copy

import pytest

from planner.sizing import load_catalog, run_plan, validate_request
from tests.samples import INFERENCE_REQUEST, TRAINING_REQUEST


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_training_plan_every_system(benchmark, catalog):
    request = validate_request(copy.deepcopy(TRAINING_REQUEST), catalog)
    result = benchmark(run_plan, request, catalog)
    assert result["cluster"]["gpus"] > 0


def test_training_plan_405b_fixed_gpus(benchmark, catalog):
    body = {"workload": "training", "model": {"preset": "llama-3-405b"},
            "training": {"tokens": 15e12, "gpus": 16384}, "hardware": {"system": "auto"}}
    result = benchmark(run_plan, validate_request(body, catalog), catalog)
    assert result["training"]["gpus"] > 0


def test_inference_plan(benchmark, catalog):
    request = validate_request(copy.deepcopy(INFERENCE_REQUEST), catalog)
    result = benchmark(run_plan, request, catalog)
    assert result["inference"]["gpus"] > 0


def test_request_validation(benchmark, catalog):
    benchmark(validate_request, copy.deepcopy(TRAINING_REQUEST), catalog)
