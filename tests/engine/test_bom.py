"""The BOM must agree with the fabric and facility figures it is built from."""

from __future__ import annotations

import pytest

from engine.assumptions.registry import Assumptions
from engine.physical.build import build_physical
from engine.physical.cluster import build_cluster
from engine.request.spec import HardwareSpec


@pytest.mark.parametrize(("system_id", "gpus"), [("dgx-h100", 1016), ("gb200-nvl72", 1152), ("dgx-b300", 1024)])
def test_bom_quantities_match_fabric_and_facility(catalog, system_id, gpus):
    a = Assumptions()
    system = catalog.systems[system_id]
    build, _ = build_cluster(system, gpus, HardwareSpec(system=system_id), a, catalog.parts)
    pb = build_physical(
        system,
        build,
        catalog,
        a,
        params=70e9,
        training_tokens=1e12,
        weight_bytes_per_param=2.0,
        gpus_per_replica=None,
    )
    by_cat: dict[str, int] = {}
    for line in pb.bom:
        by_cat[line.category] = by_cat.get(line.category, 0) + line.quantity
        assert line.part_number and line.manufacturer and line.source and line.quantity > 0
    fabrics = pb.fabric.fabrics()
    switches = sum(f.leaf + f.spine + f.core for f in fabrics)
    assert by_cat["network"] == switches + pb.fabric.ufm_appliances
    assert by_cat["optics"] == sum(f.transceivers for f in fabrics)
    assert by_cat["cabling"] == sum(f.cables for f in fabrics)
    assert by_cat["compute"] == build.systems
    racks = next(ln for ln in pb.bom if ln.catalog_id == "rack-48u-800x1200")
    pdus = next(ln for ln in pb.bom if ln.catalog_id == "pdu-415v-60a")
    assert racks.quantity == len(pb.site.racks)
    assert pdus.quantity == sum(r.feeds for r in pb.site.racks)
    part_numbers = [ln.part_number for ln in pb.bom]
    assert len(part_numbers) == len(set(part_numbers))  # one line per part number


def test_every_catalog_part_is_documented(catalog):
    for part in catalog.parts.parts.values():
        assert part.part_number and part.manufacturer and part.source and part.as_of
    for phys in catalog.parts.systems.values():
        assert phys.part_number and phys.weight_kg > 0 and phys.source
