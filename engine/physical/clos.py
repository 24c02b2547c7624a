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
4. Past three tiers (about k^3/4 ports), a fourth: pods are grouped into super-pods whose cores keep half their
   ports down (like a spine), and core i of group j in every super-pod joins super-core group (j, i). This is the
   same recursion that takes a two-tier fabric to three (a k-ary fat tree of n tiers reaches 2 (k/2)^n ports).
5. An oversubscribed upper tier (`upper_ratio` > 1, a request's choice): spines keep more ports down than up
   (down:up = ratio), so each core port carries more pods and three tiers reach further, at the stated ratio.

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
    super_cores: int = 0  # fourth tier (0 below four tiers)
    core_super_links: int = 0
    super_pods: int = 0


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
    max_tiers: int = 3,
    upper_ratio: float = 1.0,
) -> Clos | None:
    """Size the fabric for `units` identical units (SUs, or single leaves), each holding `unit_types` leaves in
    each of `groups` independent spine groups (1 = spines shared by all rails; rails = NVL72 spine-leaf groups).

    Two tiers are tried first (only possible with one group). Three tiers group `first_pod_units` or more units
    per pod; a fourth tier (when `max_tiers` allows) groups pods into super-pods. Spines keep `upper_ratio` times
    as many ports down as up (1 = non-blocking). None = no design within `max_tiers` reaches.
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
    spine_down_max = _down_ports(spine_radix, upper_ratio)
    first = max(1, min(first_pod_units, units))
    tried: list[_Pod] = []
    for pod_units in range(first, units + 1):
        pod = _pod(units, pod_units, unit_types, groups, spine_down_max, upper_ratio)
        if pod is None:
            break  # bigger pods only need more spines per pod; a leaf cannot reach more of them
        tried.append(pod)
        core = spread([LeafType(pod.pods, pod.spine_need, spine_radix - pod.spine_down)], core_radix)
        if core is None:
            continue
        cores_per_group, (spine_up,) = core
        spines = pod.pods * pod.spines_per_pod
        return Clos(
            tiers=3,
            leaves=leaves,
            spines=spines,
            cores=pod.spines_per_pod * cores_per_group,
            leaf_uplinks=pod.ups,
            leaf_spine_links=sum(t.count * u for t, u in zip(all_types, pod.ups, strict=True)),
            spine_core_links=spines * spine_up,
            pods=pod.pods,
            spines_per_pod=pod.spines_per_pod,
            core_groups=pod.spines_per_pod,
            cores_per_group=cores_per_group,
            spine_uplinks=spine_up,
        )
    for pod in tried if max_tiers >= 4 else []:  # smallest pods first, as for three tiers
        four = _four_tiers(all_types, pod, spine_radix, core_radix)
        if four is not None:
            return four
    return None


@dataclass(frozen=True)
class _Pod:
    """Pods of one size: how many (over every group), their spines and each leaf type's uplinks."""

    pods: int
    spines_per_pod: int
    ups: tuple[int, ...]
    spine_down: int  # links from a pod's leaves to each of its spines
    spine_need: int  # each spine's uplinks at the upper tier's ratio


def _pod(
    units: int, pod_units: int, unit_types: list[LeafType], groups: int, spine_down_max: int, ratio: float
) -> _Pod | None:
    pod_types = [LeafType(t.count * pod_units, t.uplinks, t.max_uplinks) for t in unit_types]
    local = spread(pod_types, spine_down_max)
    if local is None:
        return None
    spines_per_pod, ups = local
    spine_down = sum(t.count * u for t, u in zip(pod_types, ups, strict=True)) // spines_per_pod
    pods = math.ceil(units / pod_units) * groups
    return _Pod(pods, spines_per_pod, ups, spine_down, math.ceil(spine_down / ratio - 1e-9))


def _down_ports(radix: int, ratio: float) -> int:
    """Most ports a switch can face down while down/up <= ratio (half the radix when non-blocking)."""
    down = int(radix * ratio / (ratio + 1))
    while down > 0 and down + math.ceil(down / ratio - 1e-9) > radix:
        down -= 1
    return down


def _four_tiers(all_types: list[LeafType], pod: _Pod, spine_radix: int, core_radix: int) -> Clos | None:
    """Four tiers: `pods` pods (each with `spines_per_pod` spines of `spine_need` uplinks) grouped into the
    largest super-pods the cores can take with half their ports down; core i of group j in every super-pod joins
    super-core group (j, i). Largest super-pods first: fewest super-pods means fewest links on the longest
    (campus) runs of the top tier. None = not even four tiers reach."""
    pods, spines_per_pod, spine_need = pod.pods, pod.spines_per_pod, pod.spine_need
    core_half = core_radix // 2
    most = min(pods, max(1, (spine_radix - pod.spine_down) * core_half // max(1, spine_need)))
    for per_super in range(most, 0, -1):
        local = spread([LeafType(per_super, spine_need, spine_radix - pod.spine_down)], core_half)
        if local is None:
            continue
        cores_per_group, (spine_up,) = local
        core_down = math.ceil(per_super * spine_up / cores_per_group)
        supers = math.ceil(pods / per_super)
        top = spread([LeafType(supers, core_down, core_radix - core_down)], core_radix)
        if top is None:
            continue
        super_per_group, (core_up,) = top
        # The last super-pod gets cores only for the pods it has (its cores keep as many links up as down).
        last_pods = pods - (supers - 1) * per_super
        last = (
            spread([LeafType(last_pods, spine_need, spine_radix - pod.spine_down)], core_half) if supers > 1 else None
        )
        last_cores, last_up = (last[0], math.ceil(last_pods * last[1][0] / last[0])) if last else (0, 0)
        full = (supers - 1 if last else supers) * spines_per_pod * cores_per_group
        cores = full + spines_per_pod * last_cores
        spines = pods * spines_per_pod
        last_spine_up = last[1][0] if last else spine_up
        spine_core = ((pods - last_pods) * spine_up + last_pods * last_spine_up) * spines_per_pod if last else None
        return Clos(
            tiers=4,
            leaves=_leaves(all_types),
            spines=spines,
            cores=cores,
            leaf_uplinks=pod.ups,
            leaf_spine_links=sum(t.count * u for t, u in zip(all_types, pod.ups, strict=True)),
            spine_core_links=spine_core if spine_core is not None else spines * spine_up,
            pods=pods,
            spines_per_pod=spines_per_pod,
            core_groups=spines_per_pod,
            cores_per_group=cores_per_group,
            spine_uplinks=spine_up,
            super_cores=spines_per_pod * cores_per_group * super_per_group,
            core_super_links=full * core_up + spines_per_pod * last_cores * last_up,
            super_pods=supers,
        )
    return None
