"""The chart specs against values worked out by hand, and the two renderers (plotly for the page, SVG for the PDF).

Stored plans come from tests/golden/plans (plans as the engine stores them); a freshly priced plan is used where a
field is newer than those captures (the break-even month).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from planner.outputs.chart_plotly import TRACE_TYPES, figure
from planner.outputs.chart_spec import (
    PALETTE,
    REFERENCE_COLOR,
    Axis,
    ChartSpec,
    RefLine,
    Series,
    linear_ticks,
    log_ticks,
    money,
    series_style,
)
from planner.outputs.charts import COOLING_NAMES, PURCHASE_NAMES, _batch_hover, chart_specs
from planner.outputs.view_models import FrontierPoint
from tests import samples

GOLDEN = Path(__file__).parents[1] / "golden" / "plans"
ROOT = Path(__file__).parents[2]


def _golden(name: str) -> dict:
    return json.loads((GOLDEN / f"{name}.json").read_text())


def _spec(result, key: str) -> ChartSpec:
    return next(spec for spec in chart_specs(result) if spec.key == key)


@pytest.fixture(scope="module")
def every_golden_spec() -> list[tuple[str, ChartSpec]]:
    return [(path.stem, spec) for path in sorted(GOLDEN.glob("*.json")) for spec in chart_specs(_golden(path.stem))]


# ------------------------------------------------------------------------------------------ ticks and numbers


def test_log_ticks_step_1_2_5_with_their_unit():
    # 15 to 180 days: the 1-2-5 values inside are 20, 50 and 100.
    assert log_ticks(15, 180, "d") == ((20, "20 d"), (50, "50 d"), (100, "100 d"))
    # 45 to 180 holds only 50 and 100: the neighbours outside (20 and 200) are added so the data is bracketed.
    assert [v for v, _ in log_ticks(45, 180)] == [20, 50, 100, 200]
    # GPU counts 600 to 2,500: only 1,000 and 2,000 inside, so 500 and 5,000 are added; thousands separated.
    assert [t for _, t in log_ticks(600, 2500)] == ["500", "1,000", "2,000", "5,000"]


def test_linear_ticks_cover_the_data_in_round_steps():
    ticks = linear_ticks(0, 362_000_000, money)
    assert [t for _, t in ticks] == ["$0", "$100M", "$200M", "$300M", "$400M"]
    assert [v for v, _ in linear_ticks(0, 60, step=12)] == [0, 12, 24, 36, 48, 60]


def test_money_reads_in_k_m_b_to_three_figures():
    assert money(62_806_643.49) == "$62.8M"
    assert money(950_000) == "$950k"
    assert money(1_200_000_000) == "$1.2B"
    assert money(6_430) == "$6.43k"


# ------------------------------------------------------------------------------------------ the frontier


def test_deadline_line_is_at_the_requested_days_in_data_units():
    """train-70b-auto-90d asks for 90 days. On plotly's log axis a shape takes data values (y0 = 90), while the axis
    range takes log10 values: the fault was y0 = log10(90) = 1.95, drawn near 2 days."""
    spec = _spec(_golden("train-70b-auto-90d"), "frontier")
    (deadline,) = spec.lines
    assert (deadline.axis, deadline.value, deadline.name) == ("y", 90.0, "deadline 90 days")
    layout = figure(spec)["layout"]
    (shape,) = layout["shapes"]
    assert shape["y0"] == shape["y1"] == 90.0 and shape["yref"] == "y" and shape["xref"] == "paper"
    assert layout["yaxis"]["type"] == "log"
    low, high = layout["yaxis"]["range"]
    assert low < math.log10(90) < high  # the range is in log10 units and holds the deadline
    assert 10**low <= min(min(s.y) for s in spec.series) and 10**high >= max(max(s.y) for s in spec.series)


def test_frontier_ticks_are_1_2_5_days_and_systems_have_product_names():
    spec = _spec(_golden("train-70b-auto-90d"), "frontier")
    assert [t for _, t in spec.y.ticks] == ["20 d", "50 d", "100 d", "200 d"]
    names = {s.name for s in spec.series}
    assert {"DGX H100", "GB200 NVL72", "HGX H100 OEM"} <= names


def test_a_frontier_point_on_another_batch_says_so():
    """At 3,072 GPUs no layout divides a 2,048-sequence batch (768 data-parallel ranks take 4 each: 3,072), so that
    point trains 1.5x the batch and says it; a point on the requested batch adds nothing."""
    on_request = FrontierPoint(4096, 38.3, 28.0, 0.32, 2048)
    larger = FrontierPoint(3072, 34.2, 25.3, 0.48, 3072)
    assert _batch_hover(on_request, 2048) == ""
    assert _batch_hover(larger, 2048) == ", batch 3,072 sequences (+50.0% on the 2,048 requested)"
    # a batch only a little off says by how much, not "1x"
    assert _batch_hover(FrontierPoint(5376, 115.8, 80.0, 0.4, 2052), 2048) == (
        ", batch 2,052 sequences (+0.2% on the 2,048 requested)"
    )
    assert _batch_hover(FrontierPoint(3072, 34.2, 25.3, 0.48), 2048) == ""  # a plan stored before points kept it


# ------------------------------------------------------------------------------------------ cost over time


@pytest.fixture
def priced_plan(user, django_capture_on_commit_callbacks):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-70b"},
        "training": {"tokens": 2e12, "deadline_days": 90},
        "hardware": {"system": "dgx-h100"},
        "pricing": {"years": 5, "regions": ["us-east-1"]},
    }
    return samples.priced_plan(user, body, "charts <b>&amp; 'x'", django_capture_on_commit_callbacks)


@pytest.mark.django_db
def test_break_even_months_follow_from_capex_cash_flows_and_the_monthly_rent(priced_plan):
    """Worked from the plan's own inputs: on-prem pays capex C at month 0, then year y's running cost t_y spread
    evenly over its 12 months; a rental pays r a month. In year y (F = the years before it), the lines meet k months
    in where C + F + t_y k / 12 = r (12 y + k), i.e. k = (C + F - 12 y r) / (r - t_y / 12)."""
    costs = priced_plan.result["costs"]
    capex = float(costs["onprem"]["capex_usd"])
    totals = [float(flow["total_usd"]) for flow in costs["onprem"]["finance"]["cash_flows"]]
    series = costs["comparison"]["cumulative"]["series"]
    horizon = len(costs["comparison"]["cumulative"]["months"]) - 1
    checked = 0
    for stored in series[1:]:
        rent = float(stored["usd"][-1]) / horizon  # a month's rent (the line is straight from 0)
        expected = None
        before = 0.0
        for year, total in enumerate(totals[: horizon // 12]):
            k = (capex + before - 12 * year * rent) / (rent - total / 12) if rent > total / 12 else -1
            if 0 <= k <= 12:
                expected = 12 * year + k
                break
            before += total
        assert stored.get("break_even_month") == (pytest.approx(expected, abs=0.011) if expected else None)
        checked += expected is not None
    assert checked, "this plan should have at least one rental that owning overtakes within five years"
    spec = _spec(priced_plan.result, "cost-over-time")
    markers = [s for s in spec.series if s.kind == "marker"]
    assert len(markers) == checked and all("owning pays off" in s.name for s in markers)


@pytest.mark.django_db
def test_cost_breakdown_adds_up_to_the_stored_tco(priced_plan):
    costs = priced_plan.result["costs"]["onprem"]
    spec = _spec(priced_plan.result, "cost-breakdown")
    bars = sum(sum(s.x) for s in spec.series)
    # TCO = capex + the running costs of the horizon's years (stored figures, summed here by hand).
    flows = costs["finance"]["cash_flows"][: costs["years"]]
    assert float(costs["tco_usd"]) == pytest.approx(
        float(costs["capex_usd"]) + sum(float(f["total_usd"]) for f in flows), abs=0.01
    )
    assert bars == pytest.approx(float(costs["tco_usd"]), abs=1.0)


def test_cost_breakdown_labels_round_like_the_page(every_golden_spec):
    """Each bar's label has three significant figures as the page's money does: a support line of exactly $1.00M
    was labelled "$1M" and $60,000 "$60k" beside "$3.05M" and "$2.96k" on the next bars."""
    three_figures = re.compile(r"^-?\$(\d\.\d\d|\d\d\.\d|\d\d\d)[kMB]$|^-?\$\d{1,3}(\.\d+)?$")
    checked = 0
    for plan, spec in every_golden_spec:
        if spec.key != "cost-breakdown":
            continue
        for series in spec.series:
            for value, text in zip(series.x, series.text, strict=True):
                assert three_figures.match(text), f"{plan}: {value} labelled {text!r}"
                checked += 1
    assert checked > 100


# ------------------------------------------------------------------------------------------ every chart


def test_palette_is_distinct_and_each_charts_series_are_told_apart(every_golden_spec):
    assert len(set(PALETTE)) == len(PALETTE) >= 10 and REFERENCE_COLOR not in PALETTE
    # Up to 10 series: each its own colour; up to 18: each its own dash and marker (told apart without colour).
    assert len({series_style(i).color for i in range(10)}) == 10
    assert len({(series_style(i).dash, series_style(i).marker) for i in range(18)}) == 18
    for plan, spec in every_golden_spec:
        lines = [s for s in spec.series if s.kind == "line"]
        colors = [s.color for s in lines]
        assert len(colors) == len(set(colors)), f"{plan} {spec.key}: two lines share a colour"
        marked = [s for s in lines if s.marker]
        shapes = [(s.dash, s.marker) for s in marked]
        assert len(shapes) == len(set(shapes)), f"{plan} {spec.key}: two lines share a dash and marker"
        unmarked = [s.dash for s in lines if not s.marker]
        assert len(unmarked) <= 6 or len(set(unmarked)) == 6, f"{plan} {spec.key}: dashes not all used"
        bars = [s.color for s in spec.series if s.kind == "bar"]
        assert len(bars) == len(set(bars)), f"{plan} {spec.key}: two bar series share a colour"


def test_no_raw_keys_in_names_axes_or_categories(every_golden_spec):
    raw = (set(PURCHASE_NAMES) - {"spot"}) | {key for key in COOLING_NAMES if "_" in key} | {"opex:", "usd"}
    for plan, spec in every_golden_spec:
        words = [spec.title, spec.x.title, spec.y.title, *spec.x.categories, *spec.y.categories]
        words += [s.name for s in spec.series] + [line.name for line in spec.lines]
        for text in words:
            assert not any(re.search(rf"(^|\W){re.escape(key)}(\W|$)", text) for key in raw), f"{plan}: {text!r}"


def test_power_chart_limits_come_from_the_plans_assumptions():
    plan = _golden("train-70b-auto-90d")
    spec = _spec(plan, "power-per-rack")
    assumptions = plan["assumptions"]
    limits = {line.name: line.value for line in spec.lines}
    assert limits == {
        f"air cooling limit {assumptions['cooling_air_max_kw']['value']:g} kW": 20.0,
        f"air + containment cooling limit {assumptions['cooling_containment_max_kw']['value']:g} kW": 41.0,
        f"rear-door HX cooling limit {assumptions['cooling_rdhx_max_kw']['value']:g} kW": 75.0,
    }
    # Every rack is in exactly one bar: the counts in the labels add up to the plan's racks.
    counts = [int(label.split()[0].replace(",", "")) for label in spec.y.categories]
    assert sum(counts) == len(plan["racks"]["layout"])


def test_every_trace_type_is_in_the_basic_plotly_bundle(every_golden_spec):
    """plotly.js-basic provides scatter, bar and pie; the page loads nothing else."""
    emitted = {trace["type"] for _, spec in every_golden_spec for trace in figure(spec)["data"]}
    assert emitted <= TRACE_TYPES <= {"scatter", "bar", "pie"}
    bundle = ROOT / "var" / "vendor" / "plotly-basic.min.js"
    assert bundle.is_file(), "run scripts/vendor_assets.py (make install does)"
    text = bundle.read_text(encoding="utf-8")
    assert "plotly.js (basic - minified) v4.1.1" in text[:200]
    for trace_type in emitted:
        assert f'moduleType:"trace",name:"{trace_type}"' in text, f"{trace_type} is not in the bundle"


# ------------------------------------------------------------------------------------------ the static SVG


def _hostile_spec() -> ChartSpec:
    hostile = "<script>alert(1)</script> & \"$1M\" and '$2M' ]]>"
    return ChartSpec(
        key="hostile",
        title=hostile,
        x=Axis("GPUs", log=True, ticks=((100, "100"), (1000, "1,000")), range=(80, 1200)),
        y=Axis("days", log=True, ticks=((20, "20 d"), (50, "50 d"), (100, "100 d")), range=(15, 130)),
        series=(Series(hostile, (100.0, 1000.0), (120.0, 18.0), marker="circle"),),
        lines=(RefLine("y", 90.0, "deadline 90 days"),),
    )


def test_static_svg_escapes_text_and_keeps_dollars_literal():
    from planner.outputs.chart_static import chart_svg

    svg = chart_svg(_hostile_spec())
    assert svg.startswith("<svg") and "<script" not in svg and "]]>" not in svg.replace("]]&gt;", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp;" in svg
    assert "$1M" in svg and "$2M" in svg  # not typeset as mathematics
    assert "DejaVu Sans" in svg


def test_static_svg_draws_the_deadline_at_90_on_its_log_axis():
    """Measured in the SVG: the deadline line's y against the y of the 50 d and 100 d tick marks, log-linearly
    interpolated (SVG y grows downwards; the interpolation does not care)."""
    from planner.outputs.chart_static import chart_svg

    svg = chart_svg(_hostile_spec())
    ticks = {
        label: float(y)
        for y, label in re.findall(r'<g id="ytick_\d+">.*?<use [^>]*y="([\d.]+)".*?>([^<]+)</text>', svg, flags=re.S)
    }
    lines = re.findall(r'<path d="M [\d.]+ ([\d.]+) \nL [\d.]+ \1 \n"[^>]*stroke-dasharray[^>]*stroke: #000000', svg)
    assert len(lines) == 1, "one horizontal dashed black line: the deadline"
    y50, y100 = ticks["50 d"], ticks["100 d"]
    expected = y50 + (y100 - y50) * (math.log10(90) - math.log10(50)) / (math.log10(100) - math.log10(50))
    assert float(lines[0]) == pytest.approx(expected, abs=0.05)


# ------------------------------------------------------------------------------------------ the PDF


@pytest.mark.django_db
def test_the_report_pdf_carries_the_charts(priced_plan, tmp_path):
    from pypdf import PdfReader

    from planner.outputs.pdf import render_pdf
    from planner.presenters import report_context

    data = render_pdf("planner/report.html", report_context(priced_plan))
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)
    for title in ("Time to train vs GPUs, per system", "Power per rack vs cooling limits", "Cumulative cost over"):
        assert title in text
    assert "deadline 90 days" in text
    # Drawn, not only written: the pages carry the palette's blue (the on-prem line, the air-cooled bars).
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(data)
    subprocess.run(["pdftoppm", "-r", "40", "-png", str(pdf), str(tmp_path / "page")], check=True)
    import numpy as np
    from PIL import Image

    blue = np.array([0x00, 0x72, 0xB2])
    found = 0
    for png in sorted(tmp_path.glob("page*.png")):
        pixels = np.asarray(Image.open(png).convert("RGB"), dtype=int)
        found += int((np.abs(pixels - blue) < 12).all(axis=2).sum())
    assert found > 200


# ------------------------------------------------------------------------------------------ the bundle script


def _vendor_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("vendor_assets", ROOT / "scripts" / "vendor_assets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vendor_integrity_is_npms_sha512_form():
    vendor = _vendor_module()
    # sha512 of no bytes, base64 (FIPS 180-4 test vector cf83e135...927da3e, base64-encoded).
    assert vendor.integrity(b"") == (
        "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="
    )


def test_vendor_refuses_a_tarball_that_does_not_match_the_pin():
    vendor = _vendor_module()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        payload = b"window.Plotly = 'not the real bundle';"
        info = tarfile.TarInfo(vendor.MEMBER)
        info.size = len(payload)
        archive.addfile(info, io.BytesIO(payload))
    with pytest.raises(vendor.VendorError, match="does not match the pinned integrity"):
        vendor.extract(buffer.getvalue())


def test_vendor_skips_npm_when_the_pinned_file_is_present(monkeypatch, tmp_path):
    vendor = _vendor_module()
    target = tmp_path / "plotly-basic.min.js"
    target.write_bytes((ROOT / "var" / "vendor" / "plotly-basic.min.js").read_bytes())
    monkeypatch.setattr(vendor, "TARGET", target)
    monkeypatch.setattr(vendor, "VENDOR", tmp_path)

    def no_network(destination):
        raise AssertionError("npm must not run when the file is present and verified")

    monkeypatch.setattr(vendor, "_npm_pack", no_network)
    assert vendor.main() == 0
    # A corrupted file is fetched again (here: the fake npm refuses, and main reports the failure, writes nothing).
    target.write_bytes(b"tampered")
    monkeypatch.setattr(vendor, "_npm_pack", lambda destination: (_ for _ in ()).throw(vendor.VendorError("offline")))
    assert vendor.main() == 1
    assert target.read_bytes() == b"tampered"


def test_static_charts_never_write_to_home(tmp_path):
    """The worker draws report charts with matplotlib, which keeps a config and font cache: it goes under var/
    (MPLCONFIGDIR), never in $HOME. Checked in a fresh interpreter, where matplotlib picks its folders."""
    home, var = tmp_path / "home", tmp_path / "var"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), PLANNER_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="config.settings.test")
    script = (
        "import django; django.setup()\n"
        "from planner.outputs.chart_spec import Axis, ChartSpec, Series\n"
        "from planner.outputs.chart_static import chart_svg\n"
        "spec = ChartSpec('k', 't', Axis('x'), Axis('y'), (Series('s', (1.0, 2.0), (3.0, 4.0)),))\n"
        "assert chart_svg(spec).startswith('<svg')\n"
    )
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, check=True, timeout=120)
    assert list(home.iterdir()) == []
    assert (var / "matplotlib").is_dir()


def test_every_system_of_a_nine_system_frontier_has_its_own_colour_dash_and_marker():
    """The auto plan over every catalog system (9 frontier lines): the case where two lines shared a colour."""
    spec = _spec(_golden("train-70b-auto-90d"), "frontier")
    lines = [s for s in spec.series if s.kind == "line"]
    assert len(lines) == 9
    assert len({s.color for s in lines}) == 9
    assert len({(s.dash, s.marker) for s in lines}) == 9
    traces = [t for t in figure(spec)["data"] if t.get("mode") == "lines+markers"]
    assert len({(t["line"]["color"], t["line"]["dash"], t["marker"]["symbol"]) for t in traces}) == 9
