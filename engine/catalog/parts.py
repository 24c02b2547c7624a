"""Build parts: switches, appliances, storage, racks, PDUs, CDUs, transceivers and cables, plus each system's
physical data, loaded from `engine/data/catalog/parts.json` and the `physical` block of `systems.json`.

Kept apart from the GPU/system records the sizing stages use so the physical build (fabric, facility, BOM) can
grow without touching them. Every record keeps its `source`, `as_of` and `confidence`, and the BOM copies the
source onto each line, so a procurement team can see where each part number came from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from typing import Any

__all__ = ["Part", "PartsCatalog", "SystemPhysical", "load_parts"]


@dataclass(frozen=True)
class Part:
    """One orderable part. `spec` holds the kind-specific fields (ports, reach, capacity, ...) as in the JSON."""

    id: str
    kind: str
    name: str
    manufacturer: str
    part_number: str
    rack_units: int
    power_typ_w: float | None
    power_max_w: float | None
    weight_kg: float | None
    source: str
    as_of: str
    confidence: str
    spec: dict[str, Any] = field(default_factory=dict)

    def num(self, key: str, default: float = 0.0) -> float:
        """A numeric spec field (missing or null -> default)."""
        value = self.spec.get(key)
        return default if value is None else float(value)

    def text(self, key: str, default: str = "") -> str:
        value = self.spec.get(key)
        return default if value is None else str(value)

    def part_number_for(self, length_m: int | None) -> str:
        """Cables are ordered by length: the catalog's part number is a pattern with `{len}`."""
        if length_m is None or "{len" not in self.part_number:
            return self.part_number
        return self.part_number.format(len=length_m)


@dataclass(frozen=True)
class SystemPhysical:
    """What the fabric, facility and BOM stages need to know about one system beyond its sizing data."""

    system: str
    part_number: str
    manufacturer: str
    weight_kg: float
    airflow_cfm: float | None
    psu_count: int
    psu_rating_w: float
    psu_redundancy: str
    power_redundancy: str  # "n+1" (one spare feed) or "n+n" (every feed duplicated)
    compute_rails: int
    compute_planes: int
    compute_nic_max_planes: int  # most planes one compute NIC splits over (ConnectX-8: 2 x 400G; CX-7: 1)
    compute_port_type: str
    compute_fabric: str
    spine_groups: str  # "shared" (spines serve every rail) or "per_rail" (NVL72 spine-leaf groups)
    north_south: str  # "separate" storage + in-band fabrics, or one "converged" Ethernet fabric
    storage_ports: int
    storage_gbps: float
    storage_port_type: str
    inband_ports: int
    inband_gbps: float
    inband_port_type: str
    inband_switch: str
    storage_switch: str
    oob_ports: int
    liquid_fraction: float
    source: str
    confidence: str


@dataclass(frozen=True)
class PartsCatalog:
    """Parts by id plus per-system physical data; `of_kind` keeps deterministic (id) order."""

    parts: dict[str, Part]
    systems: dict[str, SystemPhysical]

    def of_kind(self, kind: str) -> list[Part]:
        return [p for _, p in sorted(self.parts.items()) if p.kind == kind]

    def __getitem__(self, part_id: str) -> Part:
        return self.parts[part_id]


_COMMON = {"id", "kind", "name", "manufacturer", "part_number", "rack_units", "power_typ_w", "power_max_w", "weight_kg"}
_COMMON |= {"source", "as_of", "confidence"}


def _opt(value: Any) -> float | None:
    return None if value is None else float(value)


def _part(rec: dict[str, Any]) -> Part:
    return Part(
        id=rec["id"],
        kind=rec["kind"],
        name=rec["name"],
        manufacturer=rec["manufacturer"],
        part_number=rec["part_number"],
        rack_units=int(rec.get("rack_units") or 0),
        power_typ_w=_opt(rec.get("power_typ_w")),
        power_max_w=_opt(rec.get("power_max_w")),
        weight_kg=_opt(rec.get("weight_kg")),
        source=rec["source"],
        as_of=rec["as_of"],
        confidence=rec.get("confidence", ""),
        spec={k: v for k, v in rec.items() if k not in _COMMON},
    )


def _physical(system_id: str, rec: dict[str, Any]) -> SystemPhysical:
    psu = rec["psu"]
    return SystemPhysical(
        system=system_id,
        part_number=rec["part_number"],
        manufacturer=rec["manufacturer"],
        weight_kg=float(rec["weight_kg"]),
        airflow_cfm=_opt(rec.get("airflow_cfm")),
        psu_count=int(psu["count"]),
        psu_rating_w=float(psu["rating_w"]),
        psu_redundancy=str(psu["redundancy"]),
        power_redundancy=rec["power_redundancy"],
        compute_rails=int(rec["compute_rails"]),
        compute_planes=int(rec["compute_planes"]),
        compute_nic_max_planes=int(rec["compute_nic_max_planes"]),
        compute_port_type=rec["compute_port_type"],
        compute_fabric=rec["compute_fabric"],
        spine_groups=rec["spine_groups"],
        north_south=rec["north_south"],
        storage_ports=int(rec["storage_ports"]["count"]),
        storage_gbps=float(rec["storage_ports"]["gbps"]),
        storage_port_type=rec["storage_ports"]["port_type"],
        inband_ports=int(rec["inband_ports"]["count"]),
        inband_gbps=float(rec["inband_ports"]["gbps"]),
        inband_port_type=rec["inband_ports"]["port_type"],
        inband_switch=rec["inband_switch"],
        storage_switch=rec["storage_switch"],
        oob_ports=int(rec["oob_ports"]),
        liquid_fraction=float(rec["liquid_fraction"]),
        source=rec["source"],
        confidence=rec.get("confidence", ""),
    )


def load_parts(directory: Traversable) -> PartsCatalog:
    """Parse parts.json and the systems' `physical` blocks; a system without one simply has no physical build."""
    parts: dict[str, Part] = {}
    parts_file = directory / "parts.json"
    if parts_file.is_file():
        parts = {rec["id"]: _part(rec) for rec in json.loads(parts_file.read_text(encoding="utf-8"))["records"]}
    systems: dict[str, SystemPhysical] = {}
    for rec in json.loads((directory / "systems.json").read_text(encoding="utf-8"))["records"]:
        if rec.get("physical"):
            systems[rec["id"]] = _physical(rec["id"], rec["physical"])
    if not parts:  # a catalog copy without parts.json (e.g. a test fixture): systems have no physical build
        return PartsCatalog(parts={}, systems={})
    for phys in systems.values():
        for switch in (phys.inband_switch, phys.storage_switch):
            if switch not in parts:
                raise ValueError(f"catalog system {phys.system} names unknown switch {switch}")
    return PartsCatalog(parts=parts, systems=systems)
