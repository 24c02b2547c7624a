"""The plan page for a real plan: costs, charts and diagrams render from the stored plan."""

from __future__ import annotations

import pytest

from planner import services
from planner.adapter import usd_text
from planner.outputs.charts import plan_charts
from tests import samples

pytestmark = pytest.mark.django_db


@pytest.fixture
def priced_plan(user, django_capture_on_commit_callbacks):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-70b"},
        "training": {"tokens": 15e12, "gpus": 1024},
        "hardware": {"system": "dgx-h100"},
        "pricing": {"years": 3, "regions": ["us-east-1"]},
    }
    return samples.priced_plan(user, body, "priced", django_capture_on_commit_callbacks)


def test_plan_page_shows_costs_charts_and_diagrams(alice_client, priced_plan):
    html = alice_client.get(priced_plan.get_absolute_url()).content.decode()
    assert "Build or rent" in html and "Cloud options for the same work" in html
    assert "p5.48xlarge" in html  # H100 work priced on the H100 instance type
    for chart in ("cost-over-time", "cost-breakdown", "frontier", "power-per-rack"):
        assert f'id="chart-{chart}"' in html
    assert 'id="diagram-topology"' in html and 'id="diagram-racks"' in html


def test_cost_chart_series_come_from_the_plan(priced_plan):
    figure = plan_charts(priced_plan.result)["cost-over-time"].figure
    onprem = next(trace for trace in figure["data"] if trace["name"].startswith("On-prem"))
    series = next(
        s for s in priced_plan.result["costs"]["comparison"]["cumulative"]["series"] if s["option"] == "onprem"
    )
    # Month 0 of the on-prem line is the capex paid up front.
    assert onprem["y"][0] == pytest.approx(float(priced_plan.result["costs"]["onprem"]["capex_usd"]))
    assert len(onprem["y"]) == len(series["usd"])


def test_power_chart_draws_each_rack_build_once(priced_plan):
    figure = plan_charts(priced_plan.result)["power-per-rack"].figure
    bars = [trace for trace in figure["data"] if trace["type"] == "bar"]
    labels = [label for bar in bars for label in bar["y"]]
    compute = [label for label in labels if "compute" in label]
    # 128 DGX H100 at 4 per rack: one compute build at 4 x 10.2 = 40.8 kW, drawn once, for 32 racks.
    assert compute == ["32 compute racks at 40.8 kW"]
    bar = next(bar for bar in bars if compute[0] in bar["y"])
    assert bar["x"][bar["y"].index(compute[0])] == pytest.approx(40.8)
    assert bar["name"] == "racks cooled by air + containment"  # the method's name, not its key


def test_inference_plan_has_a_throughput_latency_chart(user, inference_request, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        plan = services.plan_create(owner=user, request_data=inference_request)
    plan.refresh_from_db()
    figure = plan_charts(plan.result)["throughput-latency"].figure
    assert len(figure["data"][0]["x"]) == len(plan.result["inference"]["curve"])


def test_bom_table_groups_by_category_with_a_total(alice_client, priced_plan):
    from decimal import Decimal

    response = alice_client.get(priced_plan.get_absolute_url())
    bom = response.context["bom"]
    lines = priced_plan.result["bom"]
    assert bom.line_count == len(lines)
    # Total = sum of every line's extended price, added up here independently of the presenter.
    expected = sum(Decimal(line["extended_price_usd"]) for line in lines)
    assert bom.total_usd == expected
    assert f"<b>{usd_text(expected)}</b>" in response.content.decode()  # money to 3 significant figures


def test_serving_page_and_report_say_memory_and_batch_as_what_they_count(
    user, alice_client, inference_request, django_capture_on_commit_callbacks
):
    """The Inference panel showed "Memory 37.4 GiB/GPU" (the cache in use) beside a breakdown totalling the whole
    80 GiB, and "Batch in flight 41" equal to "Batch per replica 41" on 2 replicas. Page and PDF now read the typed
    figures: memory allocated = the breakdown's total, the KV cache in use beside it, the batch per replica and
    for the whole fleet."""
    import html as html_lib
    import re

    from django.template.loader import render_to_string

    from planner.presenters import report_context

    plan = samples.priced_plan(user, inference_request, "serving", django_capture_on_commit_callbacks)
    inf = plan.result["inference"]
    total = sum(inf["memory_breakdown_gib"].values())
    assert inf["memory_allocated_gib_per_gpu"] == pytest.approx(total)
    assert inf["batch_fleet"] == inf["replicas"] * inf["batch"]

    def text(markup: str) -> str:
        return html_lib.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", markup)))

    page = text(alice_client.get(plan.get_absolute_url()).content.decode())
    assert "Memory allocated per GPU (the breakdown's total) 80 GiB" in page  # an H100's whole 80 GiB
    assert "KV cache in use per GPU at the planned load" in page
    assert f"Batch in flight per replica {inf['batch']} sequences" in page
    assert f"Batch in flight, whole fleet {inf['batch_fleet']} sequences" in page
    assert "Batch per replica" not in page and " Memory 37" not in page  # the twins are not shown twice

    report = text(render_to_string("planner/report.html", report_context(plan)))
    # the parts follow the stored mapping's order, which PostgreSQL's jsonb does not keep: each part, in any order
    allocated = report.split("Memory allocated per GPU 80 GiB: ")[1].split("KV cache in use")[0]
    assert "weights" in allocated and "reserve" in allocated and allocated.count(" · ") == 3
    assert "KV cache in use at the planned load" in report
    assert (
        f"Batch in flight {inf['batch']} sequences per replica, {inf['batch_fleet']} over the whole fleet of "
        f"{inf['replicas']} replicas" in report
    )
