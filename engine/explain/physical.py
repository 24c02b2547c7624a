"""`explain` entries for the physical build's headline figures (fabric, storage, power, cooling, BOM).

The explain stage runs after the physical build and reads its parts; the physical modules import nothing from
here (the import goes one way, explain -> physical)."""

from __future__ import annotations

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import System
from engine.explain.campus import campus_explain, design_explain
from engine.explain.plant import plant_explain
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


RAIL_ONLY_SRC = (
    "Wang et al., 'Rail-only: A Low-Cost High-Performance Network for Training LLMs with Trillion Parameters' "
    "(arXiv:2307.12169, 2023) for one-tier rail switches below a scalable unit; NVIDIA Quantum-2 QM9700 series "
    "data sheet (on-board subnet manager for up to 2,000 nodes)"
)


def _compute_formula(pb: PhysicalBuild) -> tuple[str, str]:
    """(leaf formula, spine formula) of the design the compute fabric used."""
    c = pb.fabric.compute
    if not c.leaf:
        return ("no compute switch: every communicating group fits one NVLink domain", "no spine tier")
    if c.tiers == 1:
        return (
            "below one scalable unit, one tier: switches = rails / rails per switch, rails per switch the largest "
            "share of the rails (a divisor of the rail count) whose ports (systems x NICs per rail each) fit one "
            "switch's radix; x planes",
            "no spine tier: every rail's ports meet on one switch",
        )
    if pb.fabric.compute_design == "below_su":
        return (
            "below one scalable unit, two tiers: leaves per rail = ceil(rail ports / (radix / 2)), each leaf's GPU "
            "ports = ceil(rail ports / leaves per rail), uplinks equal to them (non-blocking); x rails x planes",
            "fewest spines that divide each leaf's uplinks and offer a port for every uplink "
            "(spines x radix >= leaves x uplinks)",
        )
    return (
        "SUs x rails x leaves per rail per SU x planes; a non-blocking leaf has radix / 2 ports down at the link "
        "speed, so one leaf per rail takes an SU of (radix / 2) / NICs per rail systems (NVL72 spine-leaf "
        "groups: one leaf per rack per rail); SUs = ceil((systems + systems displaced by UFM) / su_systems); "
        "planes = NIC line rate / link speed; the full SU is built even when partly populated",
        "two tiers: fewest spines that divide each leaf's uplinks and offer a port for every uplink "
        "(spines x radix >= leaves x uplinks); otherwise three tiers with pod-local spines (half ports down, "
        "half up) and core groups, cores per group the fewest that divide each spine's uplinks; past three tiers, "
        "super-pods whose cores keep half their ports down, joined by a fourth tier of super-core groups",
    )


def _fabric_entries(pb: PhysicalBuild, system: System, build: ClusterBuild, a: Assumptions) -> dict[str, Entry]:
    c = pb.fabric.compute
    leaf_formula, spine_formula = _compute_formula(pb)
    leaf_inputs: dict[str, object] = {
        "systems": build.systems,
        "su_systems": pb.fabric.su_systems,
        "scalable_units": pb.fabric.scalable_units,
        "displaced_by_ufm": pb.fabric.displaced_systems,
        "radix": c.radix,
        "link_gbps": c.link_gbps,
        "planes": c.planes,
    }
    if not c.leaf:
        leaf_inputs = {"systems": build.systems, "GPUs per NVLink domain": system.nvlink_domain_gpus}
    return {
        "fabric.compute.leaf": _entry(leaf_formula, leaf_inputs, FABRIC_SRC + "; " + RAIL_ONLY_SRC),
        "fabric.compute.spine": _entry(
            spine_formula,
            {"tiers": c.tiers, "leaf": c.leaf, "spine": c.spine, "core": c.core, "radix": c.radix},
            FABRIC_SRC + "; Al-Fares, Loukissas and Vahdat, 'A Scalable, Commodity Data Center Network Architecture' "
            "(SIGCOMM 2008) for fat-tree capacity",
        ),
        "fabric.tiers": _entry(
            "no compute switch when every communicating group fits one NVLink domain; one tier while a switch (or "
            "an MLAG pair) takes the ports; two tiers only when one tier's ports run out; three only when two "
            "tiers' ports run out; four only when three tiers' ports run out (and, for the compute fabric, no "
            "further plane split connects it)",
            {
                "compute": c.reason,
                "storage": pb.fabric.storage.reason,
                "in-band": pb.fabric.inband.reason,
                "out-of-band": pb.fabric.oob.reason,
            },
            FABRIC_SRC + "; NVIDIA DGX BasePOD Reference Architecture (RA-11127-001 V5, 2025-08-06); " + RAIL_ONLY_SRC,
        ),
        "fabric.compute.cables": _entry(
            "per link group: links x link speed / native port speed; media by run length (DAC <= 2 m, ACC <= 5 m, "
            "multimode <= 50 m, single-mode 2 x DR4 <= 500 m, 2 x FR4 <= 2 km between halls and buildings); "
            "transceivers per device = ceil(links x speed / module capacity)",
            {
                "row_pitch_m": a["row_pitch_m"],
                "cable_slack_m": a["cable_slack_m"],
                "cables": c.cables,
                "transceivers": c.transceivers,
            },
            "NVIDIA LinkX cables and transceivers product pages (reach of DAC, ACC, multimode and single-mode links); "
            "link counts per the DGX SuperPOD Reference Architectures",
        ),
    }


def _su_inputs(read_gbps: float, per_su: float, system: System, build: ClusterBuild) -> dict[str, object]:
    """The SU figures behind the read bandwidth: whole reference SUs, or the systems' share of one."""
    if build.systems < system.su_systems:
        return {"systems": build.systems, "su_systems": system.su_systems}
    return {"reference_sus": round(read_gbps / per_su), "su_systems": system.su_systems}


def _storage_read_formula(pb: PhysicalBuild, system: System, build: ClusterBuild) -> str:
    if build.systems < system.su_systems:
        return (
            "below one scalable unit: max(single-node read guidance, storage_read_gbps_per_su x systems / "
            "su_systems), the SU's guidance shared by the systems present"
        )
    return (
        "storage_read_gbps_per_su x SUs of the reference architecture's size (ceil(systems / su_systems); "
        "the guidance is per published SU, whatever SU the compute fabric's switch gives)"
    )


def _guidance_gbps(pb: PhysicalBuild) -> float:
    need = pb.storage.need
    return need.read_guidance_gbps if need is not None else pb.storage.read_gbps


def _loader_inputs(pb: PhysicalBuild) -> dict[str, object]:
    """The data loader's read beside the guidance, and which of the two set the read (training only)."""
    need = pb.storage.need
    if need is None or need.checkpointing == "none":
        return {}
    return {
        "guidance_read_gbps": round(need.read_guidance_gbps, 3),
        "data_loader_read_gbps": round(need.loader_read_gbps, 3),
        "read set by": need.read_set_by,
    }


def _storage_need_entries(pb: PhysicalBuild) -> dict[str, Entry]:
    """Write and capacity: the checkpoint (its mode and time budget) and the data set, raw and tokenised."""
    st, need = pb.storage, pb.storage.need
    if need is None:
        return {}
    if need.checkpointing == "synchronous":
        budget = "checkpoint_stall_s (training waits for the write)"
    else:
        budget = (
            "checkpoint interval x checkpoint_async_write_fraction (the copy to host memory stalls training for "
            "seconds; the write to storage runs in the background and must finish before the next save)"
        )
    write_inputs: dict[str, object] = {
        "guidance_write_gbps": round(need.write_guidance_gbps, 3),
        "checkpoint_tb": round(need.checkpoint_tb, 3),
        "checkpointing": need.checkpointing,
        "write time allowed (s)": round(need.checkpoint_write_budget_s, 1),
        "checkpoint_write_gbps": round(need.checkpoint_write_gbps, 3),
        "write set by": need.write_set_by,
    }
    return {
        "storage.write_gbps": _entry(
            f"max(read guidance x storage_write_to_read_ratio, checkpoint_tb / write time allowed); write time "
            f"allowed = {budget}",
            write_inputs,
            "NVIDIA DGX SuperPOD Reference Architecture with GB200 (RA-11338-001): write bandwidth at least half of "
            "read; asynchronous checkpoints as in PyTorch Distributed Checkpoint async_save (PyTorch 2.3, 2024) and "
            "Megatron-Core dist_checkpointing; checkpoint interval by Daly, 'A higher order estimate of the optimum "
            "checkpoint interval for restart dumps' (FGCS 22, 2006)",
        ),
        "storage.capacity_tb": _entry(
            "(raw text + tokenised ids + checkpoints_retained x checkpoint_tb) x (1 + storage_headroom_fraction); "
            "raw = training tokens / dataset_epochs x dataset_bytes_per_token, tokenised = the same tokens x 2 or 4 "
            "bytes per id (by vocabulary size); appliances = max over read, write and capacity of ceil(need / "
            "per-appliance figure)",
            {
                "dataset_raw_tb": round(need.dataset_raw_tb, 3),
                "dataset_tokenised_tb": round(need.dataset_tokenised_tb, 3),
                "checkpoint_tb": round(need.checkpoint_tb, 3),
                "checkpoints_retained": need.checkpoints_retained,
                "appliances": st.appliances,
                "set by": st.binding,
            },
            "Checkpoint of mixed-precision Adam, 14 bytes per parameter (Rajbhandari et al., 'ZeRO', SC 2020); about "
            "4 characters of English text per token (OpenAI help center, 'What are tokens and how to count them?', "
            "2024); token ids 16- or 32-bit as in NVIDIA Megatron-LM's indexed datasets",
        ),
    }


def _part_name(pb: PhysicalBuild, part_id: str | None) -> str | None:
    """A part of the build by the name its BOM line gives it (the catalog's name), not its catalog id."""
    return next((line.description for line in pb.bom if line.catalog_id == part_id), part_id)


def physical_explain(pb: PhysicalBuild, system: System, build: ClusterBuild, a: Assumptions) -> dict[str, Entry]:
    """Every headline figure of the physical build, one table in the order the page shows it: fabric (its design,
    the campus, the site plant), storage, management, what storage is sized for, power and cooling, the BOM."""
    return {
        **_fabric_entries(pb, system, build, a),
        **design_explain(pb, a),
        **campus_explain(pb, a),
        **plant_explain(pb.plant, a),
        **_storage_entries(pb, system, build),
        **_management_entries(pb, system, build),
        **_storage_need_entries(pb),
        **_power_cooling_entries(pb, a),
        **_bom_entries(pb),
    }


def _storage_entries(pb: PhysicalBuild, system: System, build: ClusterBuild) -> dict[str, Entry]:
    """Storage read bandwidth against the reference guidance, and the appliances (or one NFS server) that give it."""
    st = pb.storage
    return {
        "storage.read_gbps": _entry(
            _storage_read_formula(pb, system, build),
            {
                "read_gbps_per_su": st.read_gbps_per_su,
                "tier": st.tier,
                **_su_inputs(_guidance_gbps(pb), st.read_gbps_per_su, system, build),
                **_loader_inputs(pb),
            },
            "NVIDIA DGX SuperPOD Reference Architecture, DGX H100 (RA-11333-001) Table 6 storage performance guidance "
            "(per scalable unit and single node); GB200 SuperPOD RA (RA-11338-001) Table 5.2",
        ),
        "storage.appliances": _entry(
            "one NFS server on the in-band network when the cluster is below one scalable unit and one server "
            "meets the read, write and capacity needed; otherwise parallel-file-system appliances = max over read, "
            "write and capacity of ceil(need / per-appliance figure)",
            {"choice": st.reason, "appliances": st.appliances, "binding": st.binding},
            "NVIDIA DGX BasePOD Reference Architecture (RA-11127-001 V5, 2025-08-06): storage on the Ethernet "
            "management and storage fabric below SuperPOD scale; NVIDIA DGX SuperPOD Reference Architecture, DGX H100 "
            "(RA-11333-001): a parallel file system on its own storage fabric",
        ),
    }


def _management_entries(pb: PhysicalBuild, system: System, build: ClusterBuild) -> dict[str, Entry]:
    """The head and service servers by cluster size."""
    return {
        "management_servers": _entry(
            "1 head node for one system; an HA pair of head nodes from two systems up to one scalable unit; the "
            "reference design's five servers (two head nodes plus three service servers) from one scalable unit",
            {
                "systems": build.systems,
                "su_systems": system.su_systems,
                "servers": pb.fabric.management_servers,
                "why": pb.fabric.management_reason,
            },
            "NVIDIA DGX BasePOD Reference Architecture (RA-11127-001 V5, 2025-08-06) and NVIDIA DGX SuperPOD "
            "Reference Architecture, DGX H100 (RA-11333-001) Table 7: five management servers, two of them Base "
            "Command Manager head nodes in a high-availability pair",
        ),
    }


def _power_cooling_entries(pb: PhysicalBuild, a: Assumptions) -> dict[str, Entry]:
    """Rack power feeds, CDUs, airflow and coolant flow, from the rack layout's site figures."""
    site = pb.site
    return {
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
            "smallest CDU class carrying liquid_kw in at most cdu_max_units, plus cdu_redundant_units",
            {"liquid_kw": site.facility.liquid_kw, "cdu_part": _part_name(pb, site.cdu_part), "cdus": site.cdus},
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
    }


def _bom_entries(pb: PhysicalBuild) -> dict[str, Entry]:
    """The bill of materials: one line per part number, each with its own source."""
    return {
        "bom": _entry(
            "one line per part number; quantities are the fabric's switches, cables and transceivers and the "
            "facility's racks, PDUs (one per feed) and CDUs",
            {"lines": len(pb.bom)},
            "each part's own source and date, shown on its bill-of-materials line (vendor manuals, data sheets "
            "and price lists)",
        ),
    }
