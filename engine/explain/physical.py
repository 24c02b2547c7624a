"""`explain` entries for the physical build's headline figures (fabric, storage, power, cooling, BOM).

The explain stage runs after the physical build and reads its parts; the physical modules import nothing from
here (the import goes one way, explain -> physical)."""

from __future__ import annotations

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import System
from engine.physical.build import PhysicalBuild
from engine.physical.cluster import ClusterBuild

__all__ = ["physical_explain"]

Entry = dict[str, object]
FABRIC_SRC = (
    "NVIDIA DGX SuperPOD Reference Architectures: DGX H100 (RA-11333-001), DGX B200 (RA-11334-001) and GB200 "
    "(RA-11338-001): rail-optimised scalable units, leaf uplinks spread evenly over the spines, SU-local spines "
    "and a core tier beyond them"
)


def _entry(formula: str, inputs: dict[str, object], source: str) -> Entry:
    return {"formula": formula, "inputs": inputs, "source": source}


def physical_explain(pb: PhysicalBuild, system: System, build: ClusterBuild, a: Assumptions) -> dict[str, Entry]:
    """Every headline figure of the physical build (fabric, storage, power, cooling, BOM). Long because it is one
    table, one entry per figure; splitting it would scatter a single table over several functions."""
    c = pb.fabric.compute
    st = pb.storage
    site = pb.site
    out: dict[str, Entry] = {
        "fabric.compute.leaf": _entry(
            "SUs x rails x leaves per rail per SU x planes; a non-blocking leaf has radix / 2 ports down at the link "
            "speed, so one leaf per rail takes an SU of (radix / 2) / NICs per rail systems (NVL72 spine-leaf "
            "groups: one leaf per rack per rail); SUs = ceil((systems + systems displaced by UFM) / su_systems); "
            "planes = NIC line rate / link speed; the full SU is built even when partly populated",
            {
                "systems": build.systems,
                "su_systems": pb.fabric.su_systems,
                "scalable_units": pb.fabric.scalable_units,
                "displaced_by_ufm": pb.fabric.displaced_systems,
                "radix": c.radix,
                "link_gbps": c.link_gbps,
                "planes": c.planes,
            },
            FABRIC_SRC,
        ),
        "fabric.compute.spine": _entry(
            "two tiers: fewest spines that divide each leaf's uplinks and offer a port for every uplink "
            "(spines x radix >= leaves x uplinks); otherwise three tiers with pod-local spines (half ports down, "
            "half up) and core groups, cores per group the fewest that divide each spine's uplinks",
            {"tiers": c.tiers, "leaf": c.leaf, "spine": c.spine, "core": c.core, "radix": c.radix},
            FABRIC_SRC + "; Al-Fares, Loukissas and Vahdat, 'A Scalable, Commodity Data Center Network Architecture' "
            "(SIGCOMM 2008) for fat-tree capacity",
        ),
        "fabric.compute.cables": _entry(
            "per link group: links x link speed / native port speed; media by run length (DAC <= 2 m, ACC <= 5 m, "
            "multimode <= 50 m, single-mode <= 500 m); transceivers per device = ceil(links x speed / module capacity)",
            {
                "row_pitch_m": a["row_pitch_m"],
                "cable_slack_m": a["cable_slack_m"],
                "cables": c.cables,
                "transceivers": c.transceivers,
            },
            "NVIDIA LinkX cables and transceivers product pages (reach of DAC, ACC, multimode and single-mode links); "
            "link counts per the DGX SuperPOD Reference Architectures",
        ),
        "storage.read_gbps": _entry(
            "storage_read_gbps_per_su x SUs of the reference architecture's size (ceil(systems / su_systems); "
            "the guidance is per published SU, whatever SU the compute fabric's switch gives)",
            {
                "read_gbps_per_su": st.read_gbps_per_su,
                "tier": st.tier,
                "reference_sus": round(st.read_gbps / st.read_gbps_per_su),
                "su_systems": system.su_systems,
            },
            "NVIDIA DGX SuperPOD Reference Architecture, DGX H100 (RA-11333-001) Table 6 storage performance guidance; "
            "GB200 SuperPOD RA (RA-11338-001) Table 5.2",
        ),
        "storage.write_gbps": _entry(
            "max(read x storage_write_to_read_ratio, checkpoint_tb / checkpoint_stall_s)",
            {"read_gbps": st.read_gbps, "checkpoint_write_gbps": st.checkpoint_write_gbps},
            "NVIDIA DGX SuperPOD Reference Architecture with GB200 (RA-11338-001): write bandwidth about half of read; "
            "checkpoint write = checkpoint size / the stall the plan allows",
        ),
        "storage.capacity_tb": _entry(
            "(dataset_tb + checkpoints_retained x checkpoint_tb) x (1 + storage_headroom_fraction); appliances = "
            "max over read, write and capacity of ceil(need / per-appliance figure)",
            {
                "dataset_tb": st.dataset_tb,
                "checkpoint_tb": st.checkpoint_tb,
                "appliances": st.appliances,
                "binding": st.binding,
            },
            "NVIDIA DGX SuperPOD Reference Architecture, DGX H100 (RA-11333-001) storage guidance; capacity sized "
            "from the dataset and the retained checkpoints",
        ),
        "power.feeds": _entry(
            "usable feed kW = sqrt(3) x V x A x derate x PF; feeds per rack = ceil(rack kW / usable) + 1 (N+1) or "
            "2 x ceil(rack kW / usable) (N+N)",
            {
                "usable_feed_kw": site.usable_feed_kw,
                "feeds": site.feeds,
                "worst_feed_after_failure_kw": site.worst_feed_after_failure_kw,
            },
            "Three-phase power: sqrt(3) x line voltage x current x 0.8 continuous-load derate (NFPA 70, National "
            "Electrical Code, 2023) x 0.95 power factor; reproduces the 32.8 kW per 415 V / 60 A feed of NVIDIA's "
            "'DGX SuperPOD Data Center Design featuring DGX H100 Systems'",
        ),
        "cooling.cdus": _entry(
            "smallest CDU class carrying liquid_kw with <= cdu_max_units working units, + cdu_redundant_units",
            {"liquid_kw": site.facility.liquid_kw, "cdu_part": site.cdu_part, "cdus": site.cdus},
            "Vendor CDU capacity classes: Vertiv CoolChip CDU product pages (in-rack about 50-300 kW, in-row up "
            "to 2.5 MW); Motivair MCDU product sheet",
        ),
        "cooling.airflow_cfm": _entry(
            "3.16 x air W / air_delta_t_f",
            {"air_kw": site.facility.air_kw, "delta_t_f": a["air_delta_t_f"]},
            "Sensible-heat equation for air at sea level: BTU/h = 1.08 x CFM x delta-T (F), with 3.412 BTU/h per "
            "W (ASHRAE Handbook, Fundamentals)",
        ),
        "cooling.coolant_lpm": _entry(
            "60 x liquid kW / (4.18 x liquid_delta_t_k)",
            {"liquid_kw": site.facility.liquid_kw, "delta_t_k": a["liquid_delta_t_k"]},
            "Heat carried by water: Q = flow x 4.18 kJ/(kg K) x delta-T, about 1 kg per litre (ASHRAE Handbook, "
            "Fundamentals)",
        ),
        "bom": _entry(
            "one line per part number; quantities are the fabric's switches, cables and transceivers and the "
            "facility's racks, PDUs (one per feed) and CDUs",
            {"lines": len(pb.bom)},
            "each part's own source and date, shown on its bill-of-materials line (vendor manuals, data sheets "
            "and price lists)",
        ),
    }
    return out
