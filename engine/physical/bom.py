"""Bill of materials: one line per part number, with quantities taken from the fabric and facility figures.

Nothing is counted here that the fabric or facility stage did not count first, so the BOM and the plan's
switch, cable, transceiver, rack, PDU and CDU figures cannot disagree (a test cross-checks them). Prices
attach in the costing stage; no price is invented here.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.catalog.hardware import System
from engine.catalog.parts import PartsCatalog
from engine.physical.fabric import FabricPlan
from engine.physical.facility import SiteResult

__all__ = ["HOT_SPARE_DESCRIPTION", "BomLine", "build_bom"]

# What the hot spares' line says after the system's name (engine/physical/spares.py sizes them).
HOT_SPARE_DESCRIPTION = "hot spares for elastic recovery (racked, cabled and powered)"

_CATEGORY = {
    "switch": "network",
    "ufm": "network",
    "transceiver": "optics",
    "cable": "cabling",
    "storage": "storage",
    "management_server": "management",
    "rack": "facility",
    "pdu": "facility",
    "cdu": "facility",
}


@dataclass(frozen=True)
class BomLine:
    part_number: str
    manufacturer: str
    description: str
    category: str
    quantity: int
    source: str
    catalog_id: str

    def as_dict(self) -> dict[str, object]:
        return {
            "part_number": self.part_number,
            "manufacturer": self.manufacturer,
            "description": self.description,
            "category": self.category,
            "quantity": self.quantity,
            "source": self.source,
            "catalog_id": self.catalog_id,
        }


def build_bom(
    system: System,
    systems: int,
    fabric: FabricPlan,
    site: SiteResult,
    storage_units: int,
    parts: PartsCatalog,
    storage_part: str | None = None,
    spare_systems: int = 0,
) -> list[BomLine]:
    """Lines in a stable order: compute, network, optics, cabling, storage, management, facility. The storage
    line is `storage_part` (the storage stage's choice; the catalog's first storage part when not given).
    `spare_systems` of the `systems` are hot spares for elastic recovery: a compute line of their own (the one
    exception to one line per part number), so a buyer sees what the spares cost."""
    # Keyed by part number: two catalog records may name the same orderable module (one line per part number).
    counts: dict[str, int] = {}
    first_id: dict[str, str] = {}

    def add(part_id: str, qty: int, length_m: int | None = None) -> None:
        if qty <= 0:
            return
        number = parts[part_id].part_number_for(length_m)
        first_id.setdefault(number, part_id)
        counts[number] = counts.get(number, 0) + qty

    for tier in fabric.switch_tiers():
        add(tier.part, tier.count)
    add("ufm-3.1", fabric.ufm_appliances)
    add("mgmt-server-2s", fabric.management_servers)
    for fab in fabric.fabrics():
        for group in fab.links:
            if group.cable_part:
                add(group.cable_part, group.cables, group.cable_length_m)
            if group.a_module_part:
                add(group.a_module_part, group.a_modules)
            if group.b_module_part:
                add(group.b_module_part, group.b_modules)
    storage = storage_part or next((r.id for r in parts.of_kind("storage")), None)
    if storage and storage_units:
        add(storage, storage_units)
    add(parts.of_kind("rack")[0].id, len(site.racks))
    add(parts.of_kind("pdu")[0].id, site.rack_pdus)
    if site.cdu_part:
        add(site.cdu_part, site.cdus)

    phys = parts.systems[system.id]
    job_systems = systems - spare_systems
    lines = [BomLine(phys.part_number, phys.manufacturer, system.name, "compute", job_systems, phys.source, system.id)]
    if spare_systems > 0:
        spare_name = f"{system.name}: {HOT_SPARE_DESCRIPTION}"
        lines.append(BomLine(phys.part_number, phys.manufacturer, spare_name, "compute", spare_systems, phys.source,
                             system.id))  # fmt: skip
    order = ["network", "optics", "cabling", "storage", "management", "facility"]
    rest = []
    for number, qty in counts.items():
        part_id = first_id[number]
        part = parts[part_id]
        category = _CATEGORY.get(part.kind, "other")
        rest.append(BomLine(number, part.manufacturer, part.name, category, qty, part.source, part_id))
    rest.sort(key=lambda ln: (order.index(ln.category) if ln.category in order else 99, ln.part_number))
    return lines + rest
