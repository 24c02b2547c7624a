"""Campus packing (issue 17): racks into halls under a hall's IT power and rack positions, halls into buildings,
and the run lengths that follow. Expected values are worked by hand from the limits given in each test."""

from __future__ import annotations

import pytest

from engine.assumptions.registry import Assumptions
from engine.physical.campus import pack_campus
from engine.physical.racks import Rack

LIMITS = {
    "hall_max_it_mw": 1.0,
    "hall_max_racks": 35,
    "halls_per_building": 2,
    "hall_pitch_m": 80.0,
    "building_pitch_m": 250.0,
    "row_pitch_m": 3.6,
    "cable_slack_m": 4.0,
}


def _racks(rows: int, per_row: int, kw: float, role: str = "compute", first_row: int = 1) -> list[Rack]:
    return [
        Rack(f"r{row:02d}-c{col:02d}", row, role, (("x", 1),), kw, 40, 500.0, 2, "air")
        for row in range(first_row, first_row + rows)
        for col in range(1, per_row + 1)
    ]


def test_rows_fill_halls_by_power_and_halls_fill_buildings():
    # 10 rows of 10 racks at 40 kW = 400 kW a row. A 1 MW hall takes two rows (800 kW; a third would make 1.2 MW)
    # though its 35 positions would take three -> 5 halls, 2 to a building -> 3 buildings.
    campus = pack_campus(tuple(_racks(10, 10, 40.0)), 0.8, Assumptions(overrides=LIMITS))
    assert (len(campus.halls), campus.buildings) == (5, 3)
    assert [h.racks for h in campus.halls] == [20] * 5
    assert [h.it_kw for h in campus.halls] == pytest.approx([800.0] * 5)
    assert [h.building for h in campus.halls] == [1, 1, 2, 2, 3]
    # Runs: a row of 10 racks of 0.8 m to its end: 10 x 0.8 + 4 = 12 m. A hall of 20 racks laid out about square:
    # ceil(sqrt(20 x 0.8 / 3.6)) = 3 rows of ceil(20 / 3) = 7 racks -> ceil(3 / 2) x 3.6 + 7 x 0.8 / 2 + 4 = 14.0 m
    # to its centre. Two halls 80 m apart: (2 - 1) / 2 x 80 + 14.0 = 54.0 m. Three buildings in a 2 x 2 grid
    # 250 m apart, Manhattan to the centre: (0.5 + 0.5) x 250 + 54.0 = 304.0 m.
    assert campus.row_m == pytest.approx(12.0)
    assert campus.hall_m == pytest.approx(14.0)
    assert campus.building_m == pytest.approx(54.0)
    assert campus.campus_m == pytest.approx(304.0)
    assert campus.span_m(1) == ("in_hall", pytest.approx(14.0))
    assert campus.span_m(2) == ("hall_to_hall", pytest.approx(54.0))
    assert campus.span_m(5) == ("building_to_building", pytest.approx(304.0))


def test_a_row_larger_than_a_hall_is_split_over_halls():
    # 2 compute rows of 10 racks at 10 kW (100 kW each) then a central row of 80 network racks at 10 kW: the
    # compute rows share hall 1 (20 racks); the central row does not fit hall 1's 15 free positions, so it opens a
    # hall and, larger than an empty hall (35), splits 35 + 35 + 10 over halls 2-4. Power never binds (at most
    # 350 kW a hall).
    racks = _racks(2, 10, 10.0) + _racks(1, 80, 10.0, role="network", first_row=3)
    campus = pack_campus(tuple(racks), 0.8, Assumptions(overrides=LIMITS))
    assert [h.racks for h in campus.halls] == [20, 35, 35, 10]
    # The network row stands as rows as long as the longest compute row (10 racks): 35 racks -> 4 rows.
    assert [h.rows for h in campus.halls] == [2, 4, 4, 1]


def test_one_hall_keeps_the_row_geometry():
    campus = pack_campus(tuple(_racks(2, 10, 40.0)), 0.8, Assumptions(overrides=LIMITS))
    assert not campus.multi_hall and campus.buildings == 1
    assert campus.span_m(10) == ("in_hall", pytest.approx(campus.hall_m))


def test_campus_block_in_the_plan(plan):
    """A 1,024-GPU plan fits one hall: the block reports it and no run length changes."""
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-70b"},
            "training": {"tokens": 1e12, "gpus": 1024},
            "hardware": {"system": "dgx-h100"},
        }
    )
    campus = p["racks"]["campus"]
    assert (campus["halls"], campus["buildings"]) == (1, 1)
    assert campus["per_hall"][0]["racks"] == p["racks"]["total"]
    assert {g["distance_class"] for g in p["fabric"]["compute"]["link_groups"]} <= {
        "end_of_row",
        "between_rows",
        "in_network_row",
    }
