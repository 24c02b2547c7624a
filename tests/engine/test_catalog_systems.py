"""Systems people trained on: H800 (DeepSeek-V3) and AWS training instances, planned and kept out of `auto`.

Figures checked against the vendors' own numbers: p5.48xlarge has 3,200 Gbps of EFA = 400 GB/s per 8 GPUs = 50 GB/s
per GPU, the same as a DGX H100's 8 x 400G; the H800 is an H100 with 400 GB/s NVLink.
"""

from __future__ import annotations

import dataclasses

import pytest

from engine import run_plan, to_json, validate_request
from engine.assumptions.registry import Assumptions
from engine.performance.roofline import efficiency_for


def _plan(catalog, system: str, **extra):
    body = {"workload": "training", "model": {"preset": "llama-3-8b"}, "hardware": {"system": system},
            "training": {"tokens": 1e11, "gpus": 64}, **extra}  # fmt: skip
    return to_json(run_plan(validate_request(body, catalog), catalog))


def test_every_system_names_its_fabric_and_sources(catalog):
    for system in catalog.systems.values():
        assert system.network in ("infiniband", "roce", "efa"), system.id
        assert system.source and system.as_of[:2] == "20", system.id
    for gpu in catalog.gpus.values():
        assert gpu.sm_count and gpu.sm_count >= 100, gpu.id


def test_aws_instances_carry_their_efa_bandwidth(catalog):
    p5, dgx = catalog.systems["aws-p5"], catalog.systems["dgx-h100"]
    assert (p5.network, p5.cloud_instance_type, p5.rented) == ("efa", "p5.48xlarge", True)
    assert p5.compute_nic_count * p5.compute_nic_gbps == 3200  # 32 x 100 Gbps EFAv2
    assert p5.scaleout_gbyte_s_per_gpu == pytest.approx(50.0) == dgx.scaleout_gbyte_s_per_gpu
    assert catalog.systems["aws-p4d"].scaleout_gbyte_s_per_gpu == pytest.approx(400 / 8 / 8)  # 400 Gbps EFA
    assert catalog.systems["aws-p6-b200"].compute_nic_count * catalog.systems["aws-p6-b200"].compute_nic_gbps == 3200
    assert catalog.gpus["h800-sxm"].scaleup_gbyte_s == 400 and catalog.gpus["h100-sxm"].scaleup_gbyte_s == 900


def test_auto_leaves_out_rented_and_export_systems(catalog):
    auto = catalog.auto_systems()
    assert "dgx-h100" in auto and not any(s.startswith("aws-") for s in auto) and "hgx-h800" not in auto
    plan = _plan(catalog, "auto")
    assert {c["system"] for c in plan["candidates"]} == set(auto)


def test_named_rented_and_h800_systems_are_planned(catalog):
    p5 = _plan(catalog, "aws-p5")
    assert p5["feasible"] and p5["training"]["gpus"] == 64 and "racks" not in p5 and "bom" not in p5
    assert p5["notes"][0].startswith("8 x p5.48xlarge rented from AWS: nothing is built on site")
    h800 = _plan(catalog, "hgx-h800")
    assert h800["feasible"] and h800["training"]["gpus"] == 64


def test_fabric_kind_scales_scale_out_efficiency(catalog):
    gpu, a = catalog.gpus["h100-sxm"], Assumptions()
    ib = efficiency_for(gpu, "bf16", a).scaleout
    assert efficiency_for(gpu, "bf16", a, "efa").scaleout == pytest.approx(ib * 0.8)
    assert efficiency_for(gpu, "bf16", a, "roce").scaleout == pytest.approx(ib * 1.0)
    # With nothing hidden behind the backward, the same bytes over EFA (0.8 x IB) take longer than over IB.
    exposed = {"assumptions": {"dp_overlap_fraction": 0.0}}
    efa, ib_plan = _plan(catalog, "aws-p5", **exposed), _plan(catalog, "dgx-h100", **exposed)
    assert efa["training"]["step_time_s"] > ib_plan["training"]["step_time_s"]
    assert dataclasses.replace(efficiency_for(gpu, "bf16", a, "efa"), scaleout=ib) == efficiency_for(gpu, "bf16", a)
