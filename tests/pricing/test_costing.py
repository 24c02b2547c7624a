"""engine.costing (plan_costs and its models) against hand-worked examples (plain pytest: no database, no boto3).

Every expected figure is worked out in the comment above its assertion, so a reader can check it with a
calculator. The plans are typed `PlanResult`s: one small real plan with the parts costing reads (cluster, power,
training days, candidates, BOM, request terms) replaced by hand-chosen figures. Assertions read the priced parts
as the plan stores them (`CostResult.to_json()`: money as decimal strings), and some the typed Decimals directly.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import subprocess
import sys
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import engine.costing
from engine import PlanResult, load_catalog, run_plan, validate_request
from engine.costing import (
    CloudPrice,
    CostInputs,
    CostResult,
    capacity_block_days,
    checkpoint_overhead_fraction,
    cost_job_from_result,
    daly_interval_hours,
    interruption_rate_per_instance_hour,
    job_mtbf_hours,
    percentile,
    plan_costs,
    spot_net_saving,
    usd,
    young_interval_hours,
)
from engine.result import BomLine, Candidate, ExplainEntry, PowerSummary
from planner.adapter import cost_inputs
from pricing.references import price_references_load

ROOT = Path(__file__).resolve().parents[2]
OBSERVED = "2026-11-09T00:00:00+00:00"
REFS = cost_inputs(price_references_load())  # the on-prem references as costing inputs (no cloud prices)


BASE_REQUEST = {
    "workload": "training",
    "model": {"preset": "llama-3-8b"},
    "training": {"tokens": 1e11, "gpus": 8},
    "hardware": {"system": "dgx-h100"},
}


@functools.cache
def base_plan(workload: str = "training") -> PlanResult:
    """One small real plan (8 GPUs of DGX H100): the hand plans replace the parts costing reads."""
    catalog = load_catalog()
    body = BASE_REQUEST
    if workload == "inference":
        body = {**BASE_REQUEST, "workload": "inference", "training": None}
        body = {k: v for k, v in body.items() if v is not None}
        body["inference"] = {"requests_per_s": 1, "prompt_tokens": 512, "output_tokens": 128}
    plan = run_plan(validate_request(body, catalog), catalog)
    assert plan.feasible
    return plan


def bom_line(line: dict[str, Any]) -> BomLine:
    """A hand BOM line as the engine builds it (costing reads part number, catalog id and quantity)."""
    return BomLine(
        part_number=line.get("part_number"),
        manufacturer=line.get("manufacturer"),
        description=line.get("description"),
        category=line.get("category", ""),
        quantity=line["quantity"],
        source=line.get("source"),
        catalog_id=line.get("catalog_id"),
    )


# Issue 14's finance terms set so the model reduces to the plain one these hand checks were worked for: no extra
# capex lines but installation, no cost of capital, no residual, a life equal to the 3-year horizon, maintenance from
# year one, no staff, insurance or escalators. Then capital charge = capex / 3 and every figure below must hold.
NEUTRAL_FINANCE = {
    "spares_percent": 0,
    "freight_percent": 0,
    "support_bundled_years": 0,
    "software_licence_years": 0,
    "insurance_percent_per_year": 0,
    "staff_usd_per_fte_year": 0,
    "power_escalator_percent_per_year": 0,
    "colo_escalator_percent_per_year": 0,
    "cost_of_capital": 0,
    "residual_value_fraction": 0,
    "useful_life_years": 3,
}


def with_pricing(plan: PlanResult, **pricing: Any) -> PlanResult:
    """The plan with these keys added to its request's `pricing` block (the request echo)."""
    request = {**plan.request, "pricing": {**plan.request["pricing"], **pricing}}
    return replace(plan, request=request)


def training_plan(
    *,
    gpus=128,
    days=10.0,
    system="dgx-h100",
    gpu="h100-sxm",
    it_kw=163.2,
    pue=1.3,
    bom=None,
    deadline=30.0,
    checkpoint_write_s=None,
    site=None,
    regions=("us-east-1",),
    years=3,
) -> PlanResult:
    """16 x DGX H100 (128 GPUs) for 10 days unless told otherwise; it_kw = 16 x 10.2 kW (GPU systems only)."""
    base = base_plan()
    assert base.training is not None and base.training.goodput is not None and base.cluster is not None
    goodput = None
    if checkpoint_write_s is not None:
        goodput = replace(base.training.goodput, checkpoint_write_s=checkpoint_write_s)
    no_site = {"electricity_usd_per_kwh": None, "pue": None, "colo_usd_per_kw_month": None}
    request = {
        **base.request,
        "training": {**base.request["training"], "gpus": None, "deadline_days": deadline},
        "site": {**no_site, **(site or {})},
        "pricing": {**base.request["pricing"], "years": years, "regions": list(regions)},
    }
    return replace(
        base,
        request=request,
        training=replace(base.training, gpus=gpus, days=days, goodput=goodput),
        cluster=replace(base.cluster, system=system, systems=gpus // 8, gpus=gpus, job_gpus=gpus),
        power=PowerSummary(it_kw=it_kw, facility_kw=it_kw * pue, per_rack_kw=it_kw, pue=pue, systems_kw=it_kw),
        candidates=(
            Candidate(
                system,
                gpu,
                feasible=True,
                chosen=True,
                reason=None,
                gpus=gpus,
                days=days,
                it_kw=it_kw,
                systems_kw=it_kw,
            ),
        ),
        bom=None if bom is None else tuple(bom_line(line) for line in bom),
        cloud_sizings=None,  # the hand plan has no rented-system sizings unless a test adds them
    )


@dataclass(frozen=True)
class Priced:
    """A `CostResult` as the plan stores it (`costs`, `bom`, `explain`: JSON, money as decimal strings), with the
    typed result beside it (`typed`)."""

    typed: CostResult
    costs: dict[str, Any]
    bom: list[dict[str, Any]] | None
    explain: dict[str, Any]

    @property
    def onprem(self):
        return self.typed.onprem

    @property
    def bom_total_usd(self) -> Decimal | None:
        return self.typed.bom_total_usd


def priced(plan: PlanResult, cost_inputs: CostInputs) -> Priced:
    """`plan_costs`, serialised as `planner.adapter.plan_compute` stores it (the JSON round-trips the typed costs)."""
    typed = plan_costs(plan, cost_inputs)
    out = json.loads(json.dumps(typed.to_json()))
    return Priced(typed, out["costs"], out["bom"], out["explain"])


def price(
    instance_type, purchase, usd_per_hour, *, zone="", constrained=False, region="us-east-1", gpus=8, gpu="h100-sxm"
):
    return CloudPrice(instance_type, region, purchase, Decimal(usd_per_hour), gpus, gpu, zone, constrained, OBSERVED)


P5 = [
    price("p5.48xlarge", "on_demand", "55.04"),
    price("p5.48xlarge", "reserved_1y", "35.958904"),
    price("p5.48xlarge", "capacity_block", "39.33"),
    price("p5.48xlarge", "spot", "14.25", zone="use1-az1"),
    price("p5.48xlarge", "spot", "20.00", zone="use1-az2"),
    price("p5.48xlarge", "spot", "26.00", zone="use1-az4"),
    price("p5.48xlarge", "spot", "55.04", zone="use1-az6", constrained=True),
]


def inputs(prices=P5, **kw):
    return CostInputs(
        cloud_prices=prices,
        parts=REFS.parts,
        parameters=REFS.parameters,
        carbon=REFS.carbon,
        spot_bands=REFS.spot_bands,
        **kw,
    )


def row(costs, purchase, instance_type="p5.48xlarge", region="us-east-1"):
    (found,) = [
        r
        for r in costs["cloud"]
        if (r["purchase"], r["instance_type"], r["region"]) == (purchase, instance_type, region)
    ]
    return found


# --------------------------------------------------------------------------------------------- spot model


def test_spot_net_saving_worked_examples():
    # cloud-pricing.md section 5: net saving = 1 - (1 - d)(1 + overhead)
    # d 60 %, overhead 10 %: 1 - 0.4 x 1.1 = 1 - 0.44 = 0.56
    assert spot_net_saving(0.60, 0.10) == pytest.approx(0.56)
    # d 70 %, overhead 10 %: 1 - 0.3 x 1.1 = 0.67;  d 50 %, overhead 20 %: 1 - 0.5 x 1.2 = 0.40
    assert spot_net_saving(0.70, 0.10) == pytest.approx(0.67)
    assert spot_net_saving(0.50, 0.20) == pytest.approx(0.40)


def test_band_to_mtbf_young_interval_and_overhead_section_5():
    # f = 10 % reclaimed per month: lambda = -ln(0.9) / 730 = 0.1053605 / 730 = 1.44330e-4 per instance-hour
    lam = interruption_rate_per_instance_hour(0.10)
    assert lam == pytest.approx(1.44330e-4, rel=1e-4)
    # N = 64 correlated instances: M = 1 / (64 x 1.44330e-4) = 108.26 h  ("M ~ 108 h")
    m = job_mtbf_hours(64, lam)
    assert m == pytest.approx(108.26, abs=0.01)
    # Young: tau = sqrt(2 x (5/60) x 108.26) = sqrt(18.04) = 4.248 h  ("tau ~ 4.2 h")
    c, r = 5 / 60, 30 / 60
    tau = young_interval_hours(c, m)
    assert tau == pytest.approx(4.248, abs=0.001)
    # overhead = C/tau + (tau + C)/(2M) + R/M = 0.01962 + 0.02000 + 0.00462 = 0.0442  ("~4 %")
    assert checkpoint_overhead_fraction(c, m, r, tau) == pytest.approx(0.0442, abs=0.0005)
    # f = 30 %: lambda = 0.356675 / 730 = 4.8860e-4; M = 1 / (64 x 4.8860e-4) = 31.98 h ("~32 h");
    # tau = sqrt(2 x 0.08333 x 31.98) = 2.309 h; overhead = 0.0361 + 0.0374 + 0.0156 = 0.089 ("~9 %")
    m30 = job_mtbf_hours(64, interruption_rate_per_instance_hour(0.30))
    assert m30 == pytest.approx(31.98, abs=0.01)
    assert checkpoint_overhead_fraction(c, m30, r, young_interval_hours(c, m30)) == pytest.approx(0.089, abs=0.001)
    # N = 8: f 10 % -> M = 866 h, overhead 1.45 %; f 30 % -> M = 255.8 h, overhead 2.76 %  ("1-3 %")
    for f, expected in ((0.10, 0.0145), (0.30, 0.0276)):
        m8 = job_mtbf_hours(8, interruption_rate_per_instance_hour(f))
        assert checkpoint_overhead_fraction(c, m8, r, young_interval_hours(c, m8)) == pytest.approx(expected, abs=5e-4)


@pytest.mark.parametrize(
    ("mtbf_min", "expected_min"),
    [
        # Daly (2006) worked examples with C = 5 min:
        # M = 24 h = 1440 min: sqrt(2 x 5 x 1440) = 120; x = 5/2880; 120 (1 + 0.013889 + 0.000193) - 5 = 116.7 (117)
        (1440, 116.69),
        # M = 6 h = 360 min: sqrt(3600) = 60; x = 5/720; 60 (1 + 0.027778 + 0.000772) - 5 = 56.71 (57)
        (360, 56.71),
        # M = 15 min: sqrt(150) = 12.247; x = 1/6; 12.247 (1 + 0.136083 + 0.018519) - 5 = 9.14 (9.1)
        (15, 9.14),
    ],
)
def test_daly_interval_worked_examples(mtbf_min, expected_min):
    assert daly_interval_hours(5 / 60, mtbf_min / 60) * 60 == pytest.approx(expected_min, abs=0.01)


def test_daly_interval_is_m_when_the_checkpoint_takes_longer_than_2m():
    assert daly_interval_hours(3.0, 1.0) == 1.0


def test_percentile_interpolates_like_numpy():
    # zones 14.25, 20.00, 26.00: p50 = 20.00; p10 = 14.25 + 0.2 x (20.00 - 14.25) = 15.40
    values = [Decimal("26.00"), Decimal("14.25"), Decimal("20.00")]
    assert percentile(values, 0.5) == Decimal("20.00")
    assert percentile(values, 0.1) == Decimal("15.400")


# --------------------------------------------------------------------------------------------- cloud rows


def test_on_demand_p5_by_hand():
    # 128 GPUs / 8 per p5.48xlarge = 16 instances; 10 days = 240 h; 55.04 x 16 x 240 = 211,353.60
    costs = priced(training_plan(), inputs()).costs
    od = row(costs, "on_demand")
    assert (od["instances"], od["job_hours"], od["usd_per_hour"], od["usd_per_gpu_hour"]) == (
        16,
        240.0,
        "55.04",
        "6.88",
    )
    assert od["job_usd"] == "211353.60"
    assert od["price_observed_at"] == OBSERVED
    assert od["sized_on"] == {"system": "dgx-h100", "gpu": "h100-sxm", "gpus": 128, "days": 10.0, "chosen": True}


def test_instances_round_up_to_whole_instances():
    # 130 GPUs need ceil(130 / 8) = 17 instances: 17 x 55.04 x 240 = 224,563.20
    costs = priced(training_plan(gpus=130), inputs()).costs
    assert row(costs, "on_demand")["instances"] == 17
    assert row(costs, "on_demand")["job_usd"] == "224563.20"


def test_reserved_pays_the_whole_term():
    # a 10-day job on a 1-year reservation pays 8760 h: 16 x 35.958904 x 8760 = 35.958904 x 140,160 = 5,039,999.98
    # used only for the job's 240 h it would be 16 x 35.958904 x 240 = 138,082.19
    r = row(priced(training_plan(), inputs()).costs, "reserved_1y")
    assert r["commitment_hours"] == 8760
    assert r["job_usd"] == usd(16 * Decimal("35.958904") * 8760) == "5039999.98"
    assert r["job_usd_if_term_shared"] == "138082.19"


def test_capacity_block_durations():
    # whole days up to 14, then 7-day steps (21, 28, ...) up to 182
    assert [capacity_block_days(d) for d in (0.2, 1.0, 1.2, 14.0, 14.5, 90.0, 182.0)] == [1, 1, 2, 14, 21, 91, 182]
    assert capacity_block_days(182.5) is None


def test_capacity_block_by_hand_and_its_limits():
    # 16 instances (one block of <= 64) for 10 days: 16 x 39.33 x 240 = 151,027.20
    cb = row(priced(training_plan(), inputs()).costs, "capacity_block")
    assert (cb["available"], cb["blocks"], cb["block_days"], cb["job_usd"]) == (True, 1, 10, "151027.20")
    # 258 instances (2064 GPUs) exceed the 256-instance total
    big = row(priced(training_plan(gpus=2064), inputs()).costs, "capacity_block")
    assert big["available"] is False and "at most 256" in big["unavailable_reason"] and big["job_usd"] is None
    # a 200-day job exceeds the 182-day maximum
    long = row(priced(training_plan(days=200), inputs()).costs, "capacity_block")
    assert long["available"] is False and "182 days" in long["unavailable_reason"]


def test_spot_expected_cost_by_hand():
    # p5.48xlarge us-east-1 is in the ">20%" band (Advisor 2025-06-28): p50 f = 25 %.
    # lambda = -ln(0.75) / 730 = 0.287682 / 730 = 3.94085e-4; N = 16: M = 1 / (16 x 3.94085e-4) = 158.60 h
    # C = 5 min (no checkpoint time in the plan), R = 30 min. Daly tau = sqrt(2 x 0.083333 x 158.60)
    #   x (1 + sqrt(0.083333 / 317.2) / 3 + (0.083333 / 317.2) / 9) - 0.083333 = 5.1415 x 1.005432 - 0.0833 = 5.0861 h
    # overhead = 0.083333 / 5.0861 + (5.0861 + 0.0833) / 317.2 + 0.5 / 158.60 = 0.016385 + 0.016297 + 0.003153 = 0.0358
    # Usable zones 14.25 / 20.00 / 26.00 (55.04 is at on-demand: no capacity): median 20.00
    # cost = 16 x 20.00 x 240 x 1.0358 = 79,551 (to the dollar; the test recomputes the exact overhead)
    costs = priced(training_plan(), inputs()).costs
    s = row(costs, "spot")
    spot = s["spot"]
    assert (spot["band"], spot["band_assumed"], spot["zones"], spot["zones_at_on_demand"]) == (">20%", False, 4, 1)
    assert spot["job_mtbf_hours"] == pytest.approx(158.60, abs=0.01)
    assert spot["checkpoint_interval_hours"] == pytest.approx(5.0861, abs=0.001)
    assert spot["overhead_fraction"]["p50"] == pytest.approx(0.0358, abs=2e-4)
    assert s["usd_per_hour"] == "20.00" and s["capacity_constrained"] is False
    overhead = spot["overhead_fraction"]["p50"]
    assert Decimal(s["job_usd"]) == pytest.approx(Decimal(16 * 20 * 240) * Decimal(1 + overhead), abs=Decimal(1))
    assert Decimal(s["job_usd"]) == pytest.approx(Decimal("79551"), abs=Decimal(5))
    # ranges: p10 (low f, p10 price) <= p50 <= p90 (high f, p90 price), for cost and finish time
    lo, mid, hi = (Decimal(spot["job_usd"][k]) for k in ("p10", "p50", "p90"))
    assert lo < mid < hi
    assert spot["finish_days"]["p10"] < spot["finish_days"]["p50"] < spot["finish_days"]["p90"]
    assert spot["finish_days"]["p50"] == s["job_days"] > 10
    # discount 1 - 20.00 / 55.04 = 0.6366; net saving 1 - 0.3634 x 1.0358 = 0.6236
    assert spot["discount_vs_on_demand"] == pytest.approx(0.6366, abs=1e-4)
    assert spot["net_saving_vs_on_demand"] == pytest.approx(0.6236, abs=5e-4)


def test_spot_uses_the_plans_checkpoint_write_time():
    plan = training_plan(checkpoint_write_s=60)
    spot = row(priced(plan, inputs()).costs, "spot")["spot"]
    assert spot["checkpoint_write_min"] == 1.0
    assert spot["checkpoint_write_source"].startswith("plan")


def test_spot_at_on_demand_everywhere_is_not_available():
    prices = [
        price("p5.48xlarge", "on_demand", "55.04"),
        price("p5.48xlarge", "spot", "55.04", zone="use1-az6", constrained=True),
    ]
    s = row(priced(training_plan(), inputs(prices)).costs, "spot")
    assert s["available"] is False and s["capacity_constrained"] is True
    assert "no spare capacity" in s["unavailable_reason"] and s["job_usd"] is None


def test_spot_near_on_demand_is_flagged():
    # median zone 50.00 >= 0.9 x 55.04 = 49.536: flagged, still priced
    prices = [price("p5.48xlarge", "on_demand", "55.04"), price("p5.48xlarge", "spot", "50.00", zone="use1-az1")]
    s = row(priced(training_plan(), inputs(prices)).costs, "spot")
    assert s["available"] is True and s["capacity_constrained"] is True


def test_unlisted_spot_type_assumes_the_worst_band_and_says_so():
    prices = [
        price("p6-b200.48xlarge", "on_demand", "113.9328", gpu="b200-hgx"),
        price("p6-b200.48xlarge", "spot", "19.09", zone="use1-az4", gpu="b200-hgx"),
    ]
    plan = training_plan(system="dgx-b200", gpu="b200-hgx")
    spot = row(priced(plan, inputs(prices)).costs, "spot", "p6-b200.48xlarge")["spot"]
    assert spot["band"] == ">20%" and spot["band_assumed"] is True
    assert any("assumed" in w for w in spot["warnings"])
    assert any("75 %" in w for w in spot["warnings"])  # 19.09 is 83 % below on-demand: suspicious


def test_only_instances_with_the_same_gpu_model_and_memory_are_priced():
    prices = [*P5, price("p4d.24xlarge", "on_demand", "21.957642", gpu="a100-40gb-sxm")]
    costs = priced(training_plan(), inputs(prices)).costs
    assert {r["instance_type"] for r in costs["cloud"]} == {"p5.48xlarge"}


def test_chosen_gpu_without_an_instance_type_is_said_and_others_priced():
    plan = training_plan(system="gb200-nvl72", gpu="b200-gb200", gpus=144)
    other = Candidate(
        "dgx-h100",
        "h100-sxm",
        feasible=True,
        chosen=False,
        reason=None,
        gpus=160,
        days=12.0,
        it_kw=204.0,
        systems_kw=204.0,
    )
    plan = replace(plan, candidates=(*plan.candidates, other))
    costs = priced(plan, inputs()).costs
    # the note names the GPU and the system as the catalog does, not by their ids
    assert "(NVIDIA B200 in GB200 NVL72 (1,200 W) in the NVIDIA GB200 NVL72 rack)" in costs["cloud_notes"][0]
    od = row(costs, "on_demand")
    # sized on dgx-h100: 160 / 8 = 20 instances x 55.04 x 288 h = 317,030.40
    assert od["sized_on"]["system"] == "dgx-h100" and od["job_usd"] == "317030.40"


# ---------------------------------------------------------------------------------------------- on-prem


def test_onprem_systems_only_by_hand():
    # 16 x DGX H100 at 270,000 = 4,320,000 hardware; install 5 % = 216,000; capex 4,536,000
    # facility = 163.2 kW x 1.3 = 212.16 kW
    # energy = 212.16 x 8760 x 0.80 x 0.08 = 118,945.38;  colo = 163.2 x 163.44 x 12 = 320,080.90
    # maintenance = 10 % of the hardware (the support contract's base, not capex) = 432,000
    # opex = 118,945.3824 + 320,080.896 + 432,000 = 871,026.2784 per year
    # TCO 3 y = 4,536,000 + 3 x 871,026.2784 = 7,149,078.8352 -> 7,149,078.84 (rounded once, at the end)
    # $/GPU-h = 7,149,078.8352 / (128 x 8760 x 0.8 x 3) = 7,149,078.8352 / 2,691,072 = 2.656591
    # shared job = 128 x 240 x 2.6565914 = 30,720 x 2.6565914 = 81,610.49
    # bought for the job = capex + 212.16 x 240 x 0.08 + (320,080.90 + 432,000) x 240 / 8760
    #                    = 4,536,000 + 4,073.47 + 20,604.96 = 4,560,678.43
    result = priced(with_pricing(training_plan(), parameters=NEUTRAL_FINANCE), inputs())
    costs = result.costs
    on = costs["onprem"]
    assert (on["hardware_usd"], on["install_usd"], on["capex_usd"]) == ("4320000.00", "216000.00", "4536000.00")
    # the typed section holds the same figures as Decimals (the JSON is their strings)
    typed = result.typed.costs.onprem
    assert typed is not None and typed.capex_usd == Decimal("4536000.00") and typed.tco_usd == Decimal("7149078.84")
    assert typed.usd_per_gpu_hour == Decimal("2.656591") and typed.lines[0].extended_price_usd == Decimal("4320000")
    assert on["opex_breakdown_usd_per_year"] == {
        "energy": "118945.38",
        "colocation": "320080.90",
        "maintenance": "432000.00",
        "staff": "0.00",
        "insurance": "0.00",
    }
    assert on["opex_usd_per_year"] == "871026.28"
    assert on["tco_usd"] == "7149078.84"
    assert on["usd_per_gpu_hour"] == "2.656591"
    assert on["job_usd_shared"] == "81610.49"
    assert on["job_usd"] == "4560678.43"
    assert on["depreciation_usd_per_year"] == "1512000.00"
    assert costs["coverage"]["basis"] == "systems_only"
    assert "not included" in costs["coverage"]["notes"][0]


def test_site_overrides_electricity_and_colocation():
    # $0.10/kWh, $100/kW-month: energy = 212.16 x 8760 x 0.8 x 0.10 = 148,681.73; colo = 163.2 x 100 x 12 = 195,840
    plan = training_plan(site={"electricity_usd_per_kwh": 0.10, "colo_usd_per_kw_month": 100})
    on = priced(plan, inputs()).costs["onprem"]
    assert on["opex_breakdown_usd_per_year"]["energy"] == "148681.73"
    assert on["opex_breakdown_usd_per_year"]["colocation"] == "195840.00"


def test_onprem_prices_the_bom_and_lists_unpriced_lines():
    bom = [
        {
            "part_number": "DGX H100",
            "catalog_id": "dgx-h100",
            "description": "DGX H100",
            "category": "compute",
            "quantity": 16,
            "manufacturer": "NVIDIA",
            "source": "spec",
        },
        {
            "part_number": "MQM9700-NS2F",
            "catalog_id": "qm9700",
            "description": "QM9700",
            "category": "network",
            "quantity": 4,
            "manufacturer": "NVIDIA",
            "source": "spec",
        },
        {
            "part_number": "NO-SUCH-PART",
            "description": "mystery",
            "category": "cabling",
            "quantity": 7,
            "manufacturer": "X",
            "source": "spec",
        },
    ]
    result = priced(training_plan(bom=bom), inputs())
    # 16 x 270,000 + 4 x 50,000 (NVIDIA-branded QM9700, FS.com price sheet) = 4,320,000 + 200,000 = 4,520,000
    assert result.costs["onprem"]["hardware_usd"] == "4520000.00"
    # costing returns typed priced BOM lines: the engine's lines with the price fields filled
    typed_lines = {line.part_number: line for line in result.typed.bom or ()}
    assert typed_lines["MQM9700-NS2F"].extended_price_usd == Decimal("200000.00") and typed_lines["MQM9700-NS2F"].priced
    assert typed_lines["NO-SUCH-PART"].unit_price_usd is None and typed_lines["NO-SUCH-PART"].priced
    lines = {line["part_number"]: line for line in result.bom}
    assert lines["MQM9700-NS2F"]["unit_price_usd"] == "50000.00"
    assert lines["MQM9700-NS2F"]["extended_price_usd"] == "200000.00"
    assert lines["MQM9700-NS2F"]["price_confidence"] == "public_estimate" and lines["MQM9700-NS2F"]["price_source"]
    assert lines["MQM9700-NS2F"]["source"] == "spec"  # the line's own (spec) source is kept
    assert lines["NO-SUCH-PART"]["unit_price_usd"] is None
    cov = result.costs["coverage"]
    assert cov["basis"] == "bom" and cov["priced_lines"] == 2
    assert cov["unpriced_lines"] == [{"part_number": "NO-SUCH-PART", "description": "mystery", "quantity": 7}]
    assert "lower bound" in cov["notes"][0]


def test_user_part_override_applies_to_this_plan_only():
    base = priced(training_plan(), inputs()).costs["onprem"]
    over = priced(training_plan(), inputs(part_overrides={"dgx-h100": Decimal("250000")})).costs["onprem"]
    assert base["hardware_usd"] == "4320000.00" and over["hardware_usd"] == "4000000.00"
    assert over["lines"][0]["price_confidence"] == "user_override"


def test_unpriced_system_gives_no_onprem_figures_and_says_why():
    # Every catalog system is priced now (test_component_prices.py); drop the DGX H200 record to see the gap.
    plan = training_plan(system="dgx-h200", gpu="h200-sxm")
    parts = [p for p in REFS.parts if p.catalog_id != "dgx-h200"]
    costs = priced(plan, CostInputs([], parts, REFS.parameters, REFS.carbon, REFS.spot_bands)).costs
    assert costs["onprem"]["capex_usd"] is None and costs["onprem"]["tco_usd"] is None
    assert "no sourced price" in costs["coverage"]["notes"][1]


# ------------------------------------------------------------------------------------------- comparison


def test_break_even_utilisation_by_hand():
    # on-prem per year at utilisation u: A + B u, A = capex/3 + colo + maintenance = 1,512,000 + 320,080.90 + 432,000
    #   = 2,264,080.90; B = 212.16 x 8760 x 0.08 = 148,681.73
    # on-demand: 128 GPUs x 8760 x 6.88 $/GPU-h x u = 7,714,406.40 u
    # u* = A / (7,714,406.40 - 148,681.73) = 2,264,080.90 / 7,565,724.67 = 0.2993
    plan = with_pricing(training_plan(), parameters=NEUTRAL_FINANCE)
    be = priced(plan, inputs()).costs["comparison"]["break_even"]
    od = next(b for b in be if b["purchase"] == "on_demand")
    assert od["break_even_utilization"] == pytest.approx(0.2993, abs=1e-4)
    assert od["onprem_cheaper"] == "above"
    # a 1-year reservation costs 128 x 8760 x 4.494863 = 5,040,004 a year whatever the use; on-prem at 100 % costs
    # 2,264,081 + 148,682 = 2,412,763 < 5,040,004: owning is cheaper at every utilisation
    r1 = next(b for b in be if b["purchase"] == "reserved_1y")
    assert r1["onprem_cheaper"] == "always" and r1["break_even_utilization"] is None


def test_cheapest_options_and_deadline():
    comp = priced(training_plan(deadline=10.2), inputs()).costs["comparison"]
    # obtainable options first, each group sorted by job cost; spot (~79,551) undercuts shared on-prem (82,350.22)
    # but both are excluded here (spot misses the deadline, on-prem cannot even start before it)
    flags = [o["obtainable"] for o in comp["options"]]
    assert flags == sorted(flags, reverse=True)
    for group in (True, False):
        prices = [Decimal(o["job_usd"]) for o in comp["options"] if o["obtainable"] is group]
        assert prices == sorted(prices)
    assert comp["cheapest"]["job_usd"] == comp["options"][0]["job_usd"]
    # spot finishes in 10.36 days at p50: misses a 10.2-day deadline, so it cannot be the answer within it
    assert comp["cheapest_within_deadline"]["option"] != "spot"
    assert comp["cheapest_without_spot"]["option"] != "spot"


def test_cumulative_series_shape():
    cum = priced(with_pricing(training_plan(), parameters=NEUTRAL_FINANCE), inputs()).costs["comparison"]["cumulative"]
    assert cum["months"] == list(range(37))
    onprem = cum["series"][0]
    assert onprem["usd"][0] == "4536000.00"  # capex at month 0
    # month 12: capex + one year of opex = 4,536,000 + 871,026.28
    assert onprem["usd"][12] == "5407026.28"
    assert {s["option"] for s in cum["series"]} >= {"onprem", "on_demand", "spot", "reserved_1y", "capacity_block"}


def test_sensitivity_table_rows_and_order():
    sens = priced(training_plan(), inputs()).costs["sensitivity"]
    assert {r["input"] for r in sens["rows"]} == {"utilization", "system_price", "power_price", "spot_price", "mfu"}
    swings = [Decimal(r["swing_usd"]) for r in sens["rows"]]
    assert swings == sorted(swings, reverse=True)
    # GPU price -20 %: hardware 3,456,000 -> shared job cost falls
    gpu_row = next(r for r in sens["rows"] if r["input"] == "system_price")
    assert Decimal(gpu_row["low"]["onprem_job_usd_shared"]) < Decimal(sens["base"]["onprem_job_usd_shared"])
    # MFU +20 %: the job takes 1/1.2 of the time on every option
    mfu = next(r for r in sens["rows"] if r["input"] == "mfu")
    assert Decimal(mfu["high"]["onprem_job_usd_shared"]) == pytest.approx(
        Decimal(sens["base"]["onprem_job_usd_shared"]) / Decimal("1.2"), abs=Decimal("0.02")
    )


def test_carbon_by_hand():
    # on-prem job: 212.16 kW x 240 h = 50,918.4 kWh x 366 g/kWh = 18.636 t
    # us-east-1: 163.2 kW x 1.135 x 240 h = 44,455.68 kWh x 379.069 g/kWh = 16.852 t
    carbon = priced(training_plan(), inputs()).costs["carbon"]
    assert carbon["onprem"]["job_energy_mwh"] == pytest.approx(50.918, abs=1e-3)
    assert carbon["onprem"]["job_tco2e"] == pytest.approx(18.636, abs=1e-3)
    (use1,) = carbon["cloud"]
    assert use1["region"] == "us-east-1" and use1["job_tco2e"] == pytest.approx(16.852, abs=1e-3)


def test_cloud_carbon_counts_the_gpu_systems_and_onprem_every_it_part():
    # The plan's power counts network, storage and management too: it_kw 200 (GPU systems 163.2), facility 260 kW.
    # On-prem: 260 kW x 240 h = 62,400 kWh = 62.4 MWh; colocation is charged on 200 kW: 200 x 163.44 x 12 = 392,256.
    # The cloud option replicates the GPU systems only, like every other sized-on system: still 163.2 kW x 1.135 x
    # 240 h = 44,455.68 kWh -> 16.852 t in us-east-1.
    plan = training_plan()
    assert plan.power is not None
    plan = replace(plan, power=replace(plan.power, it_kw=200.0, facility_kw=260.0))
    costs = priced(plan, inputs()).costs
    assert costs["carbon"]["onprem"]["job_energy_mwh"] == pytest.approx(62.4, abs=1e-3)
    assert costs["onprem"]["opex_breakdown_usd_per_year"]["colocation"] == "392256.00"
    (use1,) = costs["carbon"]["cloud"]
    assert use1["job_energy_mwh"] == pytest.approx(44.456, abs=1e-3)
    assert use1["job_tco2e"] == pytest.approx(16.852, abs=1e-3)


def test_every_headline_figure_is_explained_and_money_is_strings():
    result = priced(training_plan(), inputs())
    assert all(isinstance(entry, ExplainEntry) for entry in result.typed.explain.values())
    for key in ("capex_usd", "opex_usd_per_year", "tco_usd", "usd_per_gpu_hour", "job_usd", "job_usd_shared"):
        assert f"costs.onprem.{key}" in result.explain
        assert set(result.explain[f"costs.onprem.{key}"]) == {"formula", "inputs", "source"}
    for r in result.costs["cloud"]:
        assert f"costs.cloud.{r['region']}.{r['instance_type']}.{r['purchase']}.job_usd" in result.explain
    for key in (
        "costs.comparison.cheapest",
        "costs.comparison.break_even",
        "costs.sensitivity",
        "costs.carbon.onprem.job_tco2e",
    ):
        assert key in result.explain
    text = json.dumps(result.costs)  # JSON-ready
    assert "Decimal" not in text
    assert all(isinstance(r["job_usd"], str) for r in result.costs["cloud"] if r["job_usd"] is not None)
    assert (
        result.costs["onprem"]["capex_usd"].count(".") == 1
        and len(result.costs["onprem"]["capex_usd"].split(".")[1]) == 2
    )


def test_infeasible_plan_is_not_priced():
    result = priced(replace(training_plan(), feasible=False), inputs())
    assert result.costs["available"] is False and result.bom is None and result.explain == {}


def test_inference_prices_a_year_of_serving():
    plan = training_plan()
    serving = base_plan("inference")
    assert serving.inference is not None and plan.cluster is not None
    plan = replace(
        plan,
        workload="inference",
        training=None,
        inference=replace(serving.inference, gpus=16),
        cluster=replace(plan.cluster, systems=2, gpus=16, job_gpus=16),
        candidates=(replace(plan.candidates[0], gpus=16, days=None),),
    )
    od = row(priced(plan, inputs()).costs, "on_demand")
    # 2 instances x 55.04 x 8760 h = 964,300.80
    assert (od["instances"], od["job_hours"], od["job_usd"]) == (2, 8760.0, "964300.80")


# ---------------------------------------------------------------------------------------------- re-pricing


def _leaves(value, path=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def test_repricing_with_another_snapshot_changes_exactly_the_price_dependent_figures():
    plan = training_plan()
    before = priced(copy.deepcopy(plan), inputs())
    dearer = [p if p.purchase != "on_demand" else price("p5.48xlarge", "on_demand", "60.00") for p in P5]
    after = priced(copy.deepcopy(plan), inputs(dearer))
    a, b = dict(_leaves(before.costs)), dict(_leaves(after.costs))
    assert a.keys() == b.keys()
    changed = {k for k in a if a[k] != b[k]}
    od_index = next(i for i, r in enumerate(before.costs["cloud"]) if r["purchase"] == "on_demand")
    spot_index = next(i for i, r in enumerate(before.costs["cloud"]) if r["purchase"] == "spot")
    allowed_prefixes = (
        f"cloud[{od_index}].usd_per_hour",
        f"cloud[{od_index}].usd_per_gpu_hour",
        f"cloud[{od_index}].job_usd",
        # spot is compared with on-demand (discount, net saving); its own cost does not move
        f"cloud[{spot_index}].spot.discount_vs_on_demand",
        f"cloud[{spot_index}].spot.net_saving_vs_on_demand",
        "comparison.",
        "sensitivity.",
    )
    assert changed and all(k.startswith(allowed_prefixes) for k in changed), sorted(changed)
    assert b[f"cloud[{od_index}].job_usd"] == "230400.00"  # 16 x 60.00 x 240
    # nothing about the plan's hardware, on-prem money or carbon moved
    assert before.costs["onprem"] == after.costs["onprem"]
    assert before.costs["carbon"] == after.costs["carbon"]
    assert before.costs["coverage"] == after.costs["coverage"]


# ----------------------------------------------------------------------------------------------- purity

PURITY_SCRIPT = """
import json, sys
from engine import load_catalog, run_plan, validate_request
from engine.costing import plan_costs, CostInputs, CostParameter, PartPrice
from pricing.references import price_references_load
refs = price_references_load()  # pricing records; the adapter's conversion needs Django, so convert here
parts = [PartPrice(**vars(p)) for p in refs.parts]
parameters = {name: CostParameter(**vars(p)) for name, p in refs.parameters.items()}
carbon = {scope: CostParameter(**vars(p)) for scope, p in refs.carbon.items()}
catalog = load_catalog()
body = {"workload": "training", "model": {"preset": "llama-3-8b"}, "training": {"tokens": 1e11, "gpus": 8},
        "hardware": {"system": "dgx-h100"}}
plan = run_plan(validate_request(body, catalog), catalog)
plan_costs(plan, CostInputs(cloud_prices=[], parts=parts, parameters=parameters, carbon=carbon))
print(json.dumps(sorted(sys.modules)))
"""
FORBIDDEN = ["django", "celery", "kombu", "rest_framework", "boto3", "botocore", "requests", "urllib3", "http.client"]


def test_costing_loads_no_forbidden_modules():
    out = subprocess.run([sys.executable, "-c", PURITY_SCRIPT], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert sorted(m for m in loaded for f in FORBIDDEN if m == f or m.startswith(f + ".")) == []


def test_cost_job_reads_the_plans_days_and_request_terms_never_recomputes():
    plan = training_plan(days=10.0, site={"electricity_usd_per_kwh": 0.1}, years=5, regions=("eu-west-1",))
    # days_ideal / goodput would give 18 days: costing must take the plan's training.days (10) as stated
    assert plan.training is not None and base_plan().training is not None
    goodput = replace(base_plan().training.goodput, fraction=0.5, checkpoint_write_s=90.0)
    plan = replace(plan, training=replace(plan.training, days_ideal=9.0, goodput=goodput))
    plan = with_pricing(plan, component_prices={"qm9700": 40000})
    job = cost_job_from_result(plan)
    assert job is not None and job.chosen.days == 10.0 and job.workload == "training"
    assert job.chosen.checkpoint_write_h == pytest.approx(0.025)  # 90 s
    assert (job.cluster_gpus, job.job_gpus, job.it_kw, job.deadline_days, job.bom) == (128, 128, 163.2, 30.0, None)
    assert job.terms.years == 5 and job.terms.regions == ("eu-west-1",)
    assert job.terms.site_prices == {"electricity_usd_per_kwh": Decimal("0.1")}
    assert job.terms.part_overrides == {"qm9700": Decimal("40000")}
    # on-prem job hours are the plan's days x 24 = 240
    assert priced(plan, inputs()).costs["onprem"]["job_hours"] == 240.0
    assert cost_job_from_result(replace(training_plan(), feasible=False)) is None
    assert cost_job_from_result(replace(training_plan(), training=None)) is None


def test_spot_and_goodput_share_one_daly_interval():
    from engine.performance.goodput import daly_interval, expected_goodput

    # 70B params x 14 bytes over 1024 GPUs at 1 GB/s each: delta = 980e9 / 1.024e12 = 0.95703125 s;
    # M = 2000 h x 3600 / 128 systems = 56,250 s; sqrt(2 delta M) = sqrt(107,666.0) = 328.125;
    # x = delta / 2M = 8.50694e-6: tau = 328.125 x (1 + 0.00097222 + 0.00000095) - 0.95703 = 327.4873 s
    g = expected_goodput(
        params=70e9,
        gpus=1024,
        systems=128,
        node_mtbf_hours=2000,
        write_gbyte_s_per_gpu=1,
        checkpoint_bytes_per_param=14,
        restart_s=900,
    )
    assert g.checkpoint_interval_s == pytest.approx(327.4873, abs=1e-4)
    # goodput = 327.4873 / 328.4443 x (1 - (164.2222 + 900) / 56,250) = 0.997086 x 0.981081 = 0.978222
    assert g.fraction == pytest.approx(0.978222, abs=1e-6)
    # the spot model's hours are the same function
    assert daly_interval_hours(g.checkpoint_write_s / 3600, g.job_mtbf_s / 3600) * 3600 == pytest.approx(
        g.checkpoint_interval_s, rel=1e-12
    )
    # vectorised for the layout search: the same values, and M when C >= 2M
    assert list(daly_interval(np.array([5.0, 3.0]), np.array([1440.0, 1.0]))) == pytest.approx([116.69, 1.0], abs=0.01)


def test_dead_helpers_are_gone():
    assert not hasattr(engine.costing, "cloud_prices_from_records")


def test_hours_helpers_reject_nonsense():
    with pytest.raises(ValueError):
        interruption_rate_per_instance_hour(1.0)
    assert math.isinf(job_mtbf_hours(8, 0.0))
