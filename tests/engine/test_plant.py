"""The site plant (engine/physical/plant.py): electrical chain and heat rejection, values worked by hand."""

from __future__ import annotations

import pytest

from engine import load_catalog, run_plan, validate_request
from engine.assumptions.registry import Assumptions
from engine.physical.plant import size_plant
from engine.request.validation import RequestInvalid


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _by_name(plant):
    return {u.name: u for u in plant.electrical}


def test_a_100_mw_campus_gets_a_substation_and_block_redundant_plant():
    # 100 MW IT, 120 MW facility: 120,000 / 0.95 = 126.316 MVA.
    plant = size_plant(100_000, 120_000, 85_000, 15_000, 35.0, Assumptions())
    assert plant.facility_mva == pytest.approx(126.3158, rel=1e-4)
    units = _by_name(plant)
    assert plant.substation  # 126 MVA > 10 MVA of medium-voltage service
    # Feeds: ceil(126.3 / 100) = 2 + 1 redundant.
    assert (units["utility_feeds"].working, units["utility_feeds"].total) == (2, 3)
    # HV/MV: ceil(126.3 / 80) = 2 working + ceil(2 / 4) = 1.
    assert (units["substation_transformers"].working, units["substation_transformers"].redundant) == (2, 1)
    # MV/LV: ceil(126.3 / 3) = 43 working + ceil(43 / 4) = 11 redundant = 54.
    assert units["mv_lv_transformers"].total == 54
    # UPS: 100,000 / 1,250 = 80 + 20; generators: 120,000 / 3,000 = 40 + 10.
    assert (units["ups_modules"].working, units["ups_modules"].total) == (80, 100)
    assert (units["generators"].working, units["generators"].total) == (40, 50)


def test_a_small_site_takes_medium_voltage_service():
    # 2,000 kW facility / 0.95 = 2.105 MVA: one 10 MVA feeder + 1 redundant, no substation; 1 MV/LV + 1.
    plant = size_plant(1_500, 2_000, 0, 1_500, 20.0, Assumptions())
    units = _by_name(plant)
    assert not plant.substation and "substation_transformers" not in units
    assert (units["utility_feeds"].unit_rating, units["utility_feeds"].total) == (10.0, 2)
    assert units["mv_lv_transformers"].total == 2


def test_no_ups_or_generators_when_their_coverage_is_zero():
    a = Assumptions(overrides={"ups_it_fraction": 0.0, "generator_facility_fraction": 0.0})
    names = set(_by_name(size_plant(10_000, 12_000, 9_000, 1_000, 20.0, a)))
    assert names == {"utility_feeds", "substation_transformers", "mv_lv_transformers"}


@pytest.mark.parametrize(
    ("ambient_c", "liquid", "air"),
    [
        # Liquid loop 32 C: dry coolers while ambient + 6 K <= 32, i.e. up to 26 C; air loop 18 C: up to 12 C.
        (10.0, "dry_coolers", "dry_coolers"),
        (12.0, "dry_coolers", "dry_coolers"),
        (12.5, "dry_coolers", "chillers"),
        (26.0, "dry_coolers", "chillers"),
        (26.5, "chillers", "chillers"),
    ],
)
def test_heat_rejection_by_climate(ambient_c, liquid, air):
    plant = size_plant(1_000, 1_200, 850, 150, ambient_c, Assumptions())
    loops = {h.loop: h.equipment for h in plant.heat_rejection}
    assert loops == {"liquid": liquid, "air": air}


def test_heat_rejection_units():
    # 85,000 kW liquid heat in a cool climate: 85 dry coolers of 1,000 kW + ceil(85 / 4) = 22 -> 107.
    # 15,000 kW air-side heat on chillers of 1,500 kW: 10 + 3 = 13.
    plant = size_plant(100_000, 120_000, 85_000, 15_000, 15.0, Assumptions())
    got = {h.loop: (h.equipment, h.units.working, h.units.total) for h in plant.heat_rejection}
    assert got == {"liquid": ("dry_coolers", 85, 107), "air": ("chillers", 10, 13)}


def test_plan_has_a_plant_from_its_facility_power(catalog):
    req = validate_request(
        {
            "workload": "training",
            "model": {"preset": "llama-3-70b"},
            "training": {"tokens": 1e12, "gpus": 1024},
            "hardware": {"system": "dgx-h100"},
            "site": {"ambient_c": 20},
        },
        catalog,
    )
    plan = run_plan(req, catalog)
    assert plan.plant is not None
    assert plan.plant.facility_kw == pytest.approx(plan.power.facility_kw, rel=1e-6)
    assert plan.plant.ambient_c == 20 and plan.plant.ambient_from_site
    # Air-cooled DGX H100: all heat on the 18 C chilled-water loop; 20 + 6 > 18 -> chillers.
    assert [(h.loop, h.equipment) for h in plant_loops(plan)] == [("air", "chillers")]
    assert "plant.electrical" in plan.explain and "plant.heat_rejection" in plan.explain


def plant_loops(plan):
    return plan.plant.heat_rejection


@pytest.mark.parametrize(
    ("site", "path", "words"),
    [
        ({"ambient_c": 75}, "site.ambient_c", "60"),
        ({"ambient_c": "hot"}, "site.ambient_c", "number"),
        ({"ownership": "leased"}, "site.ownership", "colocation"),
    ],
)
def test_bad_site_inputs_name_the_field(catalog, site, path, words):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-8b"},
        "training": {"tokens": 1e11, "gpus": 8},
        "site": site,
    }
    with pytest.raises(RequestInvalid) as err:
        validate_request(body, catalog)
    assert path in err.value.errors
    assert words in " ".join(err.value.errors[path])
