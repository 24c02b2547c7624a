"""The physical build after sizing: storage -> fabrics -> racks, power, cooling -> BOM -> topology.

One entry point so plan.py wires the whole physical side in with a single call, and so the benchmark can time
exactly this part for a given system count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Catalog, System
from engine.explain.physical import physical_explain
from engine.physical.bom import BomLine, build_bom
from engine.physical.cluster import ClusterBuild
from engine.physical.fabric import FabricPlan, size_fabrics
from engine.physical.facility import SiteResult, size_site
from engine.physical.storage import StorageResult, size_storage
from engine.physical.topology import build_topology
from engine.request.spec import PlanRequest, SiteSpec

__all__ = ["PhysicalBuild", "build_physical", "compute_fabric_needed"]


@dataclass
class PhysicalBuild:
    storage: StorageResult
    fabric: FabricPlan
    site: SiteResult
    bom: list[BomLine]
    topology: dict[str, object]
    explain: dict[str, object] = field(default_factory=dict)

    @property
    def problems(self) -> list[str]:
        return self.fabric.problems

    def sections(self) -> dict[str, object]:
        """The plan keys this stage owns (design.md contract) plus details."""
        return {
            "fabric": self.fabric.as_dict(),
            "storage": self.storage.as_dict(),
            "power": self.site.power_dict(),
            "cooling": self.site.cooling_dict(),
            "racks": self.site.racks_dict(),
            "bom": [line.as_dict() for line in self.bom],
            "topology": self.topology,
        }


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
) -> PhysicalBuild | None:
    """None when the catalog has no physical data for the system (then the plan omits these sections)."""
    parts = catalog.parts
    if parts is None or system.id not in parts.systems:
        return None
    needed = compute_fabric_needed(build.job_gpus, gpus_per_replica, system)
    sus = math.ceil(build.systems / system.su_systems)
    storage, appliance = size_storage(sus, params, training_tokens, weight_bytes_per_param, parts, a)
    racks_per_su = math.ceil(system.su_systems / max(1, build.systems_per_rack))
    fabric = size_fabrics(
        system, build.systems, racks_per_su, appliance, storage.appliances, hardware_fabric, needed, parts, a
    )
    site_spec = request.site if request is not None else SiteSpec()
    site = size_site(build, system, fabric, appliance, storage.appliances, requested_cooling, site_spec, parts, a)
    bom = build_bom(system, build.systems, fabric, site, storage.appliances, parts)
    topology = build_topology(system, build.systems, fabric, storage.appliances)
    result = PhysicalBuild(storage, fabric, site, bom, topology)
    result.explain = physical_explain(result, system, build, a)
    return result


def attach_physical(
    plan: dict,
    explain: dict,
    system: System,
    build: ClusterBuild,
    sizing: object,
    request: PlanRequest,
    params: float,
    catalog: Catalog,
    a: Assumptions,
) -> None:
    """Add the physical sections to a plan in place (plan.py calls this once for the chosen system)."""
    training_tokens = request.training.tokens if request.training is not None else None
    shape = getattr(sizing, "shape", None)
    gpus_per_replica = getattr(shape, "gpus", None) if request.inference is not None else None
    weight_bytes = float(getattr(sizing, "weight_bytes_per_param", 0.0) or 2.0)
    pb = build_physical(
        system,
        build,
        catalog,
        a,
        params=params,
        training_tokens=training_tokens,
        weight_bytes_per_param=weight_bytes,
        gpus_per_replica=gpus_per_replica,
        hardware_fabric=request.hardware.fabric,
        requested_cooling=request.hardware.cooling,
        request=request,
    )
    if pb is None:
        return
    plan.update(pb.sections())
    cluster = plan.get("cluster")
    if isinstance(cluster, dict):
        cluster["scalable_units"] = pb.fabric.scalable_units
        cluster["racks"] = sum(1 for r in pb.site.racks if r.role == "compute")
        cluster["racks_total"] = len(pb.site.racks)
    plan["not_modelled"] = [s for s in plan.get("not_modelled", []) if s not in ("fabric", "storage", "bom")]
    plan["notes"] = [n for n in plan.get("notes", []) if not str(n).startswith("power.it_kw counts GPU systems")]
    plan["notes"].extend(pb.problems)
    explain.update(pb.explain)
