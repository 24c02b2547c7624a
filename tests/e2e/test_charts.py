"""The plan page's charts in a real browser: lines at their true values, labels that do not collide, the basic bundle.

Positions are measured on the drawn SVG, against the axis's own tick labels: the deadline line of a 90-day plan must
sit where 90 days falls between the "50 d" and "100 d" ticks on the log axis (log-linear interpolation), which a
line drawn at log10(90) = 1.95 days (the old fault) misses by most of the chart's height.
"""

from __future__ import annotations

import math

import pytest
from playwright.sync_api import expect

from tests import samples
from tests.e2e.conftest import ARTEFACTS

pytestmark = pytest.mark.django_db(transaction=True)

# Every text a chart draws, with its box in page pixels (hidden or empty texts left out).
TEXT_BOXES = """(root) => Array.from(root.querySelectorAll('.main-svg text')).map((t) => {
  const r = t.getBoundingClientRect();
  return {text: (t.textContent || '').trim(), x: r.x, y: r.y, w: r.width, h: r.height,
          shown: getComputedStyle(t).display !== 'none' && t.getAttribute('visibility') !== 'hidden'};
}).filter((b) => b.shown && b.text && b.w > 0 && b.h > 0)"""


@pytest.fixture
def deadline_plan(logged_in, django_user_model, django_capture_on_commit_callbacks):
    """A priced 70B training plan on DGX H100 with a 90-day deadline (the page reads it as stored)."""
    owner = django_user_model.objects.get(username="eve")
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-70b"},
        "training": {"tokens": 2e12, "deadline_days": 90},
        "hardware": {"system": "dgx-h100"},
        "pricing": {"years": 5, "regions": ["us-east-1"]},
    }
    return samples.priced_plan(owner, body, "deadline 90", django_capture_on_commit_callbacks)


def _tick_centre_y(page, chart: str, label: str) -> float:
    box = page.locator(f"#chart-{chart} .ytick text", has_text=label).first.bounding_box()
    assert box is not None, f"no y tick labelled {label!r}"
    return box["y"] + box["height"] / 2


def _overlaps(a: dict, b: dict, slack: float = 1.0) -> bool:
    return (
        a["x"] + slack < b["x"] + b["w"]
        and b["x"] + slack < a["x"] + a["w"]
        and a["y"] + slack < b["y"] + b["h"]
        and b["y"] + slack < a["y"] + a["h"]
    )


def test_deadline_line_sits_at_its_value_and_labels_do_not_collide(logged_in, live_server, deadline_plan):
    page = logged_in
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}{deadline_plan.get_absolute_url()}")
    expect(page.locator("#chart-frontier .main-svg").first).to_be_visible()
    # The page loads the basic bundle, never the full one.
    scripts = page.eval_on_selector_all("script[src]", "els => els.map((e) => e.src)")
    assert any(src.endswith("/vendor/plotly-basic.min.js") for src in scripts)
    assert not any(src.endswith("/plotly.min.js") for src in scripts)

    # The deadline: a horizontal line at 90 days on the log axis, between the 50 d and 100 d ticks.
    line = page.locator("#chart-frontier .shapelayer path").first
    box = line.bounding_box()
    assert box is not None and box["height"] < 4  # horizontal
    drawn_y = box["y"] + box["height"] / 2
    y50, y100 = _tick_centre_y(page, "frontier", "50 d"), _tick_centre_y(page, "frontier", "100 d")
    expected_y = y50 + (y100 - y50) * (math.log10(90) - math.log10(50)) / (math.log10(100) - math.log10(50))
    assert drawn_y == pytest.approx(expected_y, abs=1.5)
    # The legend names it with its true value.
    expect(page.locator("#chart-frontier .legend")).to_contain_text("deadline 90 days")

    # Readable log ticks: 1-2-5 steps with their unit, no bare "2 5 10 2 5".
    ticks = page.eval_on_selector_all("#chart-frontier .ytick text", "els => els.map((e) => e.textContent)")
    assert ticks and all(t.endswith(" d") and t.split()[0].replace(",", "")[0] in "125" for t in ticks), ticks

    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.locator("section.charts").screenshot(path=str(ARTEFACTS / "charts-section.png"))
    _labels_whole_and_apart(page)
    # On a phone a chart keeps its width and scrolls inside its card; the card itself does not overflow.
    page.set_viewport_size({"width": 390, "height": 900})
    page.wait_for_timeout(300)  # plotly redraws on resize
    _labels_whole_and_apart(page)
    section = page.locator("section.charts")
    assert section.evaluate("(s) => s.scrollWidth <= s.clientWidth + 1")
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    section.screenshot(path=str(ARTEFACTS / "charts-section-390.png"))


def _labels_whole_and_apart(page) -> None:
    """No two texts of any chart overlap (ticks, titles, legend, bar labels), and none is cut by the chart's edge."""
    charts = page.locator("div[data-figure]")
    for index in range(charts.count()):
        chart = charts.nth(index)
        chart.scroll_into_view_if_needed()
        boxes = chart.evaluate(TEXT_BOXES)
        assert boxes, f"chart {index} drew no text"
        name = chart.get_attribute("id")
        clashes = [(a["text"], b["text"]) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if _overlaps(a, b)]
        assert not clashes, f"{name}: overlapping labels {clashes[:5]}"
        frame = chart.locator(".main-svg").first.bounding_box()
        cut = [b["text"] for b in boxes if b["x"] < frame["x"] - 1 or b["x"] + b["w"] > frame["x"] + frame["width"] + 1]
        assert not cut, f"{name}: labels cut by the chart's edge {cut[:5]}"


def test_power_chart_limits_are_legend_entries_not_text_across_bars(logged_in, live_server, deadline_plan):
    page = logged_in
    page.goto(f"{live_server.url}{deadline_plan.get_absolute_url()}")
    chart = page.locator("#chart-power-per-rack")
    expect(chart.locator(".main-svg").first).to_be_visible()
    legend = chart.locator(".legend").text_content() or ""
    assert "air cooling limit" in legend and "racks cooled by air + containment" in legend
    assert "air_containment" not in (chart.text_content() or "")  # no raw keys anywhere in the chart
    # No annotation text is drawn inside the plot area at all.
    assert chart.locator(".annotation").count() == 0


def test_charts_section_passes_an_accessibility_scan(logged_in, live_server, deadline_plan):
    """axe on the charts section: no serious or critical violation (each chart is a figure named by its title,
    scrollable with the keyboard on a narrow screen, with no interactive controls nested in an image)."""
    from axe_playwright_python.sync_playwright import Axe

    page = logged_in
    page.goto(f"{live_server.url}{deadline_plan.get_absolute_url()}")
    expect(page.locator("#chart-frontier .main-svg").first).to_be_visible()
    violations = Axe().run(page, context="section.charts").response["violations"]
    serious = [(v["id"], len(v["nodes"])) for v in violations if v["impact"] in ("serious", "critical")]
    assert not serious
