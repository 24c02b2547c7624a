"""Hand-worked facility cases: one 40.8 kW DGX H100 rack, an NVL72 rack that goes liquid, storage sizing."""

from __future__ import annotations

import math

import pytest

from engine.assumptions.registry import Assumptions
from engine.physical.build import build_physical
from engine.physical.cluster import build_cluster, usable_feed_kw
from engine.physical.cooling import airflow_cfm, coolant_lpm, cooling_method_for
from engine.physical.facility import size_site
from engine.physical.racks import feeds_for
from engine.physical.storage import size_storage
from engine.request.spec import HardwareSpec, SiteSpec


def physical(catalog, system_id, gpus, params=70e9, tokens=15e12, **overrides):
    a = Assumptions(overrides=overrides)
    system = catalog.systems[system_id]
    build, problems = build_cluster(system, gpus, HardwareSpec(system=system_id), a, catalog.parts)
    assert problems == []
    pb = build_physical(
        system,
        build,
        catalog,
        a,
        params=params,
        training_tokens=tokens,
        weight_bytes_per_param=2.0,
        gpus_per_replica=None,
    )
    return build, pb


def test_one_dgx_h100_rack_by_hand(catalog):
    a = Assumptions()
    rack_kw = 4 * 10.2  # 40.8 kW: DC Design H100, 4 systems per rack
    # Usable feed: sqrt(3) x 415 V x 60 A x 0.8 derate x 0.95 PF = 32,771 W -> NVIDIA's 32.8 kW.
    usable = usable_feed_kw(a)
    assert usable == pytest.approx(math.sqrt(3) * 415 * 60 * 0.8 * 0.95 / 1000)
    assert usable == pytest.approx(32.8, abs=0.05)
    # N+1: ceil(40.8 / 32.8) = 2 feeds carry it, plus one spare = 3 (the DC Design's "at least 3 sources").
    assert feeds_for(rack_kw, "n+1", usable) == 3
    # One feed lost: 40.8 / 2 = 20.4 kW per surviving feed, under 32.8.
    assert rack_kw / (3 - 1) == pytest.approx(20.4) and usable > 20.4
    # Cooling: 40.8 / 3.517 = 11.60 tons; airflow 3.16 x 40,800 W / 29 F = 4,445.8 CFM (dT named in assumptions).
    assert a["air_delta_t_f"] == 29.0
    assert airflow_cfm(rack_kw, 29.0) == pytest.approx(3.16 * 40800 / 29)
    assert airflow_cfm(rack_kw, 29.0) == pytest.approx(4445.8, abs=0.1)
    assert cooling_method_for(rack_kw, catalog.systems["dgx-h100"], a) == "air_containment"

    _build, pb = physical(catalog, "dgx-h100", 32)
    compute_racks = [r for r in pb.site.racks if r.role == "compute"]
    assert len(compute_racks) == 1
    rack = compute_racks[0]
    assert rack.kw == pytest.approx(40.8) and rack.feeds == 3 and rack.cooling == "air_containment"
    assert rack.rack_units == 32  # 4 x 8U
    assert rack.weight_kg == pytest.approx(160 + 4 * 130.45)  # empty rack + 4 x 130.45 kg
    assert pb.site.facility.tons == pytest.approx(pb.site.facility.it_kw / 3.517)


def test_nvl72_rack_goes_liquid(catalog):
    _build, pb = physical(catalog, "gb200-nvl72", 72)
    rack = next(r for r in pb.site.racks if r.role == "compute")
    assert rack.kw == pytest.approx(120.0) and rack.cooling == "liquid"
    # 120 kW above the 75 kW rear-door ceiling; 85 % to liquid = 102 kW.
    assert pb.site.facility.liquid_kw == pytest.approx(102.0)
    # N+N feeds: 2 x ceil(120 / 32.8) = 8.
    assert rack.feeds == 8
    # CDUs: in-rack 100 kW class -> ceil(102 / 100) = 2 working + 1 spare = 3.
    assert pb.site.cdu_part == "cdu-in-rack-100" and pb.site.cdus == 3
    # Coolant: 60 x 102 / (4.18 x 10 K) = 146.4 L/min.
    assert pb.site.coolant_lpm == pytest.approx(60 * 102 / (4.18 * 10))
    assert coolant_lpm(102.0, 10.0) == pytest.approx(146.41, abs=0.01)


def test_su_of_nvl72_moves_to_in_row_cdus(catalog):
    # 8 racks x 102 kW = 816 kW liquid: in-rack would need 9 > 4 units -> in-row 1,350 kW class: 1 + 1 spare.
    _, pb = physical(catalog, "gb200-nvl72", 576)
    assert pb.site.cdu_part == "cdu-in-row-1350" and pb.site.cdus == 2


def test_it_power_adds_network_storage_management(catalog):
    _build, pb = physical(catalog, "dgx-h100", 127 * 8)
    site = pb.site
    assert site.systems_kw == pytest.approx(127 * 10.2)
    # Compute fabric alone: (32 leaves + 16 spines) QM9700 at 1,720 W = 82.56 kW; other fabrics add more.
    assert site.network_kw > 48 * 1.72
    # Node-side optics no device figure covers: at least 127 DGX x 4 twin-port SR4 x 15 W = 7.62 kW.
    assert site.optics_kw >= 127 * 4 * 15 / 1000
    assert site.facility.it_kw == pytest.approx(
        site.systems_kw + site.network_kw + site.optics_kw + site.storage_kw + site.management_kw
    )
    assert site.facility.facility_kw == pytest.approx(site.facility.it_kw * site.facility.pue)


def test_rack_weight_limit_lowers_density(catalog):
    # 4 x 130.45 = 521.8 kg; a 400 kg limit allows floor(400 / 130.45) = 3 per rack.
    a = Assumptions(overrides={"rack_max_weight_kg": 400})
    b, _ = build_cluster(catalog.systems["dgx-h100"], 96, HardwareSpec(system="dgx-h100"), a, catalog.parts)
    assert b.systems_per_rack == 3 and b.racks == 4


def test_storage_tiers_reproduce_ra_table6(catalog):
    # H100 RA Table 6, 4-SU aggregate read/write: good 60/30, better 160/80, best 500/250 GB/s.
    for per_su, read, write in ((15, 60, 30), (40, 160, 80), (125, 500, 250)):
        a = Assumptions(overrides={"storage_read_gbps_per_su": per_su})
        st, _ = size_storage(4, 8e9, 1e9, 2.0, catalog.parts, a)
        assert (st.read_gbps, st.write_gbps) == (read, write)


def test_checkpoint_write_and_capacity(catalog):
    # 405B x 14 B = 5.67 TB per checkpoint; in 120 s -> 47.25 GB/s > the 1-SU tier write of 20 GB/s.
    st, _part = size_storage(1, 405e9, 15e12, 2.0, catalog.parts, Assumptions())
    assert st.checkpoint_tb == pytest.approx(5.67)
    assert st.write_gbps == pytest.approx(5.67e12 / 1e9 / 120)
    # Capacity: (15e12 x 4 B = 60 TB raw text + 15e12 x 4 B = 60 TB of 32-bit ids + 5 x 5.67 TB) x 1.3 = 192.855 TB.
    assert st.capacity_tb == pytest.approx(192.855)
    # Appliances: write binds, ceil(47.25 / 65) = 1; read 40 / 90 -> 1.
    assert st.appliances == 1


def test_site_layout_places_every_system(catalog):
    build, pb = physical(catalog, "dgx-b200", 40 * 8)
    placed = sum(q for r in pb.site.racks for i, q in r.items if i == "dgx-b200")
    assert placed == build.systems == 40
    assert all(r.rack_units <= 48 for r in pb.site.racks)
    assert SiteSpec() is not None and size_site is not None
