"""Run lengths at campus scale: once a build fills more than one data hall, the links of the upper fabric tiers
cross halls and buildings, so each link group takes the farthest run of the span it joins and its media are chosen
again (single-mode DR to 500 m, FR to 2 km).

Which tier spans what (NVIDIA's SuperPOD layout, spread over a campus): node links stay in their row; a pod's
spines sit in the hall of its scalable units, so leaf-spine runs stay inside the hall while a pod fits one; the
cores of a three-tier fabric join every pod, so spine-core runs reach the campus's network core; with four tiers
the cores join one super-pod (hall, building or campus, by its size) and the super-cores join them all. The
storage, in-band and out-of-band networks keep their spines at the campus core, so their leaf-spine runs span the
campus. A build in one hall keeps the row geometry's lengths unchanged.
"""

from __future__ import annotations

from dataclasses import replace

from engine.catalog.parts import PartsCatalog
from engine.physical.campus import Campus
from engine.physical.fabric.media import choose_media
from engine.physical.fabric.types import Fabric, FabricPlan, LinkGroup

__all__ = ["MEDIUM_PROBLEM", "campus_fabrics", "medium_problems"]

MEDIUM_PROBLEM = "fabric: no catalog medium spans"


def _span(fab: Fabric, tier: str, campus: Campus, halls_per_su: float) -> tuple[str, float] | None:
    """(distance class, run length) of one link group at campus scale; None = keeps its row-geometry length."""
    everything = len(campus.halls)
    if fab.name == "compute":
        if tier == "leaf-spine":
            return campus.span_m(fab.sus_per_pod * halls_per_su)
        if tier == "spine-core":
            if fab.super_core:
                return campus.span_m(fab.sus_per_super_pod * halls_per_su)
            return campus.span_m(everything)
        if tier == "core-super":
            return campus.span_m(everything)
        return None
    if tier == "leaf-spine":  # storage, in-band and OOB leaves in every hall, spines at the campus core
        return campus.span_m(everything)
    return None


def _relinked(group: LinkGroup, span: tuple[str, float], parts: PartsCatalog) -> LinkGroup:
    distance_class, length_m = span
    bare = replace(
        group,
        distance_class=distance_class,
        length_m=length_m,
        medium="",
        cable_part=None,
        cable_length_m=None,
        cables=0,
        a_module_part=None,
        a_modules=0,
        b_module_part=None,
        b_modules=0,
        optics_w=0.0,
    )
    return choose_media(bare, parts)


def medium_problems(plan: FabricPlan) -> list[str]:
    """One problem per link group no catalog medium spans."""
    return [
        f"{MEDIUM_PROBLEM} {g.length_m:.0f} m for {fab.name} {g.tier} links."
        for fab in plan.fabrics()
        for g in fab.links
        if g.medium == "unavailable"
    ]


def campus_fabrics(plan: FabricPlan, campus: Campus, parts: PartsCatalog) -> FabricPlan:
    """The fabrics with campus run lengths and their media chosen again; the same plan for one hall."""
    if not campus.multi_hall:
        return plan
    halls_per_su = len(campus.halls) / max(1, plan.scalable_units)

    def relink(fab: Fabric) -> Fabric:
        links = []
        for group in fab.links:
            span = _span(fab, group.tier, campus, halls_per_su)
            links.append(group if span is None else _relinked(group, span, parts))
        return replace(fab, links=tuple(links))

    out = replace(
        plan,
        compute=relink(plan.compute),
        storage=relink(plan.storage),
        inband=relink(plan.inband),
        oob=relink(plan.oob),
    )
    out.problems = [p for p in plan.problems if not p.startswith(MEDIUM_PROBLEM)] + medium_problems(out)
    return out
