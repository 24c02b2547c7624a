"""Optics power in IT power (issue 17): transceivers count at the watts of their LinkX data sheets, except where
a switch's own maximum power is already budgeted with optics. Worked by hand from the catalog's module watts
(hardware.md section 4) and the link counts of the fabric tests."""

from __future__ import annotations

import pytest

from engine.assumptions.registry import Assumptions
from engine.physical.fabric import size_fabrics
from engine.physical.fabric.media import choose_media
from engine.physical.fabric.optics import uncovered_optics_w
from engine.physical.fabric.types import LinkGroup


def fabrics(catalog, system_id, systems, fabric_id="auto", **overrides):
    system = catalog.systems[system_id]
    a = Assumptions(overrides=overrides)
    storage = catalog.parts["ddn-ai400x2"]
    return size_fabrics(system, systems, system.systems_per_rack, storage, 1, fabric_id, True, catalog.parts, a)


def test_h100_su_compute_optics(catalog):
    # 31 DGX H100 x 4 twin-port SR4 flat-top OSFPs x 15 W = 1,860 W, plus the UFM pair's 2 x 400G SR4 x 9 W =
    # 18 W. The QM9700's 1,720 W maximum is its figure with optics, so its own modules add nothing.
    plan = fabrics(catalog, "dgx-h100", 31)
    assert uncovered_optics_w([plan.compute], catalog.parts) == pytest.approx(124 * 15 + 2 * 9)


def test_b300_xdr_su_compute_optics(catalog):
    # One 72-system SU on Q3400 (no published switch power, so its modules count): the CX-8 800G ports take one
    # 800G DR4 OSFP (17 W) each: 576 x 17 = 9,792 W; the 8 leaves take 72 node links in 36 twin-port 1.6T
    # modules (25 W) each: 288 x 25 = 7,200 W; leaf-spine: 288 modules at the leaves and 4 spines x 72 = 288 at
    # the spines: 576 x 25 = 14,400 W. Total 31,392 W.
    plan = fabrics(catalog, "dgx-b300", 72, "infiniband-xdr", ufm_links=0)
    assert uncovered_optics_w([plan.compute], catalog.parts) == pytest.approx(9_792 + 7_200 + 14_400)


def test_active_copper_counts_the_cable_once(catalog):
    # 10 x 400G links over 4 m between OSFP cages: active copper (3-5 m), 2 links per cable -> 5 cables; the
    # cable's 3 W is the whole cable (1.5 W per end), so 15 W, not 30 W.
    group = LinkGroup(
        "compute", "leaf-spine", "leaf", "spine", 10, 400.0, 1, 1, "osfp_twin_400g", "osfp_twin_400g", 800.0, "x", 4.0
    )
    chosen = choose_media(group, catalog.parts)
    assert (chosen.medium, chosen.cables, chosen.optics_w) == ("acc", 5, 15.0)


def test_it_power_counts_optics(plan):
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-8b"},
            "training": {"tokens": 1e12, "gpus": 256},
            "hardware": {"system": "dgx-h100"},
        }
    )
    power = p["power"]
    # 32 DGX H100 need a compute fabric: at least 32 x 4 node-side modules x 15 W = 1.92 kW of optics.
    assert power["optics_kw"] >= 32 * 4 * 15 / 1000
    parts = ("systems_kw", "network_kw", "optics_kw", "storage_kw", "management_kw")
    assert power["it_kw"] == pytest.approx(sum(power[k] for k in parts), abs=0.01)
    assert "optics_kw" in p["explain"]["power.it_kw"]["inputs"]
