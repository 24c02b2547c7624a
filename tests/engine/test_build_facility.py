"""Build (systems, racks, SUs) and facility (power, cooling) against the facility and fabric references."""

from __future__ import annotations

import pytest

from engine.assumptions.registry import Assumptions
from engine.physical.cluster import build_cluster
from engine.physical.cooling import cooling_method_for
from engine.physical.facility import size_facility
from engine.request.spec import HardwareSpec, SiteSpec


def build(catalog, system_id, gpus, **hardware):
    return build_cluster(catalog.systems[system_id], gpus, HardwareSpec(system=system_id, **hardware), Assumptions())


def test_dgx_h100_counts(catalog):
    b, problems = build(catalog, "dgx-h100", 100)
    assert problems == []
    # ceil(100 / 8) = 13 systems = 104 GPUs; 4 per rack -> 4 racks; SU of 32 -> 1.
    assert (b.systems, b.gpus, b.racks, b.scalable_units) == (13, 104, 4, 1)


def test_su_boundary_and_b200_two_per_rack(catalog):
    b, _ = build(catalog, "dgx-b200", 33 * 8)
    assert (b.systems, b.racks, b.scalable_units) == (33, 17, 2)  # 2 per rack; 33 > 32 -> 2 SUs


def test_nvl72_one_rack_per_system_and_576_gpu_su(catalog):
    b, _ = build(catalog, "gb200-nvl72", 600)
    # ceil(600 / 72) = 9 racks = 648 GPUs; SU = 8 racks (576 GPUs) -> 2 SUs.
    assert (b.systems, b.gpus, b.racks, b.scalable_units) == (9, 648, 9, 2)


def test_rack_budget_lowers_density(catalog):
    b, _ = build(catalog, "dgx-h100", 64, rack_kw=25)
    assert b.systems_per_rack == 2 and b.racks == 4  # floor(25 / 10.2) = 2 per rack, 8 systems


def test_rack_budget_below_one_system_is_a_problem(catalog):
    b, problems = build(catalog, "gb200-nvl72", 72, rack_kw=100)
    assert b is None and "rack power" in problems[0]


def test_liquid_system_cannot_be_air_cooled(catalog):
    b, problems = build(catalog, "gb300-nvl72", 72, cooling="air")
    assert b is None and "liquid" in problems[0]


def test_forced_air_caps_rack_load(catalog):
    b, _ = build(catalog, "dgx-b300", 64, cooling="air")
    assert b.systems_per_rack == 2  # floor(41 / 14.5) = 2 instead of 4 (58 kW needs rear doors)


@pytest.mark.parametrize(
    ("kw", "method"),
    [
        (15, "air"),
        (20, "air"),
        (30, "air_containment"),
        (40.8, "air_containment"),
        (57, "rdhx"),
        (75, "rdhx"),
        (80, "liquid"),
    ],
)
def test_cooling_thresholds(catalog, kw, method):
    # facility.md section 4 bands (containment ceiling 41 kW keeps NVIDIA's 40.8 kW DGX H100 rack on air).
    assert cooling_method_for(kw, catalog.systems["dgx-h100"], Assumptions()) == method


def test_facility_power_and_air_cooling(catalog):
    system = catalog.systems["dgx-h100"]
    b, _ = build(catalog, "dgx-h100", 100)
    fac = size_facility(b, system, "auto", SiteSpec(pue=1.3), Assumptions())
    # 13 x 10.2 kW = 132.6 kW IT; x 1.3 = 172.38 kW; fullest rack 4 x 10.2 = 40.8 kW; 132.6 / 3.517 = 37.70 t.
    assert fac.it_kw == pytest.approx(132.6)
    assert fac.facility_kw == pytest.approx(172.38)
    assert fac.per_rack_kw == pytest.approx(40.8)
    assert fac.cooling_method == "air_containment"
    assert (fac.liquid_kw, fac.air_kw) == (0.0, pytest.approx(132.6))
    assert fac.tons == pytest.approx(37.70, abs=0.01)


def test_facility_liquid_split_and_default_pue(catalog):
    system = catalog.systems["gb200-nvl72"]
    b, _ = build(catalog, "gb200-nvl72", 600)
    fac = size_facility(b, system, "auto", SiteSpec(), Assumptions())
    # 9 x 120 kW = 1,080 kW; 15 % residual air = 162 kW, liquid 918 kW; PUE default for liquid 1.2 -> 1,296 kW.
    assert fac.it_kw == pytest.approx(1080)
    assert fac.liquid_kw == pytest.approx(918) and fac.air_kw == pytest.approx(162)
    assert fac.pue == 1.2 and fac.facility_kw == pytest.approx(1296)
