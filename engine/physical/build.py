"""The physical build after sizing: storage -> fabrics -> racks, power, cooling -> BOM -> topology.

One entry point so the chain builds the whole physical side with a single call, and so the benchmark can time
exactly this part for a given system count. It returns its parts; the chain puts them into the plan result and
the explain stage (engine/explain/physical.py) describes them, so this module imports no explain code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Catalog, System
from engine.physical.bom import BomLine, build_bom
from engine.physical.campus import Campus, pack_campus
from engine.physical.cluster import ClusterBuild
from engine.physical.fabric import FabricPlan, size_fabrics
from engine.physical.fabric.campus_links import campus_fabrics
from engine.physical.fabric.compute import compute_fabric
from engine.physical.facility import SiteResult, size_site
from engine.physical.plant import PlantResult, size_plant
from engine.physical.racks import RackLayout
from engine.physical.storage import StorageResult, size_storage
from engine.physical.storage_need import StorageWorkload
from engine.physical.topology import build_topology
from engine.request.spec import PlanRequest, SiteSpec
from engine.result import physical as parts
from engine.result.codec import decode
from engine.result.plant import PlantSummary

__all__ = [
    "PhysicalBuild",
    "PhysicalParts",
    "build_physical",
    "compute_fabric_needed",
    "fabric_problems",
    "physical_for_plan",
]


@dataclass(frozen=True)
class PhysicalParts:
    """The plan result's physical sections, typed (engine/result/physical.py)."""

    fabric: parts.FabricSummary
    storage: parts.StorageSummary
    power: parts.PowerSummary
    cooling: parts.CoolingSummary
    racks: parts.RacksSummary
    bom: tuple[parts.BomLine, ...]
    topology: parts.Topology
    plant: PlantSummary


@dataclass(frozen=True)
class PhysicalBuild:
    storage: StorageResult
    fabric: FabricPlan
    site: SiteResult
    bom: list[BomLine]
    topology: dict[str, object]
    plant: PlantResult
    campus: Campus | None = None

    @property
    def problems(self) -> list[str]:
        return self.fabric.problems

    @property
    def compute_racks(self) -> int:
        return sum(1 for r in self.site.racks if r.role == "compute")

    def parts(self) -> PhysicalParts:
        """The plan sections this stage owns (design.md contract) plus details, as typed result parts.

        Fabric, storage, racks, BOM and topology are read through the result codec from their modules' own
        `as_dict`, so the typed part and those modules cannot disagree on a key without a loud error.
        """
        return PhysicalParts(
            fabric=decode(parts.FabricSummary, self.fabric.as_dict(), "fabric"),
            storage=decode(parts.StorageSummary, self.storage.as_dict(), "storage"),
            power=self.site.power_summary(),
            cooling=self.site.cooling_summary(),
            racks=_racks_part(self._racks_dict()),
            bom=tuple(decode(parts.BomLine, line.as_dict(), "bom") for line in self.bom),
            topology=decode(parts.Topology, self.topology, "topology"),
            plant=decode(PlantSummary, self.plant.as_dict(), "plant"),
        )

    def _racks_dict(self) -> dict[str, object]:
        racks = self.site.racks_dict()
        return racks if self.campus is None else {**racks, "campus": self.campus.as_dict()}


def _racks_part(data: dict[str, object]) -> parts.RacksSummary:
    """The typed racks section: racks of the same content (all but id and row) are decoded once through the
    codec and copied with their own id and row, so a layout of tens of thousands of racks (a million GPUs)
    decodes in a few distinct ones."""
    layout = data["layout"]
    assert isinstance(layout, list)
    head = decode(parts.RacksSummary, {**data, "layout": []}, "racks")
    decoded: dict[tuple, parts.RackEntry] = {}
    entries = []
    for i, rack in enumerate(layout):
        key = (id(rack["items"]), rack["role"], rack["kw"], rack["rack_units"], rack["weight_kg"], rack["feeds"],
               rack["cooling"], len(rack))  # fmt: skip
        entry = decoded.get(key)
        if entry is None:
            entry = decoded[key] = decode(parts.RackEntry, rack, f"racks.layout[{i}]")
        entries.append(_placed(entry, rack["id"], rack["row"]))
    return replace(head, layout=tuple(entries))


def _placed(entry: parts.RackEntry, rack_id: object, row: object) -> parts.RackEntry:
    """A copy of a decoded rack with its own id and row. Built on the instance dict because
    `dataclasses.replace` re-runs __init__ (ten times slower, and this runs once per rack)."""
    clone = object.__new__(parts.RackEntry)
    clone.__dict__.update(entry.__dict__, id=rack_id, row=row)
    return clone


def compute_fabric_needed(job_gpus: int, gpus_per_replica: int | None, system: System) -> bool:
    """A scale-out fabric is needed only when one communicating group spans NVLink domains: a training job
    larger than one domain, or an inference replica larger than one (replicas themselves never talk)."""
    group = gpus_per_replica if gpus_per_replica is not None else job_gpus
    return group > system.nvlink_domain_gpus


def build_physical(
    system: System,
    build: ClusterBuild,
    catalog: Catalog,
    a: Assumptions,
    *,
    params: float,
    training_tokens: float | None,
    weight_bytes_per_param: float,
    gpus_per_replica: int | None,
    hardware_fabric: str = "auto",
    requested_cooling: str = "auto",
    request: PlanRequest | None = None,
    storage_work: StorageWorkload | None = None,
) -> PhysicalBuild | None:
    """None when the catalog has no physical data for the system (then the plan omits these sections)."""
    parts = catalog.parts
    if parts is None or system.id not in parts.systems:
        return None
    needed = compute_fabric_needed(build.job_gpus, gpus_per_replica, system)
    sus = math.ceil(build.systems / system.su_systems)
    storage, appliance = size_storage(
        sus,
        params,
        training_tokens,
        weight_bytes_per_param,
        parts,
        a,
        systems=build.systems,
        su_systems=system.su_systems,
        work=storage_work,
    )
    fabric = size_fabrics(
        system, build.systems, build.systems_per_rack, appliance, storage.appliances, hardware_fabric, needed, parts, a
    )
    site_spec = request.site if request is not None else SiteSpec()
    site = size_site(build, system, fabric, appliance, storage.appliances, requested_cooling, site_spec, parts, a)
    campus = pack_campus(site.racks, parts.of_kind("rack")[0].num("width_mm") / 1000.0, a)
    if campus.multi_hall:  # upper tiers cross halls and buildings: longer runs, other optics, other optics power
        fabric = campus_fabrics(fabric, campus, parts)
        layout = RackLayout(site.racks, site.usable_feed_kw, site.rack_height_u, site.unknown_power, site.devices)
        site = size_site(
            build, system, fabric, appliance, storage.appliances, requested_cooling, site_spec, parts, a, layout
        )
    bom = build_bom(
        system,
        build.systems,
        fabric,
        site,
        storage.appliances,
        parts,
        storage_part=appliance.id,
        spare_systems=build.spare_systems,
    )
    topology = build_topology(system, build.systems, fabric, storage.appliances)
    fac = site.facility
    plant = size_plant(fac.it_kw, fac.facility_kw, fac.liquid_kw, fac.air_kw, site_spec.ambient_c, a)
    return PhysicalBuild(storage, fabric, site, bom, topology, plant, campus)


def _gpus_per_replica(request: PlanRequest, sizing: object) -> int | None:
    """A serving replica's GPUs (replicas never talk to each other); None for training (the whole job talks)."""
    shape = getattr(sizing, "shape", None)
    return getattr(shape, "gpus", None) if request.inference is not None else None


def fabric_problems(
    request: PlanRequest, system: System, build: ClusterBuild, sizing: object, catalog: Catalog, a: Assumptions
) -> list[str]:
    """Why the candidate's compute fabric cannot be built (none when it can, or when the system has no physical
    data): the chain checks this for every candidate before choosing, so no plan is feasible without a network."""
    parts = catalog.parts
    if parts is None or system.id not in parts.systems:
        return []
    phys = parts.systems[system.id]
    fabric_id = phys.compute_fabric if request.hardware.fabric == "auto" else request.hardware.fabric
    needed = compute_fabric_needed(build.job_gpus, _gpus_per_replica(request, sizing), system)
    return compute_fabric(system, phys, build.systems, fabric_id, parts, a, needed).problems


def physical_for_plan(
    request: PlanRequest,
    system: System,
    build: ClusterBuild,
    sizing: object,
    params: float,
    catalog: Catalog,
    a: Assumptions,
) -> PhysicalBuild | None:
    """The physical build of the chosen system with the request's fabric, cooling and site (the chain calls this
    once); None when the catalog has no physical data for the system."""
    training_tokens = request.training.tokens if request.training is not None else None
    weight_bytes = float(getattr(sizing, "weight_bytes_per_param", 0.0) or 2.0)
    return build_physical(
        system,
        build,
        catalog,
        a,
        params=params,
        training_tokens=training_tokens,
        weight_bytes_per_param=weight_bytes,
        gpus_per_replica=_gpus_per_replica(request, sizing),
        hardware_fabric=request.hardware.fabric,
        requested_cooling=request.hardware.cooling,
        request=request,
        storage_work=_storage_work(request, sizing),
    )


def _storage_work(request: PlanRequest, sizing: object) -> StorageWorkload:
    """What storage is sized from: the training job's checkpointing, chosen interval, tokens/s and vocabulary."""
    if request.training is None:
        return StorageWorkload(vocab=request.model.vocab)
    goodput = getattr(sizing, "goodput", None)
    return StorageWorkload(
        training_tokens=request.training.tokens,
        # The mode the plan uses (training.checkpointing = auto resolves per plan, engine/performance/recovery.py).
        checkpointing=getattr(goodput, "checkpointing", "") or request.training.checkpointing,
        checkpoint_interval_s=getattr(goodput, "checkpoint_interval_s", None),
        tokens_per_s=float(getattr(sizing, "tokens_per_s", 0.0) or 0.0),
        vocab=request.model.vocab,
    )
