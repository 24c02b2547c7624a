"""`explain` entries: for each headline figure, the formula, the inputs it was computed from, and the source.

Kept apart from the stages so the wording a user reads can be reviewed in one place: this module holds the
cluster's and the facility's entries and exports the training (`engine/explain/training.py`) and serving
(`engine/explain/serving.py`) ones, so the chain imports every sizing explainer from here.
"""

from __future__ import annotations

from engine.catalog.hardware import System
from engine.explain.entry import Entry
from engine.explain.entry import entry as _entry
from engine.explain.serving import inference_explain
from engine.explain.spares import hot_spares_explain
from engine.explain.training import training_explain
from engine.physical.cluster import ClusterBuild
from engine.physical.cooling import KW_PER_TON
from engine.physical.facility import FacilityResult

__all__ = ["build_explain", "facility_explain", "inference_explain", "training_explain"]

# A cooling method id in words, for the PUE it set ("the assumed PUE of contained-air cooling").
_COOLING_WORDS = {"air": "room-air", "air_containment": "contained-air", "rdhx": "rear-door", "liquid": "liquid"}


def build_explain(build: ClusterBuild, system: System) -> dict[str, Entry]:
    inputs: dict[str, object] = {"job_gpus": build.job_gpus, "gpus_per_system": system.gpus_per_system}
    formula = "ceil(job_gpus / gpus_per_system)"
    if build.spares is not None:  # elastic recovery: the hot spares are systems of the build (cluster.hot_spares)
        formula, inputs["hot_spares"] = f"{formula} + hot spares", build.spares.systems
    systems = _entry(formula, inputs, system.source)
    return {
        "cluster.systems": systems,
        **hot_spares_explain(build.spares),
        "cluster.racks": _entry(
            "ceil(systems / systems_per_rack); systems_per_rack = min(catalog default, floor(rack budget / "
            "system max kW))",
            {
                "systems": build.systems,
                "systems_per_rack": build.systems_per_rack,
                "catalog_systems_per_rack": system.systems_per_rack,
                "rack_budget_kw": build.rack_budget_kw,
                "system_max_power_kw": system.max_power_kw,
            },
            "NVIDIA 'DGX SuperPOD Data Center Design featuring DGX H100 Systems' and the SuperPOD Reference "
            "Architectures (systems per rack and rack power); " + system.source,
        ),
        "cluster.scalable_units": _entry(
            "ceil(systems / su_systems)",
            {"systems": build.systems, "su_systems": build.su_systems},
            "NVIDIA DGX SuperPOD Reference Architectures (DGX H100 RA-11333-001: 32 systems per scalable unit; "
            "GB200 RA-11338-001: 8 racks); the systems displaced by UFM appliances are counted by the fabric",
        ),
    }


def facility_explain(fac: FacilityResult, build: ClusterBuild, system: System) -> dict[str, Entry]:
    """`fac` is the plan's one facility result: the rack layout's when there is one, else the systems-only one."""
    power = fac.power
    if power.laid_out:
        it_kw = _entry(
            "systems + switches (maximum, with optics where the datasheet says so) + transceivers no device's "
            "figure covers (GPU-system, storage and server ends; switches without an optics figure) + storage + "
            "management servers/UFM, all at maximum draw",
            {
                "systems_kw": power.systems_kw,
                "network_kw": power.network_kw,
                "optics_kw": power.optics_kw,
                "storage_kw": power.storage_kw,
                "management_kw": power.management_kw,
            },
            "Maximum power of each part from its NVIDIA user guide or datasheet (switches with every port "
            "populated with optics); transceiver watts from the NVIDIA LinkX cables and transceivers data sheets; "
            "NVIDIA 'DGX SuperPOD Data Center Design featuring DGX H100 Systems'",
        )
    else:
        it_kw = _entry(
            "systems x system max power (GPU systems only; network, storage and management not yet included)",
            {"systems": build.systems, "system_max_power_kw": system.max_power_kw},
            system.source,
        )
    cooling_words = _COOLING_WORDS.get(fac.cooling_method, fac.cooling_method)
    return {
        "power.it_kw": it_kw,
        "power.facility_kw": _entry(
            "it_kw x PUE",
            {
                "it_kw": fac.it_kw,
                "pue": fac.pue,
                "pue_from": "the site's own PUE"
                if fac.pue_from_site
                else f"the assumed PUE of {cooling_words} cooling",
            },
            "Power usage effectiveness as defined by The Green Grid (White Paper 49, 2012); defaults from Uptime "
            "Institute Global Data Center Surveys 2023-2024 (average about 1.56-1.58) and liquid-cooled AI halls "
            "(1.15-1.25)",
        ),
        "power.per_rack_kw": _entry(
            "min(systems, systems_per_rack) x system max power (the fullest rack)",
            {"systems_per_rack": build.systems_per_rack, "system_max_power_kw": system.max_power_kw},
            "NVIDIA 'DGX SuperPOD Data Center Design featuring DGX H100 Systems' (4 systems per 40.8 kW rack) "
            "and the system's user guide",
        ),
        "cooling.method": _entry(
            "liquid for liquid-cooled systems; else by per-rack kW: <= cooling_air_max_kw air, <= "
            "cooling_containment_max_kw air_containment, <= cooling_rdhx_max_kw rdhx, above liquid",
            {"per_rack_kw": fac.per_rack_kw, "system_cooling": system.cooling},
            "Common guidance that racks above about 30-40 kW need containment, rear-door or liquid cooling "
            "(Uptime Institute surveys 2024-2025; HPE and Motivair rear-door capacity bands); NVIDIA requires "
            "direct liquid cooling for GB200 and GB300 NVL72",
        ),
        "cooling.liquid_kw": _entry(
            (
                "kW of the liquid-cooled racks x (1 - liquid_residual_air_fraction); air-cooled racks (network, "
                "management, rear doors) add 0"
                if power.laid_out
                else "liquid: it_kw x (1 - liquid_residual_air_fraction); otherwise 0 (rear doors are counted as air)"
            ),
            {"it_kw": fac.it_kw, "method": fac.cooling_method},
            "Direct-to-chip liquid cooling leaves 10-20 % of the rack's heat to air (vendor guidance for liquid-"
            "cooled racks); the system's user guide for its cooling",
        ),
        "cooling.tons": _entry(
            "it_kw / 3.517",
            {"it_kw": fac.it_kw, "kw_per_ton": KW_PER_TON},
            "1 ton of refrigeration = 12,000 BTU/h = 3.517 kW (ASHRAE Terminology)",
        ),
    }
