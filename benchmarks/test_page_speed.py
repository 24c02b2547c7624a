"""Server-side render time of the plan page and the PDF report for a 16,384-GPU plan.

Goals (issue 7): page under 300 ms, PDF under 3 s.
"""

from __future__ import annotations

import pytest
from django.test import Client

from planner import services
from planner.models import Plan
from planner.presenters import report_context

BIG = {
    "workload": "training",
    "model": {"preset": "llama-3-405b"},
    "training": {"tokens": 15e12, "gpus": 16384, "global_batch_tokens": 16_777_216},
    "hardware": {"system": "dgx-h100"},
    "pricing": {"years": 3, "regions": ["us-east-1", "us-west-2"]},
}


@pytest.fixture
def big_plan(db, django_user_model, django_capture_on_commit_callbacks) -> Plan:
    from pricing.services import price_snapshot_load_fixtures

    price_snapshot_load_fixtures()
    owner = django_user_model.objects.create_user(username="bench", password="x" * 20)
    with django_capture_on_commit_callbacks(execute=True):
        plan = services.plan_create(owner=owner, request_data=BIG, name="16k H100")
    plan.refresh_from_db()
    assert plan.result["cluster"]["gpus"] == 16384
    return plan


def test_plan_page_render(benchmark, big_plan):
    client = Client()
    client.force_login(big_plan.owner)
    client.get(big_plan.get_absolute_url())  # warm imports (plotly) once, as a running server has
    response = benchmark(client.get, big_plan.get_absolute_url())
    assert response.status_code == 200


def test_pdf_report_render(benchmark, big_plan):
    from planner.outputs.pdf import render_pdf

    pdf = benchmark.pedantic(render_pdf, args=("planner/report.html", report_context(big_plan)), rounds=3, iterations=1)
    assert pdf.startswith(b"%PDF-")
