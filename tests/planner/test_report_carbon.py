"""The PDF report carries the plan's carbon table, as the page does: job energy, grid intensity and tonnes per
place the work could run, with the grid sources as footnotes."""

from __future__ import annotations

import re

import pytest

from tests import samples


@pytest.fixture
def priced_training_plan(user, django_capture_on_commit_callbacks):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-8b"},
        "training": {"tokens": 1e12, "gpus": 256},
        "hardware": {"system": "dgx-h100"},
        "pricing": {"years": 3, "regions": ["us-east-1"]},
    }
    return samples.priced_plan(user, body, "carbon", django_capture_on_commit_callbacks)


def test_report_prints_the_carbon_table(priced_training_plan):
    from django.template.loader import render_to_string

    from planner.presenters import report_context

    carbon = priced_training_plan.result["costs"]["carbon"]
    html = render_to_string("planner/report.html", report_context(priced_training_plan))
    assert '<h3 id="carbon">Carbon</h3>' in html
    section = html[html.index('id="carbon"') :]
    row = re.search(r"<tr><td>On-prem site</td>(.*?)</tr>", section).group(1)
    cells = [float(c.replace(",", "")) for c in re.findall(r'<td class="n">([\d,.]+)</td>', row)]
    energy_mwh, grid_g_per_kwh, tonnes = cells
    onprem = carbon["onprem"]
    assert energy_mwh == pytest.approx(float(onprem["job_energy_mwh"]), rel=0.01)
    # tonnes = MWh x 1,000 kWh/MWh x g/kWh / 1,000,000 g/t, on the printed (rounded) figures
    assert tonnes == pytest.approx(energy_mwh * grid_g_per_kwh / 1000.0, rel=0.02)
    assert section.count("<tr><td>Cloud ") == len(carbon["cloud"])


def test_report_writes_the_parallel_layout_in_words_below_the_figures(priced_training_plan):
    """The layout reads as a sentence on its own row (built from the stored layout's degrees), not as the grid's
    narrow value column nor as raw field names."""
    from django.template.loader import render_to_string

    from planner.presenters import report_context

    par = priced_training_plan.result["training"]["parallelism"]
    html = render_to_string("planner/report.html", report_context(priced_training_plan))
    row = re.search(r"<tr><th>Parallel layout</th><td>(.*?)</td></tr>", html).group(1)
    assert row.startswith(f"TP {par['tp']} · PP {par['pp']} · DP {par['dp']}")
    assert f"ZeRO-{par['zero_stage']}" in row and "stage layers" not in html
    grid = html[html.index('<table class="figures">') :]
    assert "<td>Parallel layout</td>" not in grid[: grid.index("</table>")]  # not in the two-column grid
