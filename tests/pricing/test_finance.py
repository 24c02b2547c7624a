"""Finance as finance does it (issue 14), checked by hand: the annuity capital charge, NPV, residual value, capex
as BOM lines, and the on-prem job cost and $/GPU-hour built on them.

Expected values come from textbook identities or arithmetic written out here, never from the code's output:
the capital recovery factor of 8 % over 5 years is 0.2504564545 (standard CRF tables: 0.25046), and a charge with
a residual value S equals (P - S) x CRF + S x r.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import pytest

from engine import load_catalog, validate_request
from engine.costing.finance import (
    FinanceTerms,
    RunningCosts,
    annuity_factor,
    capital_charge,
    discount_factor,
    lease_npv,
    npv_of_yearly,
    value_at,
    year_flows,
)
from engine.request.validation import RequestInvalid
from tests.pricing.test_costing import inputs, priced, training_plan, with_pricing

CRF_8_5 = 0.2504564545  # 0.08 / (1 - 1.08^-5) = 0.08 / 0.3194168 (1.08^5 = 1.4693280768)


def c(x: float | Decimal) -> Decimal:
    """To the cent, half up (the test's own rounding)."""
    return Decimal(repr(x) if isinstance(x, float) else x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def terms(**kw) -> FinanceTerms:
    base = {
        "cost_of_capital": Decimal("0.08"),
        "useful_life_years": 5,
        "residual_value_fraction": Decimal("0.10"),
        "horizon_years": 3,
        "power_escalator": Decimal(0),
        "colo_escalator": Decimal(0),
        "support_bundled_years": 0,
        "maintenance_fraction": Decimal(0),
        "insurance_fraction": Decimal(0),
        "lease_fraction_per_month": Decimal(0),
    }
    return FinanceTerms(**{**base, **kw})


# ------------------------------------------------------------------------------------------------ the formulas


def test_annuity_factor_matches_the_capital_recovery_table():
    assert float(annuity_factor(Decimal("0.08"), 5)) == pytest.approx(CRF_8_5, abs=1e-10)
    # 10 % over 3 years: 0.1 / (1 - 1/1.331) = 0.1 / 0.2486852 = 0.4021148
    assert float(annuity_factor(Decimal("0.10"), 3)) == pytest.approx(0.4021148036, abs=1e-9)
    assert annuity_factor(Decimal(0), 4) == Decimal("0.25")  # no cost of capital: capex / years


def test_capital_charge_is_an_annuity_net_of_the_residual_not_capex_over_years():
    # P = 1,000,000, S = 100,000 at the end of 5 years, r = 8 %: (P - S) x CRF + S x r
    #   = 900,000 x 0.2504564545 + 8,000 = 225,410.81 + 8,000 = 233,410.81
    assert capital_charge(Decimal(1_000_000), Decimal(100_000), Decimal("0.08"), 5) == Decimal("233410.81")
    # without a cost of capital it is straight-line: (1,000,000 - 100,000) / 5
    assert capital_charge(Decimal(1_000_000), Decimal(100_000), Decimal(0), 5) == Decimal("180000.00")
    # and above capex / years whenever money costs something
    assert capital_charge(Decimal(1_000_000), Decimal(0), Decimal("0.08"), 5) > Decimal(200_000)


def test_npv_discounts_end_of_year_amounts():
    # 110 in a year and 121 in two, at 10 %: 100 + 100
    assert npv_of_yearly([Decimal(110), Decimal(121)], Decimal("0.10")) == Decimal("200.00")
    assert float(discount_factor(Decimal("0.10"), 2)) == pytest.approx(1 / 1.21)


def test_residual_value_falls_in_a_straight_line_then_stays():
    # 1,000 of hardware, 100 residual, 5-year life: after 3 years 1,000 - 900 x 3/5 = 460
    assert value_at(Decimal(1000), Decimal(100), 5, 3) == Decimal("460.00")
    assert value_at(Decimal(1000), Decimal(100), 5, 5) == value_at(Decimal(1000), Decimal(100), 5, 7) == 100


def test_running_costs_escalate_and_maintenance_starts_after_the_bundled_support():
    base = RunningCosts(
        energy_usd=Decimal(1000),
        colocation_usd=Decimal(2000),
        staff_usd=Decimal(300),
        capex_usd=Decimal(10000),
        hardware_usd=Decimal(8000),
    )
    t = terms(
        power_escalator=Decimal("0.10"),
        colo_escalator=Decimal("0.05"),
        support_bundled_years=2,
        maintenance_fraction=Decimal("0.10"),
        insurance_fraction=Decimal("0.01"),
    )
    flows = year_flows(base, t, 3)
    assert [f.energy_usd for f in flows] == [Decimal("1000.00"), Decimal("1100.00"), Decimal("1210.00")]
    assert [f.colocation_usd for f in flows] == [Decimal("2000.00"), Decimal("2100.00"), Decimal("2205.00")]
    # maintenance from year 3: 10 % of the hardware (8,000), the prepaid support's base, not of capex
    assert [f.maintenance_usd for f in flows] == [Decimal("0.00"), Decimal("0.00"), Decimal("800.00")]
    # year 3: 1,210 + 2,205 + 800 + 300 + 100 (1 % of capex)
    assert flows[2].total_usd == Decimal("4615.00")


def test_lease_npv_pays_the_lease_and_the_running_costs_but_no_insurance():
    # capex 12,000 at 1 % a month: 1,440 a year; running 500 a year of which insurance 100; 2 years at 0 %
    base = RunningCosts(Decimal(400), Decimal(0), Decimal(0), Decimal(12000), Decimal(12000))
    t = terms(
        cost_of_capital=Decimal(0),
        horizon_years=2,
        insurance_fraction=Decimal("100") / Decimal(12000),
        lease_fraction_per_month=Decimal("0.01"),
    )
    flows = year_flows(base, t, 2)
    assert lease_npv(Decimal(12000), t, flows) == Decimal("3680.00")  # 2 x (1,440 + 400)
    assert lease_npv(Decimal(12000), terms(), flows) is None  # no lease rate given


# ------------------------------------------------------------------------------------------ a plan, by hand

# 16 x DGX H100 (128 GPUs) at $270,000, systems only; facility 212.16 kW, IT 163.2 kW; a 10-day (240 h) job;
# the default terms: 8 %, 5-year life, 10 % residual, 3-year horizon, 3 years of prepaid support at 10 %/year,
# spares 3 %, install 5 %, freight 1 %, no tax, insurance 0.5 %, 1 FTE per 1,000 GPUs at $135,000, energy +2.5 %
# and colocation +3 % a year; DGX systems include their software (no licence line).
HARDWARE = Decimal(4_320_000)
EXTRA_LINES = {
    "SPARES-POOL": Decimal("129600.00"),  # 3 % of 4,320,000
    "SVC-INSTALL": Decimal("216000.00"),  # 5 %
    "SVC-FREIGHT": Decimal("43200.00"),  # 1 %
    "SUPPORT-3Y": Decimal("1296000.00"),  # 3 years x 10 % x 4,320,000
}
CAPEX = HARDWARE + sum(EXTRA_LINES.values())  # 6,004,800.00


def _by_hand() -> dict[str, Decimal]:
    """Every figure of the default plan, worked out with the textbook formulas written out here."""
    energy1 = Decimal("212.16") * 8760 * Decimal("0.8") * Decimal("0.08")  # 118,945.3824
    colo1 = Decimal("163.2") * Decimal("163.44") * 12  # 320,080.896
    staff, insurance = Decimal("17280.00"), c(float(CAPEX) * 0.005)  # 0.128 FTE x 135,000; 30,024.00
    years = []
    for t in range(1, 6):
        maintenance = Decimal(0) if t <= 3 else c(float(HARDWARE) * 0.10)  # the support's base: 432,000
        # each year's bill is the last one's (first year to the cent) plus the escalator
        energy, colo = c(energy1) * Decimal("1.025") ** (t - 1), c(colo1) * Decimal("1.03") ** (t - 1)
        years.append(c(energy) + c(colo) + maintenance + staff + insurance)
    residual = HARDWARE / 10  # 432,000
    charge = c((float(CAPEX) - float(residual)) * CRF_8_5 + float(residual) * 0.08)
    levelized = sum(float(y) / 1.08**t for t, y in enumerate(years, start=1)) * CRF_8_5
    value_3 = HARDWARE - (HARDWARE - residual) * 3 / 5  # 1,987,200
    npv = float(CAPEX) + sum(float(y) / 1.08**t for t, y in enumerate(years[:3], start=1)) - float(value_3) / 1.08**3
    per_gpu_hour = (float(charge) + float(c(levelized))) / (128 * 8760 * 0.8)
    bought = (
        float(CAPEX)
        + 212.16 * 240 * 0.08
        + float(c(colo1) + staff + insurance) * 240 / 8760
        - float(residual) / 1.08 ** (240 / 8760)
    )
    return {
        "opex_year_1": years[0],
        "tco": CAPEX + sum(years[:3]),
        "charge": charge,
        "levelized": c(levelized),
        "npv": c(npv),
        "value_3": value_3,
        "per_gpu_hour": Decimal(repr(per_gpu_hour)),
        "shared": c(128 * 240 * per_gpu_hour),
        "bought": c(bought),
    }


def test_default_plan_capex_lines_tie_to_capex():
    result = priced(training_plan(), inputs())
    on = result.costs["onprem"]
    lines = {line["part_number"]: line for line in on["lines"]}
    assert {k: Decimal(lines[k]["extended_price_usd"]) for k in EXTRA_LINES} == EXTRA_LINES
    assert lines["SUPPORT-3Y"]["quantity"] == 3 and lines["SUPPORT-3Y"]["unit_price_usd"] == "432000.00"
    assert "SW-NVAIE" not in lines and "TAX-SALES-USE" not in lines  # DGX bundles its software; no tax by default
    assert Decimal(on["capex_usd"]) == CAPEX == sum(Decimal(x["extended_price_usd"]) for x in on["lines"])
    assert on["install_usd"] == "216000.00"


def test_default_plan_finance_by_hand():
    hand = _by_hand()
    on = priced(training_plan(), inputs()).costs["onprem"]
    fin = on["finance"]
    assert Decimal(on["opex_usd_per_year"]) == hand["opex_year_1"] == Decimal("486330.28")
    assert Decimal(on["tco_usd"]) == hand["tco"]
    # the rounding of a float computation can differ by a cent from the Decimal one
    assert abs(Decimal(fin["capital_charge_usd_per_year"]) - hand["charge"]) <= Decimal("0.01")
    assert abs(Decimal(fin["levelized_opex_usd_per_year"]) - hand["levelized"]) <= Decimal("0.01")
    assert Decimal(fin["value_at_horizon_usd"]) == hand["value_3"] == Decimal("1987200.00")
    assert abs(Decimal(fin["npv_usd"]) - hand["npv"]) <= Decimal("0.02")
    assert fin["residual_value_usd"] == "432000.00" and fin["useful_life_years"] == 5 and fin["horizon_years"] == 3
    assert [f["year"] for f in fin["cash_flows"]] == [1, 2, 3, 4, 5]
    assert float(on["usd_per_gpu_hour"]) == pytest.approx(float(hand["per_gpu_hour"]), abs=2e-6)
    assert abs(Decimal(on["job_usd_shared"]) - hand["shared"]) <= Decimal("0.05")
    assert abs(Decimal(on["job_usd"]) - hand["bought"]) <= Decimal("0.02")


def test_cost_of_capital_raises_the_job_cost_over_straight_line():
    zero = with_pricing(training_plan(), parameters={"cost_of_capital": 0})
    base = priced(training_plan(), inputs()).costs["onprem"]
    free = priced(zero, inputs()).costs["onprem"]
    # at 0 % the charge is straight-line: (6,004,800 - 432,000) / 5 = 1,114,560
    assert free["finance"]["capital_charge_usd_per_year"] == "1114560.00"
    assert Decimal(base["job_usd_shared"]) > Decimal(free["job_usd_shared"])


def test_software_licence_lines_for_systems_without_bundled_software():
    # HGX H100 OEM servers: NVIDIA AI Enterprise 128 GPUs x 3 years at $4,500 per GPU-year = 1,728,000
    plan = training_plan(system="hgx-h100-oem")
    lines = {line["part_number"]: line for line in priced(plan, inputs()).costs["onprem"]["lines"]}
    sw = lines["SW-NVAIE"]
    assert (sw["quantity"], sw["unit_price_usd"], sw["extended_price_usd"]) == (384, "4500.00", "1728000.00")
    assert sw["category"] == "software" and sw["price_confidence"] == "list_price"


@pytest.mark.parametrize(
    ("system", "gpu", "licensed"), [("gb200-nvl72", "b200-gb200", False), ("gb300-nvl72", "b300-gb300", True)]
)
def test_the_dgx_rack_bundles_its_software_and_the_oem_rack_does_not(system, gpu, licensed):
    """The catalog's GB200 NVL72 is NVIDIA's DGX GB200 (part number 'DGX GB200 NVL72', the DGX SuperPOD reference
    design), whose price carries NVIDIA AI Enterprise like every DGX; its GB300 NVL72 is the partners' rack of the
    Enterprise reference architecture, licensed per GPU-year: 144 GPUs x 3 years x $4,500 = $1,944,000."""
    plan = training_plan(gpus=144, system=system, gpu=gpu)
    lines = {line["part_number"]: line for line in priced(plan, inputs()).costs["onprem"]["lines"]}
    assert ("SW-NVAIE" in lines) is licensed
    if licensed:
        assert lines["SW-NVAIE"]["extended_price_usd"] == "1944000.00"


def test_lease_versus_buy_when_a_lease_rate_is_given():
    plan = with_pricing(training_plan(), parameters={"lease_rate_percent_per_month": 3})
    fin = priced(plan, inputs()).costs["onprem"]["finance"]
    # 3 % x 6,004,800 x 12 = 2,161,728 a year for 3 years, against owning's NPV
    assert fin["lease_vs_buy"] == ("lease" if Decimal(fin["lease_npv_usd"]) < Decimal(fin["npv_usd"]) else "buy")
    assert Decimal(fin["lease_npv_usd"]) > Decimal(2_161_728) * Decimal("2.5")  # > 2.58 years' payments (PV at 8 %)
    assert "lease_npv_usd" not in priced(training_plan(), inputs()).costs["onprem"]["finance"]


def test_npv_ranks_owning_against_renting_the_same_work():
    comp = priced(training_plan(), inputs()).costs["comparison"]
    options = comp["npv"]
    assert [Decimal(o["npv_usd"]) for o in options] == sorted(Decimal(o["npv_usd"]) for o in options)
    onprem = next(o for o in options if o["option"] == "onprem")
    assert onprem["npv_usd"] == priced(training_plan(), inputs()).costs["onprem"]["finance"]["npv_usd"]
    assert "onprem" in {o["option"] for o in options} and comp["npv_basis"]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("useful_life_years", 4.5, "must be a whole number"),
        ("useful_life_years", 0, "must be >= 1"),
        ("cost_of_capital", 0.9, "must be <= 0.5"),
        ("residual_value_fraction", -0.1, "must be >= 0"),
    ],
)
def test_finance_parameters_are_validated_by_field(name, value, message):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-8b"},
        "training": {"tokens": 1e11, "gpus": 8},
        "pricing": {"parameters": {name: value}},
    }
    with pytest.raises(RequestInvalid) as info:
        validate_request(body, load_catalog())
    path = f"pricing.parameters.{name}"
    assert any(message in m for m in info.value.errors[path]), info.value.errors
