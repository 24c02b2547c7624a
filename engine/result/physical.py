"""Plan result parts for the build and physical stages: cluster, power, cooling, fabrics, storage, racks, BOM,
topology. Field names are the plan's JSON keys (design.md "The request and the plan")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from engine.result.codec import meta

__all__ = [
    "BomLine",
    "CampusHall",
    "CampusSummary",
    "ClusterSummary",
    "CoolingSummary",
    "FabricNetwork",
    "FabricSummary",
    "HotSparesSummary",
    "LinkGroup",
    "PowerSummary",
    "RackEntry",
    "RackItem",
    "RacksSummary",
    "StorageSummary",
    "Topology",
    "TopologyLink",
    "TopologyNode",
]

OMIT = meta(omit_none=True)


@dataclass(frozen=True)
class HotSparesSummary:
    """The spare systems an elastic-recovery build carries (engine/physical/spares.py): `systems` of the cluster's
    systems are spares, sized as the Poisson `percentile` of the mean systems down at once."""

    systems: int
    gpus: int
    job_systems: int
    node_mtbf_hours: float
    repair_hours: float
    mean_systems_down: float
    percentile: float


@dataclass(frozen=True)
class ClusterSummary:
    """Installed GPUs may exceed the job's; `scalable_units` and `racks` are the physical layout's when it ran."""

    system: str
    systems: int
    gpus: int
    job_gpus: int
    scalable_units: int
    racks: int
    systems_per_rack: int
    su_systems: int
    racks_total: int | None = field(default=None, metadata=OMIT)
    hot_spares: HotSparesSummary | None = field(default=None, metadata=OMIT)  # elastic recovery only


@dataclass(frozen=True)
class PowerSummary:
    """One facility power: it_kw = systems_kw + network_kw + optics_kw + storage_kw + management_kw,
    facility_kw = it_kw x pue.

    Without a physical layout only the GPU systems are counted (the other parts are absent, and the plan's notes
    say so). The feed figures exist only with the rack layout.
    """

    it_kw: float
    facility_kw: float
    per_rack_kw: float
    pue: float
    systems_kw: float
    network_kw: float | None = field(default=None, metadata=OMIT)
    storage_kw: float | None = field(default=None, metadata=OMIT)
    management_kw: float | None = field(default=None, metadata=OMIT)
    usable_feed_kw: float | None = field(default=None, metadata=OMIT)
    feeds: int | None = field(default=None, metadata=OMIT)
    rack_pdus: int | None = field(default=None, metadata=OMIT)
    worst_feed_after_failure_kw: float | None = field(default=None, metadata=OMIT)
    power_not_published: tuple[str, ...] | None = field(default=None, metadata=OMIT)
    optics_kw: float | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class CoolingSummary:
    method: str
    liquid_kw: float
    air_kw: float
    tons: float
    cdus: int | None = field(default=None, metadata=OMIT)
    cdu_part: str | None = field(default=None, metadata=meta(present_if="laid_out"))
    airflow_cfm: float | None = field(default=None, metadata=OMIT)
    coolant_lpm: float | None = field(default=None, metadata=OMIT)
    racks_by_method: Mapping[str, int] | None = field(default=None, metadata=OMIT)
    laid_out: bool = field(default=False, metadata=meta(json=False))


@dataclass(frozen=True)
class LinkGroup:
    tier: str
    from_: str = field(metadata=meta(json_name="from"))
    to: str
    links: int
    link_gbps: float
    distance_class: str
    length_m: float
    medium: str
    cable_part: str | None
    cable_length_m: int | None
    cables: int
    from_module: str | None
    from_modules: int
    to_module: str | None
    to_modules: int
    optics_w: float


@dataclass(frozen=True)
class FabricNetwork:
    technology: str
    switch: str | None
    link_gbps: float
    radix: int
    planes: int
    tiers: int
    leaf: int
    spine: int
    core: int
    node_links: int
    leaf_spine_links: int
    spine_core_links: int
    cables: int
    transceivers: int
    optics_w: float
    link_groups: tuple[LinkGroup, ...]
    notes: tuple[str, ...]
    # Why this many tiers (or no switch), in one line for users; "" in plans stored before it.
    reason: str = ""
    # Fourth tier (switches and the links from the cores up to it); 0 in plans stored before it.
    super_core: int = 0
    core_super_links: int = 0
    # Which design connects it ("fat-tree", "multi-plane", "four-tier", "oversubscribed"); "" in older plans.
    design: str = ""


@dataclass(frozen=True)
class FabricSummary:
    compute: FabricNetwork
    storage: FabricNetwork
    inband: FabricNetwork
    oob: FabricNetwork
    scalable_units: int
    ufm_appliances: int
    management_servers: int
    systems_displaced_by_ufm: int
    compute_fabric_needed: bool
    # Systems per scalable unit of the compute fabric (from the switch radix); 0 in plans stored before it.
    su_systems: int = 0
    # Why this many management servers, in one line for users; "" in plans stored before it.
    management_reason: str = ""


@dataclass(frozen=True)
class StorageSummary:
    capacity_tb: float
    read_gbps: float
    write_gbps: float
    checkpoint_tb: float
    dataset_tb: float
    tier: str
    read_gbps_per_su: float
    checkpoint_write_gbps: float
    appliance: str | None
    appliances: int
    binding: str
    # Why this storage (NFS server or parallel file system, and how many), in one line; "" in older plans.
    reason: str = ""
    # What set each need (engine/physical/storage_need.py); absent in plans stored before it.
    read_guidance_gbps: float | None = field(default=None, metadata=OMIT)
    loader_read_gbps: float | None = field(default=None, metadata=OMIT)
    read_set_by: str | None = field(default=None, metadata=OMIT)
    write_guidance_gbps: float | None = field(default=None, metadata=OMIT)
    write_set_by: str | None = field(default=None, metadata=OMIT)
    checkpointing: str | None = field(default=None, metadata=OMIT)
    checkpoint_write_budget_s: float | None = field(default=None, metadata=OMIT)
    checkpoints_retained: int | None = field(default=None, metadata=OMIT)
    dataset_raw_tb: float | None = field(default=None, metadata=OMIT)
    dataset_tokenised_tb: float | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class RackItem:
    """One kind of device in a rack. Height, kind and name are copied from the catalog when the plan is built,
    so an elevation drawn later shows what was planned even after the catalog changes."""

    id: str
    quantity: int
    rack_units: int | None = field(default=None, metadata=OMIT)
    kind: str | None = field(default=None, metadata=OMIT)
    label: str | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class RackEntry:
    id: str
    row: int
    role: str
    items: tuple[RackItem, ...]
    kw: float
    rack_units: int
    weight_kg: float
    feeds: int
    cooling: str


@dataclass(frozen=True)
class CampusHall:
    """One data hall of the campus: its building, racks, rows and IT power (MW, every rack at maximum draw)."""

    hall: int
    building: int
    racks: int
    rows: int
    it_mw: float


@dataclass(frozen=True)
class CampusSummary:
    """Racks packed into data halls under a hall's IT power and floor limits, halls into buildings, and the
    farthest run at each scale (engine/physical/campus.py)."""

    halls: int
    buildings: int
    halls_per_building: int
    hall_max_it_mw: float
    hall_max_racks: int
    largest_hall_it_mw: float
    largest_hall_racks: int
    distances_m: Mapping[str, float]
    per_hall: tuple[CampusHall, ...]


@dataclass(frozen=True)
class RacksSummary:
    total: int
    by_role: Mapping[str, int]
    layout: tuple[RackEntry, ...]
    rack_height_u: int | None = field(default=None, metadata=OMIT)
    # Halls and buildings (absent in plans stored before it).
    campus: CampusSummary | None = field(default=None, metadata=OMIT)


PRICE_FIELDS = ("unit_price_usd", "extended_price_usd", "price_source", "price_as_of", "price_confidence")


@dataclass(frozen=True)
class BomLine:
    """One line per part number. The price fields are filled by costing: present (possibly null, when no price
    is sourced) once the plan is priced, absent before. Money is `Decimal`, rounded once by costing's one
    extended-price rule (`engine.costing.onprem.extended_price`), and stored as its 2-decimal string."""

    part_number: str | None
    manufacturer: str | None
    description: str | None
    category: str
    quantity: int
    source: str | None = field(default=None, metadata=OMIT)
    catalog_id: str | None = field(default=None, metadata=OMIT)
    unit_price_usd: Decimal | None = field(default=None, metadata=meta(present_if="priced"))
    extended_price_usd: Decimal | None = field(default=None, metadata=meta(present_if="priced"))
    price_source: str | None = field(default=None, metadata=meta(present_if="priced"))
    price_as_of: str | None = field(default=None, metadata=meta(present_if="priced"))
    price_confidence: str | None = field(default=None, metadata=meta(present_if="priced"))
    price_basis: str | None = field(default=None, metadata=OMIT)
    priced: bool = field(default=False, metadata=meta(json=False))


@dataclass(frozen=True)
class TopologyNode:
    id: str
    kind: str
    count: int
    part: str | None = field(default=None, metadata=OMIT)
    fabric: str | None = field(default=None, metadata=OMIT)
    tier: str | None = field(default=None, metadata=OMIT)
    planes: int | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class TopologyLink:
    fabric: str
    from_: str = field(metadata=meta(json_name="from"))
    to: str
    tier: str
    links: int
    link_gbps: float
    medium: str
    cables: int


@dataclass(frozen=True)
class Topology:
    nodes: tuple[TopologyNode, ...]
    links: tuple[TopologyLink, ...]
