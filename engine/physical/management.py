"""How many management servers (head nodes) a cluster gets, and why, in one line for users.

The rule, from NVIDIA's published designs:

- From one scalable unit: the reference design's five dual-socket x86 servers, two of them Base Command Manager
  head nodes in a high-availability pair and three for services (Slurm login nodes, or a Kubernetes control plane)
  (NVIDIA DGX SuperPOD Reference Architecture, DGX H100, RA-11333-001, Table 7; the same five in NVIDIA DGX
  BasePOD Reference Architecture, RA-11127-001 V5, 2025-08-06).
- From two systems up to one scalable unit: the head-node HA pair alone; the service roles run on the head nodes
  (our judgement: a few systems give a scheduler and login node too little load for servers of their own).
- One system: one head node; a single system has no failover for a second head node to protect.

Each count is a named assumption (engine/data/assumptions/build.toml); an override of `management_servers` sets
the count at every size.
"""

from __future__ import annotations

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import System

__all__ = ["management_servers"]


def management_servers(system: System, systems: int, a: Assumptions) -> tuple[int, str]:
    """(servers, reason) for `systems` of `system` (its scalable unit is the published one)."""
    su = system.su_systems
    if "management_servers" in a.overrides:
        n = a["management_servers"]
        return n, f"{n} management server(s), as set in this plan's assumptions."
    if systems >= su:
        n = a["management_servers"]
        return n, (
            f"{n} management servers, as NVIDIA's DGX SuperPOD and BasePOD designs: two head nodes in a "
            "high-availability pair plus servers for the scheduler's login nodes or a Kubernetes control plane; "
            f"the cluster fills at least one scalable unit ({su} systems)."
        )
    if systems == 1:
        n = a["management_servers_single_system"]
        return n, (
            f"{n} head node: a single system has no failover for a second head node to protect; the cluster "
            "manager and scheduler run on it."
        )
    n = a["management_servers_small"]
    return n, (
        f"{n} head nodes, a high-availability pair running the cluster manager, scheduler and login services: "
        f"below one scalable unit ({su} systems) the extra service servers of NVIDIA's designs would sit idle."
    )
