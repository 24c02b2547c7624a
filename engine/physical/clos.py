"""Folded-Clos (fat-tree) arithmetic shared by every fabric: how many spines and cores, and how many links.

The rules, in the order NVIDIA's DGX SuperPOD reference architectures (DGX H100 RA-11333-001, DGX B200 RA-11334-001,
DGX GB200 RA-11338-001) apply them, with the fat-tree capacity of Al-Fares et al. (SIGCOMM 2008):

1. A leaf's uplinks are spread evenly: every leaf has the same number of links to every switch above it, so the
   count of upper switches must divide the leaf's uplinks. Uplinks equal the non-blocking need (down ports in
   use / oversubscription); only when no switch count divides that need are extra uplinks added.
2. The upper switches together must offer a down-facing port for every uplink. In two tiers spines face all
   their ports down; in three tiers they keep half down and half up (non-blocking), and every spine uplink
   lands on a core port.
3. Two tiers while the radix allows it (a leaf can reach every spine); otherwise leaves are grouped into pods
   (SUs for the compute fabric) with pod-local spines, and spine j of every pod joins core group j. Pods grow
   (several SUs) only when the core radix cannot reach every pod.

Nothing here knows about any particular product or row of a published table: the tables are tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Clos", "LeafType", "clos", "spread"]


@dataclass(frozen=True)
class LeafType:
    """`count` leaves that each need `uplinks` links up and have at most `max_uplinks` ports free for them."""

    count: int
    uplinks: int
    max_uplinks: int


@dataclass(frozen=True)
class Clos:
    """Switch and link counts of one folded Clos. `leaf_uplinks` is per leaf type, after even spreading."""

    tiers: int
    leaves: int
    spines: int
    cores: int
    leaf_uplinks: tuple[int, ...]
    leaf_spine_links: int
    spine_core_links: int
    pods: int
    spines_per_pod: int
    core_groups: int
    cores_per_group: int
    spine_uplinks: int


def spread(types: list[LeafType], down_ports: int) -> tuple[int, tuple[int, ...]] | None:
    """Fewest upper switches (each with `down_ports` facing down) that take every leaf's uplinks evenly.

    First look for a count that divides every leaf's exact need (non-blocking, no spare uplinks); failing
    that, round each leaf's uplinks up to a multiple of the count, within its free ports. None = impossible
    (a leaf cannot reach enough switches): the caller adds a tier.
    """
    # Leaf types with no leaves (or no uplinks) take no ports; they keep their place in the answer
    # with 0 uplinks so callers can zip the result with their own list.
    active = [i for i, t in enumerate(types) if t.count > 0 and t.uplinks > 0]
    if not active:
        return 0, tuple(0 for _ in types)
    used = [types[i] for i in active]
    demand = sum(t.count * t.uplinks for t in used)
    first = max(1, math.ceil(demand / down_ports))
    widest = min(t.max_uplinks for t in used)
    for exact in (True, False):
        for switches in range(first, widest + 1):
            ups = tuple(math.ceil(t.uplinks / switches) * switches for t in used)
            if exact and ups != tuple(t.uplinks for t in used):
                continue
            if any(u > t.max_uplinks for u, t in zip(ups, used, strict=True)):
                continue
            if switches * down_ports >= sum(t.count * u for u, t in zip(ups, used, strict=True)):
                aligned = dict(zip(active, ups, strict=True))
                return switches, tuple(aligned.get(i, 0) for i in range(len(types)))
    return None


def _leaves(types: list[LeafType]) -> int:
    return sum(t.count for t in types)


def clos(
    units: int,
    unit_types: list[LeafType],
    groups: int,
    spine_radix: int,
    core_radix: int,
    first_pod_units: int = 1,
    allow_two_tier: bool = True,
) -> Clos | None:
    """Size the fabric for `units` identical units (SUs, or single leaves), each holding `unit_types` leaves in
    each of `groups` independent spine groups (1 = spines shared by all rails; rails = NVL72 spine-leaf groups).

    Two tiers are tried first (only possible with one group). Three tiers group `first_pod_units` or more units
    per pod. None = not even three tiers reach (a fourth tier is not modelled).
    """
    all_types = [LeafType(t.count * units * groups, t.uplinks, t.max_uplinks) for t in unit_types]
    leaves = _leaves(all_types)
    if leaves <= 1:
        return Clos(1, leaves, 0, 0, tuple(0 for _ in unit_types), 0, 0, 0, 0, 0, 0, 0)
    if allow_two_tier and groups == 1:
        two = spread(all_types, spine_radix)
        if two is not None:
            spines, ups = two
            links = sum(t.count * u for t, u in zip(all_types, ups, strict=True))
            return Clos(2, leaves, spines, 0, ups, links, 0, 1, spines, 0, 0, 0)
    half = spine_radix // 2
    for pod_units in range(max(1, min(first_pod_units, units)), units + 1):
        pods_per_group = math.ceil(units / pod_units)
        pod_types = [LeafType(t.count * pod_units, t.uplinks, t.max_uplinks) for t in unit_types]
        local = spread(pod_types, half)
        if local is None:
            return None  # bigger pods only need more spines per pod; a leaf cannot reach more of them
        spines_per_pod, ups = local
        spine_down = sum(t.count * u for t, u in zip(pod_types, ups, strict=True)) // spines_per_pod
        pods = pods_per_group * groups
        core = spread([LeafType(pods, spine_down, spine_radix - spine_down)], core_radix)
        if core is None:
            continue
        cores_per_group, (spine_up,) = core
        leaf_spine = sum(t.count * u for t, u in zip(all_types, ups, strict=True))
        spines = pods * spines_per_pod
        return Clos(
            tiers=3,
            leaves=leaves,
            spines=spines,
            cores=spines_per_pod * cores_per_group,
            leaf_uplinks=ups,
            leaf_spine_links=leaf_spine,
            spine_core_links=spines * spine_up,
            pods=pods,
            spines_per_pod=spines_per_pod,
            core_groups=spines_per_pod,
            cores_per_group=cores_per_group,
            spine_uplinks=spine_up,
        )
    return None
