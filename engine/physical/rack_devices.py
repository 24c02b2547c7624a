"""What a rack elevation draws for each catalog item, copied into the plan when the racks are laid out.

The plan carries each item's height, kind and name so a plan re-opened after a catalog change draws the
racks it drew before: no output looks a part up in the live catalog at render time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from engine.catalog.hardware import System
from engine.catalog.parts import PartsCatalog

__all__ = ["RackDevice", "item_dict", "rack_devices"]


@dataclass(frozen=True)
class RackDevice:
    """One catalog item as racked: height in U, kind ("system" for GPU systems, else the part's catalog kind)
    and its catalog name."""

    rack_units: int
    kind: str
    label: str

    def as_dict(self) -> dict[str, object]:
        return {"rack_units": self.rack_units, "kind": self.kind, "label": self.label}


def item_dict(item_id: str, quantity: int, device: RackDevice | None) -> dict[str, object]:
    """One rack item as plan JSON: id and quantity, plus the device facts when known."""
    out: dict[str, object] = {"id": item_id, "quantity": quantity}
    if device is not None:
        out.update(device.as_dict())
    return out


def rack_devices(item_ids: Iterable[str], system: System, parts: PartsCatalog) -> tuple[tuple[str, RackDevice], ...]:
    """(catalog id, RackDevice) per distinct id, sorted: the GPU system from the hardware catalog (the height
    the rack packing used), every other item from the parts catalog."""
    out = []
    for item_id in sorted(set(item_ids)):
        if item_id == system.id:
            out.append((item_id, RackDevice(system.rack_units, "system", system.name)))
        else:
            part = parts[item_id]
            out.append((item_id, RackDevice(part.rack_units, part.kind, part.name)))
    return tuple(out)
