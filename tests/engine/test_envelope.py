"""Plans inside an envelope: the count search, a hand-worked facility-power case, the two questions the issue asks
("largest GB200 NVL72 cluster in 50 MW", "Llama-3-405B on 15T tokens within 20 MW") and bad input."""

from __future__ import annotations

import math

import pytest

from engine import RequestInvalid, load_catalog, run_plan, to_json, validate_request
from engine.assumptions.registry import ASSUMPTIONS, Assumptions
from engine.envelope.search import CEILING, FABRIC, Probe, largest_within
from engine.physical.build import build_physical
from engine.physical.cluster import build_cluster


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _plan(body, catalog):
    return to_json(run_plan(validate_request(body, catalog), catalog))


# ----------------------------------------------------------------------------------------- the search itself


def _linear(fixed: float, per_system: float, refuse_above: int | None = None):
    """A prober whose facility power is fixed + per_system x n (MW), refused above a count (a fabric ceiling)."""
    calls: list[int] = []

    def prober(n: int) -> Probe:
        calls.append(n)
        if refuse_above is not None and n > refuse_above:
            return Probe(n, {}, refusal="no fabric connects it")
        return Probe(n, {"facility_mw": fixed + per_system * n, "gpus": 8.0 * n})

    return prober, calls


@pytest.mark.parametrize("limit", [0.5, 3.3, 20.0, 49.99, 50.0, 123.4])
def test_search_finds_the_largest_count_by_hand(limit):
    """facility = 0.3 + 0.01372 n MW: the largest n is floor((limit - 0.3) / 0.01372), worked out here directly."""
    prober, calls = _linear(0.3, 0.01372)
    fit = largest_within(prober, {"facility_mw": limit}, ceiling_systems=16384, first_systems=32)
    expected = math.floor((limit - 0.3) / 0.01372)
    assert fit.best is not None and fit.best.systems == expected
    assert fit.above is not None and fit.above.systems == expected + 1
    assert fit.binding == "facility_mw"
    assert len(set(calls)) <= 2 * math.ceil(math.log2(16384)) + 4  # never a scan


def test_search_stops_at_the_fabric_or_the_ceiling():
    prober, _ = _linear(0.3, 0.01, refuse_above=700)
    fit = largest_within(prober, {"facility_mw": 1000.0}, ceiling_systems=16384, first_systems=32)
    assert (fit.best.systems, fit.above.systems, fit.binding) == (700, 701, FABRIC)
    prober, _ = _linear(0.3, 0.01)
    fit = largest_within(prober, {"facility_mw": 1000.0}, ceiling_systems=500, first_systems=32)
    assert (fit.best.systems, fit.above, fit.binding) == (500, None, CEILING)


def test_search_when_not_even_one_fits():
    prober, _ = _linear(0.3, 0.01)
    fit = largest_within(prober, {"facility_mw": 0.2}, ceiling_systems=16384, first_systems=32)
    assert fit.best is None and fit.above.systems == 1 and fit.binding == "facility_mw"


# ------------------------------------------------------------------------------------ hand-worked facility power


def test_dgx_h100_under_200_kw_by_hand(catalog):
    """DGX H100 inside 200 kW of facility power, worked out from datasheet watts and the facility formula.

    Between 9 and 16 systems the build is below one SU and keeps one design: compute 2 QM9700 (8 rails of n ports,
    4 whole rails per 64-port switch) and storage 1 QM9700 (3 x 1,720 W, NVIDIA QM9700 datasheet, with
    optics), in-band an MLAG pair of SN4600C (2 x 466 W), out-of-band one SN2201 (98 W): 6.19 kW; storage one DDN
    AI400X2 (3,000 W: the per-SU read guidance of 40 GB/s shared by n of 32 systems is 15 GB/s at n = 12, more than
    one NFS server's 12 GB/s); a high-availability pair of head nodes (2 x 1,100 W); optics no switch figure covers:
    48 W fixed (storage 4 x 8 W, head nodes 2 x 8 W) and 76 W per system (four twin-port 400G OSFP at 15 W for the
    eight NDR ports, one 400G QSFP112 at 8 W each for storage and in-band). Each DGX H100 draws 10.2 kW (DGX H100
    user guide). Racks of 4 x 10.2 = 40.8 kW are air with containment, PUE 1.4.

    facility(n) = 1.4 x (10.276 n + 11.438) kW; 200 kW allows n <= (200 / 1.4 - 11.438) / 10.276 = 12.79:
    12 systems at 188.65 kW, and a 13th would need 203.0364 kW.
    """
    pue = ASSUMPTIONS["pue_air_containment"].default
    assert pue == 1.4
    fixed_kw = 3 * 1.720 + 2 * 0.466 + 0.098 + 3.0 + 2 * 1.1 + 0.048
    per_system_kw = 10.2 + 4 * 0.015 + 2 * 0.008
    largest = math.floor((200 / pue - fixed_kw) / per_system_kw)
    assert largest == 12
    body = {"workload": "capacity", "hardware": {"system": "dgx-h100"}, "envelope": {"facility_mw": 0.2}}
    plan = _plan(body, catalog)
    assert plan["feasible"] is True and plan["cluster"]["systems"] == 12 and plan["cluster"]["gpus"] == 96
    assert plan["power"]["facility_kw"] == pytest.approx(pue * (fixed_kw + 12 * per_system_kw), abs=1e-6)
    assert plan["power"]["facility_kw"] == pytest.approx(188.65, abs=1e-6)
    above = plan["explain"]["envelope.binding"]["inputs"]  # in MW to the watt
    assert above["one_system_more.systems"] == 13
    assert above["one_system_more.facility_mw"] * 1000 == pytest.approx(203.0364, abs=1e-3)
    envelope = plan["envelope"]
    assert envelope["binding"] == "facility_mw" and envelope["within"] is True
    row = envelope["limits"][0]
    assert row["headroom"] == pytest.approx(0.2 - 0.18865, abs=1e-9) and row["binding"] is True


# ------------------------------------------------------------------------------------- the questions of issue 17


def _facility_kw_of(catalog, system_id: str, systems: int) -> float:
    """An independent rebuild of `systems` x system with engine.physical alone (no envelope code)."""
    system = catalog.systems[system_id]
    request = validate_request({"workload": "capacity", "hardware": {"system": system_id},
                                "envelope": {"gpus": 1}}, catalog)  # fmt: skip
    a = Assumptions()
    cluster, problems = build_cluster(system, systems * system.gpus_per_system, request.hardware, a, catalog.parts)
    assert not problems
    physical = build_physical(system, cluster, catalog, a, params=0.0, training_tokens=None,
                              weight_bytes_per_param=2.0, gpus_per_replica=None, request=request)  # fmt: skip
    assert not physical.problems
    return physical.site.facility.facility_kw


def test_largest_gb200_nvl72_cluster_in_50_mw(catalog):
    body = {"workload": "capacity", "hardware": {"system": "gb200-nvl72"}, "envelope": {"facility_mw": 50}}
    plan = _plan(body, catalog)
    systems = plan["cluster"]["systems"]
    assert plan["feasible"] and plan["cluster"]["gpus"] == 72 * systems
    # the answer fits and one more rack does not, by a rebuild that does not use the search
    assert _facility_kw_of(catalog, "gb200-nvl72", systems) <= 50_000
    assert _facility_kw_of(catalog, "gb200-nvl72", systems + 1) > 50_000
    # about 50 MW / (120 kW x PUE 1.2 + its share of network and storage): a few hundred racks
    assert 250 <= systems <= 347  # 50,000 / (120 x 1.2) = 347 with no network at all
    assert plan["envelope"]["binding"] == "facility_mw" and "facility power" in plan["envelope"]["sentence"]
    for key in ("cluster", "fabric", "storage", "power", "cooling", "bom"):
        assert plan.get(key), key


def test_llama_405b_on_15t_tokens_within_20_mw(catalog):
    """On DGX H100 the 90-day deadline does not fit 20 MW: infeasible, power named, with the largest cluster that
    fits and its time; with system auto a GB200 NVL72 plan fits inside it."""
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-405b"},
        "training": {"tokens": 15e12, "deadline_days": 90},
        "hardware": {"system": "dgx-h100"},
        "envelope": {"facility_mw": 20},
    }
    plan = _plan(body, catalog)
    assert plan["feasible"] is False
    text = " ".join(plan["problems"])
    assert "facility power" in text and "fit the envelope" in text and "shortest achievable time" in text
    largest = plan["envelope"]["largest_gpus"]
    assert _facility_kw_of(catalog, "dgx-h100", largest // 8) <= 20_000
    assert _facility_kw_of(catalog, "dgx-h100", largest // 8 + 1) > 20_000
    auto = _plan({**body, "hardware": {"system": "auto"}}, catalog)
    assert auto["feasible"] is True and auto["training"]["days"] <= 90
    assert auto["power"]["facility_kw"] <= 20_000 and auto["envelope"]["within"] is True


def test_pinned_gpus_above_the_envelope_gives_the_time_on_what_fits(catalog):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-70b"},
        "training": {"tokens": 1e12, "gpus": 4096},
        "hardware": {"system": "dgx-h100"},
        "envelope": {"gpus": 1024},
    }
    plan = _plan(body, catalog)
    assert plan["feasible"] is False
    assert "training.gpus=4,096 does not fit" in plan["problems"][0]
    assert "on the 1,024 GPUs that fit, training takes" in plan["problems"][0]


def test_inference_within_an_envelope_stays_inside_it(catalog):
    body = {
        "workload": "inference",
        "model": {"preset": "llama-3-70b"},
        "inference": {"requests_per_s": 5, "prompt_tokens": 1000, "output_tokens": 250},
        "hardware": {"system": "dgx-h100"},
        "envelope": {"racks": 40},
    }
    plan = _plan(body, catalog)
    assert plan["feasible"] is True and plan["racks"]["total"] <= 40 and plan["envelope"]["within"] is True


def test_auto_capacity_reports_the_trade_off(catalog):
    body = {"workload": "capacity", "hardware": {"system": "auto"}, "envelope": {"facility_mw": 5}}
    plan = _plan(body, catalog)
    options = {o["system"]: o for o in plan["envelope"]["options"]}
    assert {"gb200-nvl72", "dgx-h100", "dgx-b200"} <= set(options)
    chosen = [o for o in options.values() if o["chosen"]]
    assert len(chosen) == 1 and chosen[0]["system"] == plan["cluster"]["system"]
    # chosen by compute: no other system's largest cluster has more dense BF16 PFLOPS inside the same 5 MW
    assert all(o["bf16_dense_pflops"] <= chosen[0]["bf16_dense_pflops"] for o in options.values())
    h100 = options["dgx-h100"]
    assert h100["bf16_dense_pflops"] == pytest.approx(h100["gpus"] * 989 / 1000)  # 989 TFLOPS dense BF16 (SXM)
    assert all(o["facility_mw"] <= 5 for o in options.values() if o["feasible"])


def test_a_capacity_plan_without_prices_refuses_a_capex_limit(catalog):
    body = {"workload": "capacity", "hardware": {"system": "dgx-h100"}, "envelope": {"capex_usd": 1e8}}
    plan = _plan(body, catalog)
    assert plan["feasible"] is False and "capex" in plan["problems"][0]


# ---------------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("envelope", "path", "words"),
    [
        ({}, "envelope", "at least one limit"),
        ({"facility_mw": 0}, "envelope.facility_mw", "must be > 0"),
        ({"it_mw": -5}, "envelope.it_mw", "must be > 0"),
        ({"facility_mw": float("nan")}, "envelope.facility_mw", "finite"),
        ({"capex_usd": float("inf")}, "envelope.capex_usd", "finite"),
        ({"racks": 1e12}, "envelope.racks", "<= 10,000,000"),
        ({"facility_mw": 1e9}, "envelope.facility_mw", "<= 10,000"),
        ({"racks": 2.5}, "envelope.racks", "whole number"),
        ({"gpus": "many"}, "envelope.gpus", "must be a number"),
        ({"power_mw": 3}, "envelope.power_mw", "not a known field"),
        ("50 MW", "envelope", "must be an object"),
    ],
)
def test_bad_envelopes_name_their_field(catalog, envelope, path, words):
    body = {"workload": "capacity", "hardware": {"system": "gb200-nvl72"}, "envelope": envelope}
    with pytest.raises(RequestInvalid) as caught:
        validate_request(body, catalog)
    assert path in caught.value.errors, caught.value.errors
    assert any(words in message for message in caught.value.errors[path]), caught.value.errors


def test_capacity_needs_an_envelope_and_an_owned_system(catalog):
    with pytest.raises(RequestInvalid) as caught:
        validate_request({"workload": "capacity", "hardware": {"system": "aws-p5"}}, catalog)
    assert {"envelope", "hardware.system"} <= set(caught.value.errors)


def test_training_still_needs_a_model_and_capacity_ignores_one(catalog):
    with pytest.raises(RequestInvalid) as caught:
        validate_request({"workload": "training", "training": {"tokens": 1e12, "gpus": 8}}, catalog)
    assert "model" in caught.value.errors
    request = validate_request(
        {"workload": "capacity", "model": {"preset": "llama-3-8b"}, "envelope": {"gpus": 8}}, catalog
    )
    assert request.model is None and "model" not in request.to_dict()
