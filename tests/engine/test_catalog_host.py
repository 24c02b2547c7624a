"""Each catalog system's host (CPU) memory and host link, checked against the vendors' published figures.

Hand-worked values (1 GB = 10^9 bytes, 1 GiB = 2^30 bytes):
- DGX H100: 2 TB of system memory (NVIDIA datasheet) = 2e12 / 2^30 = 1,862.6 GiB for 8 GPUs = 232.8 GiB per GPU;
  PCIe Gen5 x16 about 50 GB/s achieved per direction, two GPUs per switch uplink = 25 GB/s each.
- DGX A100 320GB: 1 TB = 931.3 GiB.
- GB200 NVL72: 36 Grace CPUs x 480 GB LPDDR5X = 17,280 GB = 16,093.3 GiB for 72 GPUs = 223.5 GiB per GPU;
  NVLink-C2C 900 GB/s bidirectional = 450 per direction, shared by two GPUs = 225 each.
- p5.48xlarge: AWS lists 2,048 GiB (2 TiB) for 8 GPUs = 256 GiB per GPU; p4d.24xlarge 1,152 GiB = 144 per GPU.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from engine import load_catalog
from engine.catalog.hardware import default_catalog_dir

GIB = 2**30
GRACE_C2C_PER_DIRECTION_GBYTE_S = 900 / 2  # NVLink-C2C, 900 GB/s bidirectional per Grace
EVERY_SYSTEM = {
    "dgx-a100-80gb", "dgx-a100-40gb", "dgx-h100", "dgx-h200", "dgx-b200", "dgx-b300", "gb200-nvl72",
    "gb300-nvl72", "hgx-h100-oem", "hgx-h800", "aws-p4d", "aws-p4de", "aws-p5", "aws-p5en", "aws-p6-b200",
}  # fmt: skip


def test_every_system_has_positive_sourced_host_figures(catalog):
    assert set(catalog.systems) >= EVERY_SYSTEM
    for system in catalog.systems.values():
        assert system.host_memory_gib > 0 and system.host_link_gbyte_s_per_gpu > 0, system.id
        assert system.host_source and system.host_confidence and system.host_link_derivation, system.id
        assert dt.date.fromisoformat(system.host_as_of).year >= 2020, system.id


def test_dgx_h100_host_from_its_datasheet(catalog):
    h100 = catalog.systems["dgx-h100"]
    assert h100.host_memory_gib == pytest.approx(2e12 / GIB, abs=0.05) == pytest.approx(1862.6, abs=0.05)
    assert h100.host_memory_gib_per_gpu == pytest.approx(1862.6 / 8, abs=0.01)
    assert h100.host_link_gbyte_s_per_gpu == pytest.approx(50 / 2)
    assert catalog.systems["dgx-a100-40gb"].host_memory_gib == pytest.approx(931.3, abs=0.05)  # 1 TB


def test_gb200_nvl72_host_is_36_graces_of_480_gb(catalog):
    rack = catalog.systems["gb200-nvl72"]
    assert rack.host_memory_gib == pytest.approx(36 * 480e9 / GIB, abs=0.05) == pytest.approx(16093.3, abs=0.05)
    assert rack.host_memory_gib_per_gpu == pytest.approx(16093.3 / 72, abs=0.01)  # two GPUs per 480 GB Grace
    assert rack.host_link_gbyte_s_per_gpu == pytest.approx(GRACE_C2C_PER_DIRECTION_GBYTE_S / 2)


def test_aws_instances_use_the_gib_aws_lists(catalog):
    assert catalog.systems["aws-p5"].host_memory_gib == 2048.0
    assert catalog.systems["aws-p5"].host_memory_gib_per_gpu == 256.0
    assert catalog.systems["aws-p4d"].host_memory_gib == catalog.systems["aws-p4de"].host_memory_gib == 1152.0


def test_grace_links_stay_below_the_c2c_direction_and_above_pcie(catalog):
    fastest_pcie = max(s.host_link_gbyte_s_per_gpu for s in catalog.systems.values() if not s.id.startswith("gb"))
    for rack_id in ("gb200-nvl72", "gb300-nvl72"):
        link = catalog.systems[rack_id].host_link_gbyte_s_per_gpu
        assert fastest_pcie < link < GRACE_C2C_PER_DIRECTION_GBYTE_S, rack_id


def test_pcie_generations_order_the_x86_links(catalog):
    """A100 hosts are PCIe Gen4 (p4d/p4de Gen3 CPUs), H100 and later Gen5: every A100 system's link is below
    every Gen5 system's, and p5 (Gen4 AMD Milan host) below p5en (Gen5 Sapphire Rapids) with the same H100s."""
    systems = catalog.systems
    a100 = [s for s in systems.values() if s.gpu.startswith("a100")]
    gen5 = [systems[i] for i in ("dgx-h100", "dgx-h200", "dgx-b200", "dgx-b300", "hgx-h100-oem", "aws-p5en")]
    assert len(a100) == 4
    assert max(s.host_link_gbyte_s_per_gpu for s in a100) < min(s.host_link_gbyte_s_per_gpu for s in gen5)
    assert systems["aws-p5"].host_link_gbyte_s_per_gpu < systems["aws-p5en"].host_link_gbyte_s_per_gpu


def _catalog_with(tmp_path: Path, edit) -> Path:
    """A copy of the packaged catalog with one system record edited."""
    for item in default_catalog_dir().iterdir():
        if item.name.endswith(".json"):
            (tmp_path / item.name).write_bytes(item.read_bytes())
    data = json.loads((tmp_path / "systems.json").read_text())
    edit(next(r for r in data["records"] if r["id"] == "dgx-h100"))
    (tmp_path / "systems.json").write_text(json.dumps(data))
    return tmp_path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda rec: rec.pop("host"), "catalog system dgx-h100: host is required"),
        (lambda rec: rec["host"].pop("memory_gib"), "catalog system dgx-h100: host.memory_gib is required"),
        (lambda rec: rec["host"].pop("source"), "catalog system dgx-h100: host.source is required"),
        (lambda rec: rec["host"].update(link_gbyte_s_per_gpu=0), "host.link_gbyte_s_per_gpu must be a positive"),
        (lambda rec: rec["host"].update(as_of="May 2023"), "host.as_of must be an ISO date"),
    ],
    ids=["no-host", "no-memory", "no-source", "zero-link", "bad-date"],
)
def test_a_record_without_its_host_figures_fails_to_load(tmp_path, edit, message):
    path = _catalog_with(tmp_path, edit)
    with pytest.raises(ValueError, match=message):
        load_catalog(path)
