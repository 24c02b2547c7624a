"""Every catalog part and system has a sourced price, the default plan's BOM is fully priced, and a request's own
prices (pricing.utilization, pricing.component_prices, pricing.parameters) are validated and move exactly the
figures that depend on them. Hand-worked figures are written out above their assertions.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from engine import PlanResult, load_catalog, run_plan, to_json, validate_request
from engine.catalog.hardware import default_catalog_dir
from engine.costing import CostInputs, plan_request, request_overrides
from engine.request.validation import RequestInvalid, cost_parameter_limits
from planner.adapter import cost_inputs
from pricing.references import CONFIDENCE_LABELS, price_references_load
from tests.pricing.test_costing import NEUTRAL_FINANCE, priced, training_plan, with_pricing

CATALOG_DIR = default_catalog_dir()
REFS = cost_inputs(price_references_load())  # the on-prem references as costing inputs
DEFAULT_REQUEST = {
    "workload": "training",
    "model": {"preset": "llama-3-70b"},
    "training": {"tokens": 15e12, "deadline_days": 90},
    "hardware": {"system": "auto"},
}


def _records(name: str) -> list[dict]:
    return json.loads((CATALOG_DIR / name).read_text())["records"]


def _inputs(**overrides) -> CostInputs:
    return CostInputs([], REFS.parts, REFS.parameters, REFS.carbon, REFS.spot_bands, **overrides)


def _priced(request: dict) -> tuple[dict, object]:
    catalog = load_catalog()
    validated = validate_request(request, catalog)
    result = run_plan(validated, catalog)
    parts, params = request_overrides(validated)
    return to_json(result), priced(result, _inputs(part_overrides=parts, parameter_overrides=params))


def _overrides(plan: PlanResult) -> tuple[dict, dict]:
    """The plan's own prices, read from its typed request (as `planner.adapter.plan_price` does)."""
    return request_overrides(plan_request(plan))


# ------------------------------------------------------------------------------------------------ coverage


def test_every_catalog_part_has_a_price_record():
    """A part added to engine/data/catalog/parts.json without a price fails here (never silently unpriced)."""
    by_number = {p.part_number for p in REFS.parts if p.part_number}
    by_id = {p.catalog_id for p in REFS.parts if p.catalog_id}
    missing = []
    for part in _records("parts.json"):
        if part.get("lengths_m"):  # cables: every orderable length is its own part number
            numbers = [part["part_number"].format(len=length) for length in part["lengths_m"]]
            missing += [f"{part['id']} {n}" for n in numbers if n not in by_number]
        elif part["part_number"] not in by_number and part["id"] not in by_id:
            missing.append(part["id"])
    assert missing == []


def test_every_catalog_system_has_a_price_record():
    priced = {p.catalog_id: p for p in REFS.parts if p.category == "system"}
    buyable = {r["id"] for r in _records("systems.json") if r.get("auto_candidate", True)}
    assert buyable <= set(priced)  # rented instances and export-market servers have no purchase price
    for system in ("dgx-h200", "dgx-b300", "gb300-nvl72"):
        assert priced[system].unit_price_usd > 0 and priced[system].source and priced[system].as_of


def test_every_price_is_labelled_and_unlabelled_numbers_do_not_exist():
    for p in REFS.parts:
        assert p.confidence in CONFIDENCE_LABELS and p.source and p.as_of, p
        if p.confidence == "assumption":  # an assumption says what it rests on
            assert any(w in p.source.lower() for w in ("judgement", "derived", "rule", "x ")), p


def test_cable_prices_follow_the_length_rule():
    """Each cable family: unit price = base + per-metre x length, so price rises strictly with length."""
    prices = {p.part_number: p.unit_price_usd for p in REFS.parts if p.part_number}
    for part in _records("parts.json"):
        if not part.get("lengths_m"):
            continue
        series = [prices[part["part_number"].format(len=length)] for length in sorted(part["lengths_m"])]
        assert series == sorted(series) and len(set(series)) == len(series), part["id"]
        if len(series) >= 2:  # linear: equal steps per metre
            lengths = sorted(part["lengths_m"])
            per_m = (series[1] - series[0]) / (lengths[1] - lengths[0])
            base = series[0] - per_m * lengths[0]
            assert all(p == base + per_m * n for p, n in zip(series, lengths, strict=True)), part["id"]
    # fibre-mmf-mpo12: $60 + $3/m -> 15 m = 60 + 45 = 105
    assert prices["MFP7E10-N015"] == Decimal("105.00")


def test_default_plan_bom_is_fully_priced():
    plan, result = _priced(DEFAULT_REQUEST)
    bom = result.bom
    hardware_lines = [line for line in bom if line["category"] not in EXTRA]
    assert bom and len(hardware_lines) == len(plan["bom"]) and len(hardware_lines) < len(bom)
    coverage = result.costs["coverage"]
    assert coverage["basis"] == "bom"
    assert coverage["priced_lines"] == len(hardware_lines) and coverage["unpriced_lines"] == []
    assert coverage["notes"] == []  # no "lower bound" caveat
    for line in bom:
        assert line["unit_price_usd"] is not None and line["price_confidence"] in CONFIDENCE_LABELS, line
    total = sum(Decimal(line["extended_price_usd"]) for line in hardware_lines)
    assert Decimal(result.costs["onprem"]["hardware_usd"]) == total
    assert Decimal(result.costs["onprem"]["capex_usd"]) == sum(Decimal(line["extended_price_usd"]) for line in bom)


@pytest.mark.parametrize("system", sorted(r["id"] for r in _records("systems.json") if r.get("auto_candidate", True)))
def test_every_system_builds_a_fully_priced_bom(system):
    plan, result = _priced({**DEFAULT_REQUEST, "hardware": {"system": system}})
    if not plan.get("feasible") or not plan.get("bom"):
        pytest.skip(f"{system}: no feasible build for the default job")
    assert result.costs["coverage"]["unpriced_lines"] == []


# ------------------------------------------------------------------------------------------ overrides: costing


HAND_BOM = [
    {"part_number": "DGX H100", "catalog_id": "dgx-h100", "description": "DGX H100", "quantity": 16},
    {"part_number": "MQM9700-NS2F", "catalog_id": "qm9700", "description": "QM9700", "quantity": 4},
    {"part_number": "MFP7E10-N007", "catalog_id": "fibre-mmf-mpo12", "description": "fibre 7 m", "quantity": 10},
    {"part_number": "MFP7E10-N015", "catalog_id": "fibre-mmf-mpo12", "description": "fibre 15 m", "quantity": 10},
]


def neutral(plan: PlanResult, **parameters: float) -> PlanResult:
    """The plan under the plain finance terms these hand checks were worked for (test_costing.NEUTRAL_FINANCE)."""
    return with_pricing(plan, parameters={**NEUTRAL_FINANCE, **parameters})


EXTRA = {"services", "tax", "spares", "support", "software"}  # capex lines beyond the hardware


def _changed(before: dict, after: dict, prefix: str = "") -> set[str]:
    """Dotted paths of the leaves that differ between two JSON-like values."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: set[str] = set()
        for key in set(before) | set(after):
            out |= _changed(before.get(key), after.get(key), f"{prefix}.{key}" if prefix else str(key))
        return out
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        out = set()
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            out |= _changed(b, a, f"{prefix}[{i}]")
        return out
    return set() if before == after else {prefix}


def test_component_price_override_by_catalog_id_moves_exactly_the_hardware_dependent_figures():
    base_plan = neutral(training_plan(bom=[dict(line) for line in HAND_BOM]))
    over_plan = with_pricing(base_plan, component_prices={"qm9700": 40000})
    base = priced(base_plan, _inputs())
    over = priced(over_plan, _inputs(part_overrides=_overrides(over_plan)[0]))
    # reference: 16 x 270,000 + 4 x 50,000 + 10 x 81 (7 m: 60 + 3 x 7) + 10 x 105 (15 m: 60 + 3 x 15)
    #   = 4,320,000 + 200,000 + 810 + 1,050 = 4,521,860
    assert base.costs["onprem"]["hardware_usd"] == "4521860.00"
    # override: the QM9700 line (matched by catalog id, though its part number has a reference) at 40,000:
    #   4,521,860 - 4 x 10,000 = 4,481,860; capex = x 1.05 = 4,705,953; maintenance = 10 % of the hardware (its
    #   base, as the prepaid support's) = 448,186.00
    on = over.costs["onprem"]
    assert on["hardware_usd"] == "4481860.00"
    assert on["capex_usd"] == "4705953.00"
    assert on["opex_breakdown_usd_per_year"]["maintenance"] == "448186.00"
    line = {ln["part_number"]: ln for ln in over.bom}["MQM9700-NS2F"]
    assert line["unit_price_usd"] == "40000.00" and line["price_confidence"] == "user_override"
    # energy and colocation do not depend on part prices; neither does any cloud row or the carbon figures
    changed = _changed(base.costs["onprem"], on)
    assert {p.split("[")[0] for p in changed if not p.startswith("finance.")} == {
        "hardware_usd",
        "install_usd",
        "capex_usd",
        "capex_range.low_usd",  # the capex priced at each part's low and high end moves with it too
        "capex_range.high_usd",
        "opex_usd_per_year",
        "opex_breakdown_usd_per_year.maintenance",
        "tco_usd",
        "depreciation_usd_per_year",
        "usd_per_gpu_hour",
        "job_usd",
        "job_usd_shared",
    }
    # the finance terms stay; the money built on capex moves
    assert {"finance.capital_charge_usd_per_year", "finance.npv_usd"} <= changed
    assert not any(p.startswith(("finance.cost_of_capital", "finance.useful_life")) for p in changed)
    assert base.costs["cloud"] == over.costs["cloud"] and base.costs["carbon"] == over.costs["carbon"]


def test_component_price_override_of_a_cable_family_covers_every_length():
    plan = with_pricing(
        neutral(training_plan(bom=[dict(line) for line in HAND_BOM])), component_prices={"fibre-mmf-mpo12": 100}
    )
    result = priced(plan, _inputs(part_overrides=_overrides(plan)[0]))
    lines = {ln["part_number"]: ln for ln in result.bom}
    assert lines["MFP7E10-N007"]["unit_price_usd"] == lines["MFP7E10-N015"]["unit_price_usd"] == "100.00"
    # 4,320,000 + 200,000 + 20 x 100 = 4,522,000
    assert result.costs["onprem"]["hardware_usd"] == "4522000.00"
    # an override by part number names one length only
    plan = with_pricing(training_plan(bom=[dict(line) for line in HAND_BOM]), component_prices={"MFP7E10-N015": 1})
    lines = {ln["part_number"]: ln for ln in priced(plan, _inputs(part_overrides={"MFP7E10-N015": 1})).bom}
    assert (lines["MFP7E10-N007"]["unit_price_usd"], lines["MFP7E10-N015"]["unit_price_usd"]) == ("81.00", "1.00")


def test_utilization_override_moves_energy_and_per_hour_figures_only():
    base_plan = neutral(training_plan())
    over_plan = with_pricing(base_plan, utilization=0.5)
    parts, params = _overrides(over_plan)
    assert parts == {} and params["utilization"] == Decimal("0.5")
    base = priced(base_plan, _inputs()).costs
    over = priced(over_plan, _inputs(parameter_overrides=params)).costs
    on = over["onprem"]
    # 16 x DGX H100 (systems only): capex = 4,320,000 x 1.05 = 4,536,000 (unchanged by utilisation)
    assert on["capex_usd"] == base["onprem"]["capex_usd"] == "4536000.00"
    # energy = 212.16 kW x 8760 h x 0.5 x $0.08 = 74,340.86 (was x 0.8)
    assert on["opex_breakdown_usd_per_year"]["energy"] == "74340.86"
    # colocation = 163.2 x 163.44 x 12 = 320,080.90 and maintenance = 10 % of the hardware, 432,000: unchanged
    colocation = base["onprem"]["opex_breakdown_usd_per_year"]["colocation"]
    assert on["opex_breakdown_usd_per_year"]["colocation"] == colocation == "320080.90"
    assert on["opex_breakdown_usd_per_year"]["maintenance"] == "432000.00"
    # opex = 74,340.86 + 320,080.90 + 432,000 = 826,421.76; TCO = 4,536,000 + 3 x 826,421.76 = 7,015,265.28
    assert on["opex_usd_per_year"] == "826421.76" and on["tco_usd"] == "7015265.28"
    # $/GPU-hour = 7,015,265.28 / (128 x 8760 x 0.5 x 3 = 1,681,920) = 4.170986
    assert on["usd_per_gpu_hour"] == "4.170986" and on["utilization"] == "0.50"
    assert over["parameters"]["utilization"]["confidence"] == "user_override"
    # pay-per-use cloud job costs do not depend on the on-prem utilisation
    assert [r["job_usd"] for r in base["cloud"]] == [r["job_usd"] for r in over["cloud"]]


def test_named_parameter_override_moves_its_dependents():
    plan = neutral(training_plan(), install_integration_percent=10)
    _parts, params = _overrides(plan)
    on = priced(plan, _inputs(parameter_overrides=params)).costs["onprem"]
    # capex = 4,320,000 x 1.10 = 4,752,000; install = 432,000; maintenance stays 10 % of the hardware, 432,000
    # (installation is a service, not hardware under support)
    assert (on["install_usd"], on["capex_usd"]) == ("432000.00", "4752000.00")
    assert on["opex_breakdown_usd_per_year"]["maintenance"] == "432000.00"


# ----------------------------------------------------------------------------------------- overrides: validation


def test_parameter_limits_name_exactly_the_cost_parameters():
    limits = cost_parameter_limits()
    assert set(limits) == set(REFS.parameters)
    assert limits["utilization"].minimum == 0 and limits["utilization"].minimum_exclusive
    assert limits["utilization"].maximum == 1


def test_valid_overrides_reach_the_request_echo():
    request = validate_request(
        {
            **DEFAULT_REQUEST,
            "pricing": {
                "utilization": 0.6,
                "component_prices": {"MQM9700-NS2F": 40000, "dgx-h200": 310000, "MFP7E10-N015": 90},
                "parameters": {"install_integration_percent": 8, "cloud_pue": 1.2},
            },
        },
        load_catalog(),
    )
    echo = request.to_dict()["pricing"]
    assert echo["utilization"] == 0.6
    assert echo["component_prices"] == {"MQM9700-NS2F": 40000.0, "dgx-h200": 310000.0, "MFP7E10-N015": 90.0}
    assert echo["parameters"] == {"install_integration_percent": 8.0, "cloud_pue": 1.2}


@pytest.mark.parametrize(
    ("pricing", "site", "path", "message"),
    [
        ({"utilization": 0}, None, "pricing.utilization", "must be >= 0.01"),
        ({"utilization": 1.5}, None, "pricing.utilization", "must be <= 1"),
        ({"utilization": "high"}, None, "pricing.utilization", "must be a number"),
        ({"component_prices": {"QM9700": 40000}}, None, "pricing.component_prices.QM9700", "did you mean 'qm9700'"),
        ({"component_prices": {"MQM9700-NS2F": 0}}, None, "pricing.component_prices.MQM9700-NS2F", "must be > 0"),
        ({"component_prices": {"qm9700": -5}}, None, "pricing.component_prices.qm9700", "must be > 0"),
        ({"component_prices": {"qm9700": True}}, None, "pricing.component_prices.qm9700", "must be a number"),
        ({"component_prices": [40000]}, None, "pricing.component_prices", "must be an object"),
        ({"parameters": {"utilisation": 0.5}}, None, "pricing.parameters.utilisation", "did you mean 'utilization'"),
        ({"parameters": {"cloud_pue": 0.9}}, None, "pricing.parameters.cloud_pue", "must be >= 1"),
        (
            {"parameters": {"maintenance_percent_per_year": 101}},
            None,
            "pricing.parameters.maintenance_percent_per_year",
            "must be <= 100",
        ),
        (
            {"parameters": {"spot_checkpoint_write_min": 0}},
            None,
            "pricing.parameters.spot_checkpoint_write_min",
            "must be > 0",
        ),
        (
            {"utilization": 0.7, "parameters": {"utilization": 0.5}},
            None,
            "pricing.parameters.utilization",
            "give only one",
        ),
        (
            {"parameters": {"electricity_usd_per_kwh": 0.1}},
            {"electricity_usd_per_kwh": 0.2},
            "pricing.parameters.electricity_usd_per_kwh",
            "site.electricity_usd_per_kwh",
        ),
    ],
)
def test_bad_override_values_give_field_errors(pricing, site, path, message):
    body = {**DEFAULT_REQUEST, "pricing": pricing}
    if site is not None:
        body["site"] = site
    with pytest.raises(RequestInvalid) as info:
        validate_request(body, load_catalog())
    assert path in info.value.errors, info.value.errors
    assert any(message in m for m in info.value.errors[path]), info.value.errors[path]


def test_every_bad_override_is_reported_at_once():
    body = {
        **DEFAULT_REQUEST,
        "pricing": {"utilization": 2, "component_prices": {"nope": 1}, "parameters": {"staff_usd_per_year": -1}},
    }
    with pytest.raises(RequestInvalid) as info:
        validate_request(body, load_catalog())
    assert {
        "pricing.utilization",
        "pricing.component_prices.nope",
        "pricing.parameters.staff_usd_per_year",
    } <= set(info.value.errors)


def test_validator_takes_another_parameter_table():
    from engine.request.validation import CostParameterLimit

    limits = {"utilization": CostParameterLimit(0.1, 0.9, "fraction")}
    with pytest.raises(RequestInvalid) as info:
        validate_request({**DEFAULT_REQUEST, "pricing": {"parameters": {"utilization": 0.95}}}, load_catalog(), limits)
    assert info.value.errors["pricing.parameters.utilization"] == ["pricing.parameters.utilization must be <= 0.9"]


# ---------------------------------------------------------------------------------------- overrides: plan_price


@pytest.mark.django_db
def test_plan_price_applies_the_request_overrides_to_this_plan_only():
    from planner.adapter import plan_compute

    # the system pinned: utilisation also ranks the candidate systems, and this test is about the prices
    pinned = {**DEFAULT_REQUEST, "hardware": {"system": "dgx-b200"}}
    base = plan_compute(request_data=pinned, price_snapshot=None).result
    body = {**pinned, "pricing": {"component_prices": {"qm9700": 40000}, "utilization": 0.5}}
    over = plan_compute(request_data=body, price_snapshot=None).result
    qm = {ln["part_number"]: ln for ln in over["bom"]}["MQM9700-NS2F"]
    assert qm["unit_price_usd"] == "40000.00" and qm["price_confidence"] == "user_override"
    assert qm["price_basis"] == "user_override"
    # hardware falls by quantity x (50,000 - 40,000): the NVIDIA-branded QM9700 reference is $50k (FS.com sheet)
    delta = Decimal(over["costs"]["onprem"]["hardware_usd"]) - Decimal(base["costs"]["onprem"]["hardware_usd"])
    assert delta == qm["quantity"] * Decimal(-10000)
    utilization = (Decimal(r["costs"]["onprem"]["utilization"]) for r in (over, base))
    assert tuple(utilization) == (Decimal("0.5"), Decimal("0.8"))
    again = plan_compute(request_data=pinned, price_snapshot=None).result  # nothing leaked
    assert again["costs"]["onprem"] == base["costs"]["onprem"]


# ----------------------------------------------------------------------------- one extended-price rule, one total


def test_fractional_cent_override_gives_one_extended_price_in_costs_csv_and_total():
    """10.005 USD x 3: the unit price is rounded to the cent first (10.01), then x 3 = 30.03, everywhere."""
    from planner.outputs.bom_csv import bom_rows
    from planner.presenters import bom_summary

    bom = [
        {"part_number": "DGX H100", "catalog_id": "dgx-h100", "description": "DGX H100", "quantity": 16}
        | {"category": "compute"},
        {"part_number": "MQM9700-NS2F", "catalog_id": "qm9700", "description": "QM9700", "quantity": 3},
    ]
    plan = with_pricing(training_plan(bom=bom), component_prices={"MQM9700-NS2F": 10.005})
    result = priced(plan, _inputs(part_overrides=_overrides(plan)[0]))
    line = {ln["part_number"]: ln for ln in result.bom}["MQM9700-NS2F"]
    assert (line["unit_price_usd"], line["extended_price_usd"]) == ("10.01", "30.03")
    (csv_row,) = [row for row in bom_rows(result.typed.bom) if row["part_number"] == "MQM9700-NS2F"]
    assert (csv_row["unit_price"], csv_row["extended_price"]) == ("10.01", "30.03")
    # hardware = 16 x 270,000 + 30.03 = 4,320,030.03; with the default capex lines (DGX: no licence line)
    #   spares 3 % of the systems 4,320,000 = 129,600.00; install 5 % of 4,320,030.03 = 216,001.5015 -> 216,001.50;
    #   freight 1 % = 43,200.3003 -> 43,200.30; support 3 years x 10 % = 3 x 432,003.003 -> 3 x 432,003.00
    #   = 1,296,009.00; capex = 4,320,030.03 + 129,600 + 216,001.50 + 43,200.30 + 1,296,009 = 6,004,840.83
    assert result.costs["onprem"]["hardware_usd"] == "4320030.03"
    assert result.costs["onprem"]["capex_usd"] == "6004840.83"
    rows = bom_rows(result.typed.bom)
    hardware_rows = [row for row in rows if row["category"] not in EXTRA]
    assert sum(Decimal(row["extended_price"]) for row in hardware_rows) == Decimal("4320030.03")
    assert sum(Decimal(row["extended_price"]) for row in rows) == Decimal("6004840.83")
    page_total = bom_summary({"bom": result.bom, "costs": result.costs}).total_usd
    assert page_total == Decimal("6004840.83") == result.bom_total_usd


def _assert_totals_agree(result) -> None:
    """BOM total = capex (hardware lines = hardware, the extra lines the rest); first-year opex = its parts; TCO =
    capex + each year's running costs; the cumulative series starts at capex and ends at TCO; every figure to the
    cent, as strings and as Decimals."""
    on = result.costs["onprem"]
    money = {k: Decimal(v) for k, v in on.items() if k.endswith("_usd") and v is not None}
    lines = result.bom if result.bom is not None else on["lines"]
    hardware = [Decimal(line["extended_price_usd"]) for line in lines if line["category"] not in EXTRA]
    extra = [Decimal(line["extended_price_usd"]) for line in lines if line["category"] in EXTRA]
    assert extra, "the default terms add capex lines beyond the hardware"
    assert sum(hardware) == money["hardware_usd"] and money["hardware_usd"] + sum(extra) == money["capex_usd"]
    if result.bom is not None:
        assert result.bom_total_usd == money["capex_usd"]
    parts = on["opex_breakdown_usd_per_year"]
    assert sum(Decimal(v) for v in parts.values()) == Decimal(on["opex_usd_per_year"])
    flows = on["finance"]["cash_flows"][: on["years"]]
    assert money["capex_usd"] + sum(Decimal(f["total_usd"]) for f in flows) == money["tco_usd"]
    series = result.costs["comparison"]["cumulative"]["series"][0]["usd"]
    assert (Decimal(series[0]), Decimal(series[-1])) == (money["capex_usd"], money["tco_usd"])
    typed = result.onprem
    assert (typed.capex_usd, typed.tco_usd, typed.opex_usd_per_year) == (
        money["capex_usd"],
        money["tco_usd"],
        Decimal(on["opex_usd_per_year"]),
    )
    sensitivity = result.costs["sensitivity"]
    for row in [{"low": sensitivity["base"], "high": sensitivity["base"]}, *sensitivity["rows"]]:
        for case in (row["low"], row["high"]):
            if case["cloud_minus_onprem_usd"] is not None:
                cloud, onprem = Decimal(case["cheapest_cloud_job_usd"]), Decimal(case["onprem_job_usd_shared"])
                assert cloud - onprem == Decimal(case["cloud_minus_onprem_usd"])


def test_bom_total_capex_components_and_totals_agree_to_the_cent():
    # A real plan (default 70B job, full BOM) and a hand plan whose energy and colocation have fractions of a
    # cent (212.16 kW x 8760 x 0.8 x 0.08 = 118,945.3824; 163.2 x 163.44 x 12 = 320,080.896).
    _plan, result = _priced(DEFAULT_REQUEST)
    _assert_totals_agree(result)
    hand = priced(training_plan(bom=[dict(line) for line in HAND_BOM], years=5), _inputs())
    _assert_totals_agree(hand)
    neutral_hand = priced(neutral(training_plan(bom=[dict(line) for line in HAND_BOM], years=5)), _inputs())
    # 118,945.38 + 320,080.90 + 10 % of the hardware 4,521,860 (452,186.00) + 0 = 891,212.28;
    # TCO = 4,747,953 + 5 x that = 9,204,014.40
    assert neutral_hand.costs["onprem"]["capex_usd"] == "4747953.00"  # 4,521,860 x 1.05
    assert neutral_hand.costs["onprem"]["opex_usd_per_year"] == "891212.28"
    assert neutral_hand.costs["onprem"]["tco_usd"] == "9204014.40"
