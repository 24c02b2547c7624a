"""Frontier scale and plans inside an envelope (issue 17): how long the engine takes at 100K and 1M GPUs, and for the
two envelope questions. Timings are measured here (`make bench`), never asserted in the suite; each benchmark
asserts only what the plan answered, so a change of answer shows up here too.

Where things stand:

- 100,000 DGX H100 GPUs plan on their reference fabric (NDR InfiniBand, QM9700): three tiers of 64-port switches
  connect about 65,536 ports per plane and a 400G CX-7 cannot split further, so the compute fabric gets a fourth
  tier (391 SUs in 13 super-pods: 3,128 leaves, 3,128 spines, 3,136 cores, 2,048 super-cores); the racks fill
  5 halls in 2 buildings and the leaf-spine and upper runs use single-mode optics. On `infiniband-xdr` (Q3400 at
  400G: 288 ports) it plans in three tiers.
- 1,000,000 GB200 NVL72 GPUs plan on their reference fabric (NDR): four tiers (55,556 leaves, 31,320 spines, 31,392
  cores, 18,432 super-cores), 62 halls of up to 32 MW in 16 buildings, the top tier's 935 m runs on 2 x FR4 (2 km)
  optics; max_cluster_gpus is 1,048,576. On `infiniband-xdr` a capacity plan stops at 300,096 GPUs and names why:
  past four buildings the spine-core runs exceed 500 m and the catalog has no 800G-class optic beyond 2 x DR4.

CPU time (time.process_time, median of 5 after a warm-up) measured 2026-11-26 at load 3 on 2 shared cores:
100K H100 NDR training plan 107 ms, 100K H100 XDR training plan 82 ms, 100K H100 capacity 151 ms, 1M GB200
training plan 734 ms, 1M GB200 capacity 784 ms, 1M GB200 XDR capacity (stops at 300,096) 897 ms, largest GB200
NVL72 in 50 MW 44 ms; the first plan in a fresh process (no layout cache): 100K H100 NDR 193 ms, 1M GB200 605 ms
(measured again at load 8: 1M GB200 training 561 ms, capacity 758 ms). At a million GPUs most of the time is the
rack layout (about 26,000 racks, built, decoded and encoded once per distinct content) and the plan JSON that lists
every rack.
"""

from __future__ import annotations

import pytest

from engine import load_catalog, run_plan, to_json, validate_request


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _plan_json(request, catalog):
    return to_json(run_plan(request, catalog))


def _request(body, catalog):
    return validate_request(body, catalog)


H100_100K_TRAINING = {
    "workload": "training",
    "model": {"preset": "llama-3-405b"},
    "training": {"tokens": 15e12, "gpus": 100_000, "global_batch_tokens": 64 * 2**20},
    "hardware": {"system": "dgx-h100", "fabric": "infiniband-xdr"},
}


def test_100k_h100_training_plan(benchmark, catalog):
    """Llama-3-405B on 100,000 H100 GPUs (XDR fabric): the whole chain with every physical stage."""
    result = benchmark(_plan_json, _request(H100_100K_TRAINING, catalog), catalog)
    # the job's 100,000 GPUs; the build adds the hot spares its recovery keeps (cluster.gpus >= job_gpus)
    assert result["feasible"] and result["cluster"]["job_gpus"] == 100_000
    assert result["cluster"]["gpus"] >= 100_000
    assert set(result["not_modelled"]) <= {"costs"}  # costs come from the pricing step after the engine


def test_100k_h100_on_reference_fabric_plans_four_tiers(benchmark, catalog):
    body = {**H100_100K_TRAINING, "hardware": {"system": "dgx-h100"}}
    result = benchmark(_plan_json, _request(body, catalog), catalog)
    assert result["feasible"] and result["fabric"]["compute"]["tiers"] == 4
    assert set(result["not_modelled"]) <= {"costs"} and result["racks"]["campus"]["halls"] > 1


def test_100k_h100_capacity_plan(benchmark, catalog):
    body = {"workload": "capacity", "hardware": {"system": "dgx-h100", "fabric": "infiniband-xdr"},
            "envelope": {"gpus": 100_000}}  # fmt: skip
    result = benchmark(_plan_json, _request(body, catalog), catalog)
    assert result["cluster"]["gpus"] == 100_000 and result["envelope"]["binding"] == "gpus"


GB200_1M_TRAINING = {
    "workload": "training",
    "model": {"preset": "llama-3-405b"},
    "training": {"tokens": 15e12, "gpus": 1_000_000, "global_batch_tokens": 256 * 2**20},
    "hardware": {"system": "gb200-nvl72"},
}


def test_1m_gb200_training_plan(benchmark, catalog):
    """A million Blackwell GPUs on the reference NDR fabric: four tiers, a campus, every physical stage."""
    result = benchmark(_plan_json, _request(GB200_1M_TRAINING, catalog), catalog)
    assert result["feasible"] and result["cluster"]["gpus"] >= 1_000_000 and result["notes"] == []
    assert set(result["not_modelled"]) <= {"costs"}
    assert result["fabric"]["compute"]["tiers"] == 4 and result["racks"]["campus"]["buildings"] > 1


def test_1m_blackwell_capacity(benchmark, catalog):
    body = {"workload": "capacity", "hardware": {"system": "gb200-nvl72"}, "envelope": {"gpus": 1_000_000}}
    result = benchmark(_plan_json, _request(body, catalog), catalog)
    assert result["envelope"]["binding"] == "gpus" and result["cluster"]["gpus"] == 13_888 * 72


def test_1m_blackwell_capacity_on_xdr_stops_at_the_campus_optics(benchmark, catalog):
    body = {"workload": "capacity", "hardware": {"system": "gb200-nvl72", "fabric": "infiniband-xdr"},
            "envelope": {"gpus": 1_000_000}}  # fmt: skip
    result = benchmark(_plan_json, _request(body, catalog), catalog)
    assert result["envelope"]["binding"] == "fabric" and "no catalog medium spans" in result["envelope"]["sentence"]


def test_largest_gb200_nvl72_in_50_mw(benchmark, catalog):
    body = {"workload": "capacity", "hardware": {"system": "gb200-nvl72"}, "envelope": {"facility_mw": 50}}
    result = benchmark(_plan_json, _request(body, catalog), catalog)
    assert result["envelope"]["binding"] == "facility_mw"


def test_capacity_auto_in_50_mw(benchmark, catalog):
    """Every owned system's largest cluster inside 50 MW, side by side (the trade-off table)."""
    body = {"workload": "capacity", "hardware": {"system": "auto"}, "envelope": {"facility_mw": 50}}
    result = benchmark(_plan_json, _request(body, catalog), catalog)
    assert len(result["envelope"]["options"]) >= 9


def test_405b_15t_within_20_mw_auto(benchmark, catalog):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-405b"},
        "training": {"tokens": 15e12, "deadline_days": 90},
        "hardware": {"system": "auto"},
        "envelope": {"facility_mw": 20},
    }
    result = benchmark(_plan_json, _request(body, catalog), catalog)
    assert result["feasible"] and result["envelope"]["within"]
