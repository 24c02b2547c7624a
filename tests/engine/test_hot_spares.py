"""Hot spares of an elastic-recovery build (engine/physical/spares.py), worked by hand.

mean systems down = systems x repair_hours / system MTBF hours; spares = the smallest k with P(Poisson(mean) <= k)
>= the service level (0.99 by default). Poisson CDFs below are summed by hand from p(k) = e^-m m^k / k!.
"""

from __future__ import annotations

import functools
import math

import pytest

from engine import load_catalog, run_plan, validate_request
from engine.assumptions.registry import Assumptions
from engine.physical.spares import hot_spares, poisson_quantile
from engine.result import to_json
from tests.samples import elastic_16k_request

# DGX H100's system MTBF: the Llama 3 paper's 419 interruptions in 54 days on 16,384 GPUs = one per
# 16,384 x 54 x 24 / 419 = 50,677 GPU-hours, so an 8-GPU system fails once per 50,677 / 8 = 6,335 h.
H100_SYSTEM_MTBF_H = 6335.0


def test_poisson_quantile_of_mean_two_by_hand():
    # m = 2: p(0) = e^-2 = 0.1353, p(1) = 0.2707, p(2) = 0.2707, p(3) = 0.1804, p(4) = 0.0902, p(5) = 0.0361,
    # p(6) = 0.0120. CDF: 0.1353, 0.4060, 0.6767, 0.8571, 0.9473, 0.9834, 0.9955.
    assert poisson_quantile(2.0, 0.99) == 6  # CDF(5) = 0.9834 < 0.99 <= CDF(6) = 0.9955
    assert poisson_quantile(2.0, 0.90) == 4  # CDF(3) = 0.8571 < 0.90 <= CDF(4) = 0.9473
    assert poisson_quantile(2.0, 0.5) == 2  # CDF(1) = 0.4060 < 0.5 <= CDF(2) = 0.6767
    assert poisson_quantile(0.0, 0.99) == 0  # nothing ever down


def test_12500_systems_need_64_spares_at_p99():
    # 12,500 DGX H100 (100,000 GPUs), repair 24 h (the default): mean down = 12,500 x 24 / 6,335 = 47.36 systems.
    # Poisson p99 by the Cornish-Fisher expansion: m + z sqrt(m) + (z^2 - 1) / 6 with z = 2.326:
    # 47.36 + 2.326 x 6.882 + (5.410 - 1) / 6 = 47.36 + 16.01 + 0.74 = 64.10, less the continuity half: 63.6,
    # so the first whole count at or above p99 is 64 (summing the terms: CDF(63) = 0.9878, CDF(64) = 0.9914).
    spares = hot_spares(12_500, H100_SYSTEM_MTBF_H, Assumptions())
    assert spares.mean_systems_down == pytest.approx(47.356, abs=0.001)
    assert (spares.systems, spares.repair_hours, spares.percentile) == (64, 24.0, 0.99)


def test_repair_time_and_service_level_are_assumptions():
    # Repair 12 h halves the mean: 12,500 x 12 / 6,335 = 23.68; p90 (z = 1.2816): 23.68 + 1.2816 x 4.866
    # + (1.642 - 1) / 6 = 23.68 + 6.24 + 0.11 = 30.02, less 0.5 -> 29.5 -> 30 (CDF(29) = 0.882, CDF(30) = 0.915).
    a = Assumptions(overrides={"spare_repair_hours": 12.0, "hot_spare_percentile": 0.9})
    spares = hot_spares(12_500, H100_SYSTEM_MTBF_H, a)
    assert spares.mean_systems_down == pytest.approx(23.678, abs=0.001)
    assert spares.systems == 30


def _plan(checkpointing: str) -> dict:
    catalog = load_catalog()
    return to_json(run_plan(validate_request(elastic_16k_request(checkpointing), catalog), catalog))


@functools.cache
def _elastic() -> dict:
    return _plan("elastic")


def test_an_elastic_build_carries_its_spares_as_systems():
    # 16,384 GPUs = 2,048 DGX H100; mean down = 2,048 x 24 / 6,335 = 7.759; p99: 7.759 + 2.326 x 2.785 + 0.735
    # = 14.97, less 0.5 -> 14.5 -> 15 (CDF(14) = 0.9865 < 0.99 <= CDF(15) = 0.9937).
    plan = _elastic()
    assert plan["training"]["goodput"]["checkpointing"] == "elastic"
    cluster = plan["cluster"]
    spares = cluster["hot_spares"]
    assert (spares["systems"], spares["gpus"], spares["job_systems"]) == (15, 120, 2048)
    assert spares["mean_systems_down"] == pytest.approx(7.7588, abs=1e-4)
    assert (cluster["systems"], cluster["gpus"], cluster["job_gpus"]) == (2063, 16_504, 16_384)
    compute = [line for line in plan["bom"] if line["category"] == "compute"]
    assert [line["quantity"] for line in compute] == [2048, 15]
    assert compute[0]["part_number"] == compute[1]["part_number"] and "hot spares" in compute[1]["description"]
    # Racked like the others: 4 DGX H100 per rack -> ceil(2,063 / 4) = 516 compute racks.
    assert cluster["racks"] == math.ceil(2063 / 4) == 516
    entry = plan["explain"]["cluster.hot_spares"]
    assert entry["inputs"]["hot_spares"] == 15 and entry["inputs"]["repair_hours"] == 24.0
    assert "Llama 3" in entry["source"] and "Poisson" in entry["formula"] and "powered" in entry["formula"]
    assert plan["explain"]["cluster.systems"]["inputs"]["hot_spares"] == 15
    assert {"spare_repair_hours", "hot_spare_percentile"} <= set(plan["assumptions"])


def test_a_build_without_elastic_recovery_carries_none():
    plan = _plan("asynchronous")
    assert "hot_spares" not in plan["cluster"] and plan["cluster"]["systems"] == 2048
    assert [line["quantity"] for line in plan["bom"] if line["category"] == "compute"] == [2048]
    assert "cluster.hot_spares" not in plan["explain"]
    assert not {"spare_repair_hours", "hot_spare_percentile"} & set(plan["assumptions"])


def _within(facility_mw: float) -> dict:
    catalog = load_catalog()
    request = {
        "workload": "training",
        "model": {"preset": "llama-3-405b"},
        "training": {"tokens": 15e12, "gpus": 16_384, "checkpointing": "elastic"},
        "hardware": {"system": "dgx-h100"},
        "envelope": {"facility_mw": facility_mw},
    }
    return to_json(run_plan(validate_request(request, catalog), catalog))


def test_spares_count_against_an_envelope():
    """The job (2,048 systems) fits both envelopes; with its 15 spares (2,063 systems) it fits 35.2 MW but not
    34.3 MW (at most 2,062 systems), where the plan is infeasible and says the spares are what does not fit."""
    roomy = _within(35.2)
    assert roomy["feasible"] and roomy["envelope"]["within"]
    assert (roomy["cluster"]["systems"], roomy["cluster"]["hot_spares"]["systems"]) == (2063, 15)
    assert roomy["envelope"]["limits"][0]["used"] <= 35.2
    tight = _within(34.3)
    assert not tight["feasible"]
    (problem,) = [p for p in tight["problems"] if "hot spares" in p]
    assert "2,048 systems and their 15 hot spares" in problem and "34.300 MW" in problem
