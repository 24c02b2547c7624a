"""`explain` entries for the site plant (engine/physical/plant.py): the electrical chain and the heat rejection."""

from __future__ import annotations

from engine.assumptions.registry import Assumptions
from engine.physical.plant import PlantResult

__all__ = ["plant_explain"]

Entry = dict[str, object]

ELECTRICAL_SRC = (
    "Unit ratings and coverage are named assumptions with vendor and standards sources: IEEE Std 141-1993 "
    "(service voltages), Schneider Electric White Papers 75 and 129 (UPS and distribution topologies), Uptime "
    "Institute Tier Standard: Topology (2018); NVIDIA DGX SuperPOD Reference Architecture, DGX GB200 "
    "(RA-11338-001) asks for a Tier III / TIA-942-B Rated 3 site"
)
HEAT_SRC = (
    "ASHRAE TC 9.9, 'Thermal Guidelines for Data Processing Environments' (5th ed., 2021) and 'Liquid Cooling "
    "Guidelines for Datacom Equipment Centers' (facility water classes W17-W45); ASHRAE Handbook - Fundamentals "
    "(2021) climatic design data; chiller and dry-cooler ratings from vendor product data (2024)"
)


def _units_text(plant: PlantResult) -> dict[str, object]:
    return {
        u.name.replace("_", " "): f"{u.working} working + {u.redundant} redundant of {u.unit_rating:g} {u.unit} "
        f"for {u.load:,.1f} {u.unit}"
        for u in plant.electrical
    }


def plant_explain(plant: PlantResult, a: Assumptions) -> dict[str, Entry]:
    """One entry for the electrical chain, one for the heat rejection."""
    heat_inputs: dict[str, object] = {
        "design ambient (C)": plant.ambient_c,
        "ambient given by the site": "yes" if plant.ambient_from_site else "no (the assumed design ambient)",
        "dry_cooler_approach_k": a["dry_cooler_approach_k"],
    }
    for h in plant.heat_rejection:
        heat_inputs[f"{h.loop}-side heat"] = (
            f"{h.heat_kw:,.0f} kW at {h.supply_c:g} C supply: {h.units.total} {h.equipment.replace('_', ' ')} "
            f"({h.units.working} working + {h.units.redundant} redundant of {h.units.unit_rating:g} kW)"
        )
    return {
        "plant.electrical": {
            "formula": (
                "facility MVA = facility kW / power factor; utility feeds = ceil(MVA / feed MVA) + "
                "utility_feeds_redundant, medium-voltage feeders of mv_service_max_mva up to that load, above it "
                "high-voltage circuits of utility_feed_mva into a substation of the site's own (HV/MV "
                "transformers = ceil(MVA / substation_transformer_mva)); MV/LV transformers = ceil(MVA / "
                "mv_lv_transformer_mva); UPS modules = ceil(IT kW x ups_it_fraction / ups_module_kw); generators = "
                "ceil(facility kW x generator_facility_fraction / generator_unit_kw); each class + one redundant "
                "unit per electrical_redundancy_block_units working units"
            ),
            "inputs": {
                "facility kW": round(plant.facility_kw, 1),
                "IT kW": round(plant.it_kw, 1),
                "facility MVA": round(plant.facility_mva, 2),
                "power factor": a["feed_power_factor"],
                **_units_text(plant),
            },
            "source": ELECTRICAL_SRC,
        },
        "plant.heat_rejection": {
            "formula": (
                "per cooling loop: dry coolers when design ambient + dry_cooler_approach_k <= the loop's supply "
                "temperature (direct-liquid heat on the facility-water loop, liquid_facility_supply_c; air-side "
                "heat on the chilled-water loop, air_chilled_water_supply_c), otherwise chillers; units = "
                "ceil(loop heat / unit kW) + one redundant per electrical_redundancy_block_units"
            ),
            "inputs": heat_inputs,
            "source": HEAT_SRC,
        },
    }
