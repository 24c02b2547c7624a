"""One count of one system, built as a plan builds it, and measured against the envelope's keys.

Nothing here computes power, racks or dollars: the build is `engine.physical` (cluster -> storage -> fabrics ->
racks and the one facility power, IT x PUE) and the capex is `engine.costing.onprem.bom_capex_usd` (the plan's
own costing rules), so a limit is checked against exactly the figure the plan will report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Catalog, System
from engine.costing.inputs import CostInputs, request_terms
from engine.costing.onprem import bom_capex_usd
from engine.envelope.search import Probe
from engine.physical.build import PhysicalBuild, build_physical
from engine.physical.cluster import ClusterBuild, build_cluster
from engine.physical.fabric.compute import compute_fabric
from engine.physical.facility import FacilityResult, size_facility
from engine.request.spec import PlanRequest
from engine.result import physical as parts
from engine.result.codec import decode

__all__ = ["Built", "Prober", "StorageInputs"]

NO_PRICE = "capex: {system} has no sourced price, so the capex limit cannot be checked"


@dataclass(frozen=True)
class StorageInputs:
    """What storage sizing reads from the workload (a capacity plan has none: no model, no data set)."""

    params: float = 0.0
    training_tokens: float | None = None
    weight_bytes_per_param: float = 2.0


@dataclass(frozen=True)
class Built:
    """The build behind a probe: the cluster, its physical build (None without catalog parts data) and the facility
    result the limits were read from."""

    cluster: ClusterBuild
    physical: PhysicalBuild | None
    facility: FacilityResult
    capex_usd: Decimal | None


class Prober:
    """Builds `systems` x `system` with the request's hardware, site and storage inputs (callable: count -> Probe).

    `prices` are the costing inputs (from the pricing app, through the adapter); without them a capex limit is
    refused at every count with the reason, never passed over."""

    def __init__(
        self,
        request: PlanRequest,
        system: System,
        catalog: Catalog,
        a: Assumptions,
        storage: StorageInputs,
        prices: CostInputs | None,
    ) -> None:
        self.request, self.system, self.catalog, self.a = request, system, catalog, a
        self.storage, self.prices = storage, prices
        self.wants_capex = request.envelope is not None and request.envelope.capex_usd is not None

    def refusal(self, systems: int) -> str:
        """Why this count cannot be built at all (rack limits, or no catalog fabric connects it); "" when it can.
        Cheap (no rack layout), so the fabric's ceiling is found with it before any full build."""
        cluster, problems = build_cluster(
            self.system, systems * self.system.gpus_per_system, self.request.hardware, self.a, self.catalog.parts
        )
        return " ".join(problems) if cluster is None else self._fabric_refusal(cluster)

    def __call__(self, systems: int) -> Probe:
        system, hardware = self.system, self.request.hardware
        cluster, problems = build_cluster(
            system, systems * system.gpus_per_system, hardware, self.a, self.catalog.parts
        )
        if cluster is None:
            return Probe(systems, {}, refusal=" ".join(problems))
        refused = self._fabric_refusal(cluster)
        if refused:
            return Probe(systems, {}, refusal=refused)  # a count no fabric connects is not laid out at all
        physical = build_physical(
            system,
            cluster,
            self.catalog,
            self.a,
            params=self.storage.params,
            training_tokens=self.storage.training_tokens,
            weight_bytes_per_param=self.storage.weight_bytes_per_param,
            gpus_per_replica=None,
            hardware_fabric=hardware.fabric,
            requested_cooling=hardware.cooling,
            request=self.request,
        )
        if physical is not None and physical.problems:
            return Probe(systems, {}, refusal=" ".join(physical.problems))
        facility = (
            physical.site.facility
            if physical is not None
            else size_facility(cluster, system, hardware.cooling, self.request.site, self.a)
        )
        racks = len(physical.site.racks) if physical is not None else cluster.racks
        capex = self._capex(cluster, physical) if self.wants_capex else None
        if self.wants_capex and capex is None:
            return Probe(systems, {}, refusal=NO_PRICE.format(system=system.id))
        measured = {
            "facility_mw": facility.facility_kw / 1000.0,
            "it_mw": facility.it_kw / 1000.0,
            "racks": float(racks),
            "gpus": float(cluster.gpus),
            "capex_usd": None if capex is None else float(capex),
        }
        return Probe(systems, measured, build=Built(cluster, physical, facility, capex))

    def _fabric_refusal(self, cluster: ClusterBuild) -> str:
        """Why the compute fabric cannot connect this count (the same check the chain runs on every candidate)."""
        parts = self.catalog.parts
        if parts is None or self.system.id not in parts.systems:
            return ""
        phys = parts.systems[self.system.id]
        hardware = self.request.hardware
        fabric_id = phys.compute_fabric if hardware.fabric == "auto" else hardware.fabric
        return " ".join(compute_fabric(self.system, phys, cluster.systems, fabric_id, parts, self.a, True).problems)

    def _capex(self, cluster: ClusterBuild, physical: PhysicalBuild | None) -> Decimal | None:
        if self.prices is None or physical is None:
            return None
        bom = tuple(decode(parts.BomLine, line.as_dict(), "bom") for line in physical.bom)
        terms = request_terms(self.request)
        it_kw = physical.site.facility.it_kw
        return bom_capex_usd(bom, self.system.id, cluster.systems, cluster.gpus, self.prices, terms, it_kw)


def ceiling_systems(system: System, a: Assumptions, gpus_limit: float | None) -> int:
    """The most systems worth building: the planner's largest cluster (max_cluster_gpus), and one system past an
    envelope GPU limit (so the search sees the GPU limit break rather than stop at the ceiling)."""
    ceiling = max(1, int(a["max_cluster_gpus"]) // system.gpus_per_system)
    if gpus_limit is not None:
        ceiling = min(ceiling, math.floor(gpus_limit / system.gpus_per_system) + 1)
    return ceiling
