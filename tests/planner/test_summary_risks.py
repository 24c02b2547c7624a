"""The summary band's risks: what could make the answer wrong is said before any figure."""

from __future__ import annotations

import json
from pathlib import Path

from planner.outputs.plan_view import plan_view

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "plans"


def _golden(name: str):
    return plan_view(json.loads((GOLDEN / f"{name}.json").read_text()))


def test_a_batch_far_from_the_request_is_a_top_risk():
    """Llama 3 405B on 100,000 H100 asked for 64 x 2^20 tokens per step = 8,192 sequences of 8,192 tokens; the
    plan trains on another batch (the layout's data parallelism sets it), and the summary band says so first."""
    from engine import load_catalog, run_plan, validate_request

    catalog = load_catalog()
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-405b"},
        "training": {"tokens": 15e12, "gpus": 100_000, "global_batch_tokens": 64 * 2**20},
        "hardware": {"system": "dgx-h100", "fabric": "infiniband-xdr"},
    }
    view = plan_view(run_plan(validate_request(body, catalog), catalog))
    risks = [r for r in view.summary_band.risks if r.startswith("Batch differs from the request")]
    assert len(risks) == 1 and "not the 8,192 asked" in risks[0]
    assert not any(r.startswith("Batch differs") for r in _golden("train-70b-auto-90d").summary_band.risks)


def test_sensitivity_without_an_obtainable_cloud_option_says_why_instead_of_rows_of_dashes():
    """The 50 MW GB200 capacity plan has no obtainable cloud option: no row can say how much an input moves the
    build-or-rent difference, so the page says why; a plan with a cloud option keeps its table."""
    from planner.outputs.page_html import page_html

    capacity = page_html(3, _golden("capacity-gb200-50mw"), {}, {}, "")["lead"]
    assert 'id="sensitivity-none"' in capacity and 'id="sensitivity"' not in capacity
    training = page_html(4, _golden("train-70b-auto-90d"), {}, {}, "")["lead"]
    assert 'id="sensitivity"' in training and "On-prem utilisation" in training
