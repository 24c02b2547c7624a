"""The SVG diagrams read as drawings: parsed with xml.etree, counted against numbers worked out by hand.

Racks drawn = racks in the plan (groups x counts add up), every device is named, no text is smaller than 10 px or
reaches past the drawing's edge, a drawing fits its card (page) or the A4 column (PDF, printed at its own size so
10 px = 7.5 pt), a 16,384-GPU topology stays a bounded drawing, and hostile names are escaped.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from planner.outputs.plan_view import plan_view
from planner.outputs.svg.base import PAGE_WIDTH_PX, PRINT_WIDTH_PX
from planner.outputs.svg.diagrams import page_diagrams, print_diagrams
from planner.outputs.svg.floor import floor_svg
from planner.outputs.svg.racks import racks_svg
from planner.outputs.svg.topology import topology_svg
from planner.outputs.view_models import RackDeviceView, RacksView, RackView

SVG = "{http://www.w3.org/2000/svg}"
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "plans"
STYLE = (Path(__file__).resolve().parents[2] / "planner" / "outputs" / "svg" / "style.css").read_text()
FONT_PX = {name: float(size) for name, size in re.findall(r"\.([\w-]+) \{[^}]*font-size: ([\d.]+)px", STYLE)}
# A4 text column: 210 mm - 2 x 14 mm = 182 mm = 687.9 CSS px; one CSS px prints as 0.75 pt.
A4_COLUMN_PX = 182 / 25.4 * 96
HOSTILE = '<script>alert("x")</script> & "quoted" \'single\''


def _golden_view(name: str):
    return plan_view(json.loads((GOLDEN / f"{name}.json").read_text()))


def _parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def _groups(root: ET.Element, css: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if css in (g.get("class") or "").split()]


def _texts(root: ET.Element) -> list[ET.Element]:
    return list(root.iter(f"{SVG}text"))


def _font_px(text: ET.Element) -> float:
    sizes = [FONT_PX[c] for c in (text.get("class") or "").split() if c in FONT_PX]
    assert sizes, f"text {text.text!r} has no sized class: it would fall back to the viewer's default"
    return max(sizes)


def _device(units: int, quantity: int, device_id: str, kind: str, label: str) -> RackDeviceView:
    return RackDeviceView(device_id, quantity, units, kind, label)


def _small_racks() -> RacksView:
    """Two DGX H100 racks (4 x 8U = 32U, 4 x 10.2 = 40.8 kW, N+1 = 3 feeds), one network rack (9 x QM9700 1U,
    2 x SN4600C 2U, 3 x SN2201 1U = 16U) in row 1, one management rack (2 UFM 1U, 5 servers 2U, 1 storage 2U =
    14U) in the central row 2."""
    dgx = _device(8, 4, "dgx-h100", "system", "NVIDIA DGX H100")
    network = (
        _device(1, 9, "qm9700", "switch", "NVIDIA Quantum-2 QM9700 NDR InfiniBand switch (managed)"),
        _device(2, 2, "sn4600c", "switch", "NVIDIA Spectrum-3 SN4600C 100GbE switch"),
        _device(1, 3, "sn2201", "switch", "NVIDIA Spectrum SN2201 1GbE management switch"),
    )
    management = (
        _device(1, 2, "ufm-3.1", "ufm", "NVIDIA UFM Enterprise Appliance 3.1 (NDR)"),
        _device(2, 5, "mgmt-server-2s", "management_server", "2-socket x86 management server"),
        _device(2, 1, "ddn-ai400x2", "storage", "DDN AI400X2 parallel file system appliance (NVMe)"),
    )
    racks = (
        RackView("r01-c01", "compute", 40.8, 3, "air_containment", 32, (dgx,), 1),
        RackView("r01-c02", "compute", 40.8, 3, "air_containment", 32, (dgx,), 1),
        RackView("r01-n01", "network", 16.7, 2, "air", 16, network, 1),
        RackView("r02-m01", "management", 9.9, 2, "air", 14, management, 2),
    )
    return RacksView(48, racks, (("air", 20.0), ("air + containment", 41.0)), None)


def _assert_laid_out(svg: str, max_width_px: float) -> ET.Element:
    """Parses; no wider than allowed; every text sized >= 10 px and (by a generous width estimate) inside."""
    root = _parse(svg)
    width = float(root.get("width", "0").removesuffix("px"))
    assert 0 < width <= max_width_px
    for text in _texts(root):
        size, content = _font_px(text), "".join(text.itertext())
        assert size >= 10, content
        extent = len(content) * size * 0.6
        x = float(text.get("x", "0"))
        left = x - extent / 2 if text.get("text-anchor") == "middle" else x
        assert left >= 0 and left + extent <= width, f"{content!r} reaches past the drawing ({left + extent:.0f} px)"
    return root


def test_small_plan_elevations_draw_every_rack_once_per_build_and_name_every_device():
    root = _assert_laid_out(racks_svg(_small_racks()), PAGE_WIDTH_PX)
    groups = _groups(root, "rack-group")
    assert [(g.get("data-role"), int(g.get("data-count"))) for g in groups] == [
        ("compute", 2),
        ("network", 1),
        ("management", 1),
    ]
    # Devices per rack: 4 systems; 9 + 2 + 3 = 14 switches; 2 + 5 + 1 = 8 management units.
    devices = [[int(d.get("data-count")) for d in _groups(g, "device")] for g in groups]
    assert [sum(counts) for counts in devices] == [4, 14, 8]
    assert devices[0] == [1, 1, 1, 1]  # 8U systems one by one; small runs once with their count
    for group in groups:
        for device in _groups(group, "device"):
            label = "".join(device.find(f"{SVG}text").itertext())
            assert label, "an unlabelled device"
    text = " ".join("".join(t.itertext()) for t in _texts(root))
    for expected in ("Compute x 2", "40.8 kW · 3 feeds", "air + containment", "32U used of 48U", "qm9700 x 9"):
        assert expected in text
    assert "4 racks: 2 compute, 1 network, 1 management" in text


def test_small_plan_floor_plan_has_each_row_with_its_racks():
    root = _assert_laid_out(floor_svg(_small_racks()), PAGE_WIDTH_PX)
    rows = _groups(root, "floor-row")
    assert [(int(r.get("data-rows")), int(r.get("data-racks"))) for r in rows] == [(1, 3), (1, 1)]
    cells = [r for r in root.iter(f"{SVG}rect") if "floor-rack" in (r.get("class") or "").split()]
    assert len(cells) == 4
    labels = ["".join(t.itertext()) for t in root.iter(f"{SVG}text") if t.get("class") == "dev"]
    assert labels == ["40.8", "40.8", "16.7 N", "9.9 M"]


def test_16k_gpu_plan_elevations_and_floor_count_every_rack():
    """16,384 GPUs = 2,048 DGX H100 at 4 per rack (DC Design H100: 4 x 10.2 = 40.8 kW) = 512 compute racks; the
    drawing's count adds up to the plan's 678 racks, and its compute count is the headline's cluster.racks."""
    view = _golden_view("train-16k-gpus")
    assert view.result.cluster.racks == 16384 // 8 // 4 == 512
    root = _assert_laid_out(racks_svg(view.racks), PAGE_WIDTH_PX)
    groups = _groups(root, "rack-group")
    total = sum(int(g.get("data-count")) for g in groups)
    assert total == len(view.racks.racks) == view.result.cluster.racks_total == 678
    assert sum(int(g.get("data-count")) for g in groups if g.get("data-role") == "compute") == 512
    assert len(groups) <= 16  # distinct builds, not racks
    floor = _assert_laid_out(floor_svg(view.racks), PAGE_WIDTH_PX)
    rows = _groups(floor, "floor-row")
    assert sum(int(r.get("data-rows")) * int(r.get("data-racks")) for r in rows) == 678
    # 64 full SU rows of 8 compute racks + their network rack, an SU row with only its network rack, the central row.
    assert sum(int(r.get("data-rows")) for r in rows) == 66 and len(rows) <= 8


def test_16k_gpu_topology_is_a_bounded_aggregate_with_the_plans_counts():
    view = _golden_view("train-16k-gpus")
    root = _assert_laid_out(topology_svg(view.topology), PAGE_WIDTH_PX)
    elements = sum(1 for _ in root.iter())
    assert elements < 400, elements
    text = " ".join("".join(t.itertext()) for t in _texts(root))
    # 2,048 systems x 8 compute NICs = 16,384 node links at 400G (NDR); 65 SUs x 8 rail leaves = 520 leaves.
    assert "16,384 x 400G" in text and "520 leaf switches in 65 SUs" in text and "8 leaf switches" in text
    assert "SU 1" in text and "SU 65" in text and "more SUs alike" in text
    assert "512 core switches" in text and "528 spine switches" in text
    small = _parse(topology_svg(_golden_view("train-70b-dgx-h100").topology))
    assert sum(1 for _ in small.iter()) < 400


def test_small_topology_draws_each_switch_of_small_tiers():
    """GB200 NVL72 x 4 (288 GPUs, below one SU): each of the 4 rails needs 72 ports, more than a 64-port QM9700, so
    3 leaves per rail (12) under 6 spines; storage is an MLAG pair (2); out-of-band one SN2201. Every tier is small,
    so each switch is drawn as its own icon: 12 + 6 + 2 + 1 = 21."""
    view = _golden_view("train-70b-gb200-nvl72")
    fabric = view.result.fabric
    assert (fabric.compute.leaf, fabric.compute.spine, fabric.compute.core) == (4 * 3, 6, 0)
    assert (fabric.storage.leaf, fabric.storage.spine, fabric.oob.leaf, fabric.oob.spine) == (2, 0, 1, 0)
    root = _assert_laid_out(topology_svg(view.topology), PAGE_WIDTH_PX)
    icons = [r for r in root.iter(f"{SVG}rect") if "switch-icon" in (r.get("class") or "")]
    assert len(icons) == 12 + 6 + 2 + 1


@pytest.mark.parametrize("name", ["train-16k-gpus", "train-70b-dgx-h100", "serve-8b-b300-small"])
def test_print_diagrams_fit_the_a4_column_at_their_own_size(name):
    """No wider than the A4 column, so WeasyPrint prints them unscaled: 10 px text = 7.5 pt >= 7 pt; no taller
    than a page's text area (263 mm = 994 px), since a drawing cannot break across pages."""
    svgs = print_diagrams(_golden_view(name))
    assert svgs
    for svg in svgs:
        root = _assert_laid_out(svg, PRINT_WIDTH_PX)
        assert PRINT_WIDTH_PX <= A4_COLUMN_PX
        assert min(_font_px(t) for t in _texts(root)) * 0.75 >= 7
        assert float(root.get("height").removesuffix("px")) <= 263 / 25.4 * 96
    elevations = [svg for svg in svgs if "Rack elevations" in svg]
    counts = [int(g.get("data-count")) for svg in elevations for g in _groups(_parse(svg), "rack-group")]
    assert sum(counts) == len(_golden_view(name).racks.racks)


def test_page_diagrams_by_plan_size():
    """Serving on one DGX B300 (4 racks: its compute rack, a row network rack, a central network and a management
    rack) gets no floor plan; 1,024 GPUs in 41 racks over 6 rows do."""
    assert set(page_diagrams(_golden_view("train-70b-dgx-h100"))) == {"topology", "racks", "floor"}
    assert set(page_diagrams(_golden_view("serve-8b-b300-small"))) == {"topology", "racks"}


def test_hostile_names_are_escaped_in_every_diagram():
    racks = _small_racks()
    evil_device = _device(1, 2, HOSTILE, "switch", HOSTILE)
    evil = replace(racks, racks=(*racks.racks, replace(racks.racks[2], id=HOSTILE, devices=(evil_device,))))
    view = _golden_view("train-70b-dgx-h100")
    topology = replace(view.topology, system=HOSTILE)
    for svg in (racks_svg(evil), floor_svg(evil), topology_svg(topology)):
        root = _parse(svg)  # well-formed: nothing broke out of a text or attribute
        assert not [el for el in root.iter() if el.tag.endswith("script")]
        assert "<script>" not in svg.lower() and "&lt;script&gt;" in svg.lower()
        texts = " ".join("".join(t.itertext()) for t in root.iter() if t.tag in (f"{SVG}text", f"{SVG}title"))
        assert "<script>" in texts.lower()  # shown as text (the system name is drawn upper-case)


def test_topology_names_the_system_as_its_product():
    """The diagram's title read "Networks for 15 x GB200-NVL72" (the catalog id upper-cased)."""
    view = _golden_view("train-70b-auto-90d")
    svg = topology_svg(view.topology)
    assert "Networks for 15 x NVIDIA GB200 NVL72 rack" in svg
    assert "15 x NVIDIA GB200 NVL72 rack in all" in svg and "GB200-NVL72" not in svg
