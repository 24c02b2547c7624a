"""Fixtures for the pure-engine tests (no Django)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The engine tests must run without any project-level pytest configuration, so make the repo importable.
ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine import load_catalog, run_plan, to_json, validate_request  # noqa: E402


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


@pytest.fixture
def plan(catalog):
    """Validate a request dict and run it: plan({...}) -> the plan's JSON (engine.result.to_json)."""

    def _run(data: dict) -> dict:
        return to_json(run_plan(validate_request(data, catalog), catalog))

    return _run


@pytest.fixture
def shape_of(catalog):
    """shape_of("llama-3-8b") -> the preset as a resolved ModelSpec (through the validator, as a request would)."""

    def _shape(preset_id: str):
        body = {"workload": "training", "model": {"preset": preset_id}, "training": {"tokens": 1e12, "gpus": 8}}
        return validate_request(body, catalog).model

    return _shape
