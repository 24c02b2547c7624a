"""Cost-aware auto selection (engine/search/selection.py): prices as plain data, energy rule as the fallback."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine import run_plan, to_json, validate_request
from engine.search.selection import SelectionPrices, inference_selection_usd, training_selection_usd

TRAINING = {
    "workload": "training",
    "model": {"preset": "llama-3-70b"},
    "training": {"tokens": 15e12, "deadline_days": 90},
    "hardware": {"system": "auto"},
}
INFERENCE = {
    "workload": "inference",
    "model": {"preset": "llama-3-8b"},
    "inference": {"requests_per_s": 20, "prompt_tokens": 1000, "output_tokens": 250, "ttft_ms": 1000, "tpot_ms": 50},
    "hardware": {"system": "auto"},
}


def _two(catalog, *ids):
    """The catalog narrowed to the given systems, so "auto" ranks exactly these."""
    return replace(catalog, systems={i: catalog.systems[i] for i in ids})


# A deadline at which the two Blackwell systems rank differently by cost and by energy (below).
TRAINING_70_DAYS = {**TRAINING, "training": {"tokens": 15e12, "deadline_days": 70}}


def _run(catalog, body, prices=None):
    return to_json(run_plan(validate_request(body, catalog), catalog, prices=prices))


def _rows(p):
    return {c["system"]: c for c in p["candidates"]}


def test_formulas_by_hand():
    # training: 10 systems x $100,000 + 50 kW x 2 days x 24 h x $0.10 = 1,000,000 + 240 = 1,000,240
    assert training_selection_usd(10, 100_000.0, 50.0, 2.0, 0.10) == pytest.approx(1_000_240.0)
    # inference: 1 x $199,000 + 9.75 kW x 8760 h x 0.8 x 3 y x $0.08 = 199,000 + 16,398.72 = 215,398.72
    assert inference_selection_usd(1, 199_000.0, 9.75, 0.8, 3, 0.08) == pytest.approx(215_398.72)


def test_inference_ranking_by_hand_and_a_price_flips_it(catalog):
    cat = _two(catalog, "dgx-a100-80gb", "dgx-h100")
    prices = SelectionPrices(
        system_usd={"dgx-a100-80gb": 199_000.0, "dgx-h100": 270_000.0}, electricity_usd_per_kwh=0.08, utilization=0.8
    )
    p = _run(cat, INFERENCE, prices)
    rows = _rows(p)
    # llama-3-8b at 20 req/s fits one system of either kind (A100: 4 GPUs, H100: 2 GPUs), both air-cooled (PUE 1.5):
    #   dgx-a100-80gb: 6.5 kW x 1.5 = 9.75 kW;  199,000 + 9.75 x 8760 x 0.8 x 3 x 0.08 = 199,000 + 16,398.72
    #                  = 215,398.72
    #   dgx-h100:     10.2 kW x 1.5 = 15.3 kW;  270,000 + 15.3 x 8760 x 0.8 x 3 x 0.08 = 270,000 + 25,733.38
    #                  = 295,733.38  -> the A100 system is cheaper.
    assert rows["dgx-a100-80gb"]["systems"] == rows["dgx-h100"]["systems"] == 1
    assert rows["dgx-a100-80gb"]["facility_kw"] == pytest.approx(9.75)
    assert rows["dgx-h100"]["facility_kw"] == pytest.approx(15.3)
    assert rows["dgx-a100-80gb"]["selection_usd"] == pytest.approx(215_398.72)
    assert rows["dgx-h100"]["selection_usd"] == pytest.approx(295_733.38)
    assert p["selection"]["system"] == "dgx-a100-80gb" and p["selection"]["basis"] == "cost"
    # At $300,000 the A100 system costs 300,000 + 16,398.72 = 316,398.72 > 295,733.38: the H100 wins.
    dearer = replace(prices, system_usd={**prices.system_usd, "dgx-a100-80gb": 300_000.0})
    p2 = _run(cat, INFERENCE, dearer)
    assert p2["selection"]["system"] == "dgx-h100"
    assert _rows(p2)["dgx-a100-80gb"]["selection_usd"] == pytest.approx(316_398.72)


def test_training_ranking_by_hand_cost_overrules_energy(catalog):
    cat = _two(catalog, "dgx-b300", "gb200-nvl72")
    prices = SelectionPrices(
        system_usd={"dgx-b300": 250_000.0, "gb200-nvl72": 2_500_000.0}, electricity_usd_per_kwh=0.08
    )
    priced = _run(cat, TRAINING_70_DAYS, prices)
    unpriced = _run(cat, TRAINING_70_DAYS, None)
    rows = _rows(priced)
    b300, gb200 = rows["dgx-b300"], rows["gb200-nvl72"]
    # Each system at the smallest GPU count that meets 70 expected days (engine figures today):
    #   dgx-b300:    2048 GPUs = 256 systems, 48.07 days, 3712 kW IT x PUE 1.3 = 4825.6 kW
    #       256 x 250,000 + 4825.6 kW x 48.07 d x 24 h x $0.08 = 64,000,000 + 445,378 = 64,445,378
    #   gb200-nvl72: 2048 GPUs on 29 racks, 43.11 days, 3480 kW IT x PUE 1.2 (liquid) = 4176 kW
    #       29 x 2,500,000 + 4176 kW x 43.11 d x 24 h x $0.08 = 72,500,000 + 345,657 = 72,845,657
    # -> dgx-b300 is cheaper for this job, although gb200-nvl72 uses less IT energy (3601 vs 4282 MWh), which is
    #    what the energy rule (no prices) picks.
    assert (gb200["systems"], b300["systems"]) == (29, 256)
    for row, price in ((b300, 250_000.0), (gb200, 2_500_000.0)):
        expected = row["systems"] * price + row["facility_kw"] * row["days"] * 24 * 0.08
        assert row["selection_usd"] == pytest.approx(expected)
    assert b300["selection_usd"] == pytest.approx(64_445_378, rel=0.01)
    assert gb200["selection_usd"] == pytest.approx(72_845_657, rel=0.01)
    assert gb200["it_energy_mwh"] < b300["it_energy_mwh"]
    assert priced["selection"]["system"] == "dgx-b300" and priced["selection"]["basis"] == "cost"
    assert (
        "by cost" in priced["selection"]["rule"]
        and "smallest GPU count that meets the deadline" in (priced["selection"]["rule"])
    )
    assert unpriced["selection"]["system"] == "gb200-nvl72"
    entry = priced["explain"]["selection.system"]
    assert "systems x the system price" in entry["formula"] and entry["inputs"]["basis"] == "cost"
    assert entry["inputs"]["selection_usd_by_system"]["dgx-b300"] == b300["selection_usd"]


def test_a_missing_price_falls_back_to_energy_and_says_so(catalog):
    cat = _two(catalog, "dgx-b300", "gb200-nvl72")
    # dgx-b300 would win by cost (above); without gb200-nvl72's price the cost rule cannot rank both.
    prices = SelectionPrices(system_usd={"dgx-b300": 250_000.0}, electricity_usd_per_kwh=0.08)
    p = _run(cat, TRAINING_70_DAYS, prices)
    assert p["selection"]["system"] == "gb200-nvl72"  # lowest IT energy, as without prices
    assert p["selection"]["basis"] == "energy" and p["selection"]["unpriced_systems"] == ["gb200-nvl72"]
    assert "no system price for gb200-nvl72" in p["selection"]["rule"]
    rows = _rows(p)
    assert rows["gb200-nvl72"]["selection_usd"] is None and rows["dgx-b300"]["selection_usd"] is not None
    entry = p["explain"]["selection.system"]
    assert entry["inputs"]["basis"] == "energy" and "cost rule not used" in entry["formula"]


def test_without_prices_the_plan_is_as_before(catalog):
    p = _run(catalog, TRAINING)
    assert set(p["selection"]) == {"rule", "system"} and "Prices are not used yet." in p["selection"]["rule"]
    assert all("selection_usd" not in c and "facility_kw" not in c for c in p["candidates"])
    assert "selection.system" not in p["explain"]


def test_a_fixed_system_is_not_reranked(catalog):
    body = {**TRAINING, "hardware": {"system": "dgx-h100"}}
    prices = SelectionPrices(system_usd={"dgx-h100": 1.0}, electricity_usd_per_kwh=0.08)
    p = _run(catalog, body, prices)
    assert p["selection"]["system"] == "dgx-h100" and p["selection"]["basis"] == "fixed"
    assert p["selection"]["rule"] == "system fixed by the request: dgx-h100"
