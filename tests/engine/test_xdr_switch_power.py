"""The XDR switch's power is unpublished; an estimate scaled by switching capacity beats leaving it at 0 W (107
switch racks at 0 kW understated a 100K-GPU XDR plan's IT power)."""

from __future__ import annotations

import pytest

from engine import run_plan, to_json, validate_request


def test_q3400_power_is_the_previous_generation_scaled_by_capacity(catalog):
    q3400 = catalog.parts["q3400"]
    # 144 ports x 800 Gb/s = 115.2 Tb/s. QM9700: 747 W (passive DAC) / 51.2 Tb/s = 14.59 W per Tb/s -> 1,681 W;
    # SN5600: 940 W typical / 51.2 Tb/s = 18.36 W per Tb/s -> 2,115 W. Typical the lower, budgeted the higher.
    assert q3400.spec["ports"] * q3400.spec["port_gbps"] / 1000 == pytest.approx(115.2)
    assert q3400.power_typ_w == pytest.approx(747 / 51.2 * 115.2, abs=5)
    assert q3400.power_max_w == pytest.approx(940 / 51.2 * 115.2, abs=10)
    assert "estimate" in q3400.confidence


def test_an_xdr_build_counts_its_switches_power(catalog):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-70b"},
        "hardware": {"system": "gb200-nvl72", "fabric": "infiniband-xdr"},
        "training": {"tokens": 1e12, "gpus": 4608},
    }
    plan = to_json(run_plan(validate_request(body, catalog), catalog))
    assert plan["feasible"], plan["problems"]
    assert plan["power"]["power_not_published"] == []
    switches = sum(line["quantity"] for line in plan["bom"] if line["part_number"] == "Q3400-RA")
    assert switches > 0
    # Every XDR switch counts its 2.12 kW budget in the network's power (with the other networks' switches on top).
    assert plan["power"]["network_kw"] >= switches * 2.12
