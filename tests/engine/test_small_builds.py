"""Right-sized small builds (issue 16): below one scalable unit the networks, storage and management follow the
smallest sensible design, every choice with a one-line reason; from one SU the published designs are unchanged.

Every expected count is worked by hand in the docstring from the switch radix (QM9700: 64 x 400G; SN5600: 128 x
400G or 256 x 200G; SN4600C: 64 x 100G; SN2201: 48 x 1G), the systems' NIC counts (DGX: 8 compute NICs, one per
rail; GB200 NVL72: 18 trays x 4 NICs, 4 rails) and NVIDIA's SuperPOD tables, never copied from the engine.
"""

from __future__ import annotations

import pytest

from engine.assumptions.registry import Assumptions
from engine.physical.fabric import size_fabrics
from engine.physical.storage import size_storage


def fabrics(catalog, system_id, systems, fabric_id="auto", **overrides):
    system = catalog.systems[system_id]
    storage = catalog.parts["ddn-ai400x2"]
    a = Assumptions(overrides=overrides)
    plan = size_fabrics(system, systems, system.systems_per_rack, storage, 1, fabric_id, True, catalog.parts, a)
    assert plan.problems == []
    return plan


def counts(fab):
    return (fab.tiers, fab.leaf, fab.spine, fab.core)


def test_one_system_has_no_compute_switch(plan):
    """One DGX H100 training on its 8 GPUs: the job fits the system's 8-GPU NVLink domain, so no compute switch;
    one head node (a single system has nothing for a second head node to fail over to)."""
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-8b"},
            "training": {"tokens": 1e10, "gpus": 8},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert p["cluster"]["systems"] == 1
    compute = p["fabric"]["compute"]
    assert (compute["leaf"], compute["spine"], compute["cables"]) == (0, 0, 0)
    assert "NVLink" in compute["reason"] and "single" in compute["reason"]
    assert p["fabric"]["management_servers"] == 1
    assert p["fabric"]["ufm_appliances"] == 0


def test_two_systems_one_switch(catalog):
    """2 DGX H100: 2 systems x 8 NICs = 16 GPU ports <= 64 QM9700 ports -> one switch, one tier, no spine; no UFM
    (the managed switch runs the subnet manager) so no system slot is displaced. The PFS storage fabric given here
    (2 x 2 system ports + 8 appliance ports = 12 <= 64) is one InfiniBand switch, so it needs no UFM either."""
    plan = fabrics(catalog, "dgx-h100", 2)
    assert counts(plan.compute) == (1, 1, 0, 0)
    assert plan.compute.node_links == 16 and plan.compute.leaf_spine_links == 0
    assert plan.displaced_systems == 0 and plan.ufm_appliances == 0
    assert "one QM9700" in plan.compute.reason
    assert counts(plan.storage) == (1, 1, 0, 0)


def test_eight_systems_one_switch(catalog):
    """8 DGX H100: 8 x 8 = 64 GPU ports = exactly one QM9700's 64 -> one switch (the RA would build an SU's 8
    leaves and 4 spines, 12 switches). The 64 link cables are the node links, none between switches."""
    plan = fabrics(catalog, "dgx-h100", 8)
    assert counts(plan.compute) == (1, 1, 0, 0)
    assert plan.compute.node_links == 64
    assert {g.tier for g in plan.compute.links} == {"node-leaf"}


@pytest.mark.parametrize(
    ("systems", "switches", "rails_each"),
    [
        (16, 2, 4),  # 16 ports per rail: 8 rails x 16 = 128 > 64; 4 rails x 16 = 64 <= 64 -> 8 / 4 = 2 switches
        (30, 4, 2),  # 30 per rail: 4 x 30 = 120 > 64; 2 x 30 = 60 <= 64 -> 8 / 2 = 4 switches
    ],
)
def test_rails_share_switches_below_one_su(catalog, systems, switches, rails_each):
    """Below one SU (systems + the UFM's slot < 32) the fewest switches that each take whole rails."""
    plan = fabrics(catalog, "dgx-h100", systems)
    assert counts(plan.compute) == (1, switches, 0, 0)
    assert f"{rails_each} whole rail(s)" in plan.compute.reason


def test_one_su_keeps_the_reference_design(catalog):
    """31 DGX H100 + the UFM's displaced slot fill the 32-system SU: H100 RA Table 4 row 1, 8 leaves, 4 spines,
    252 node+UFM cables, 256 leaf-spine cables (unchanged by the small-build rules)."""
    plan = fabrics(catalog, "dgx-h100", 31)
    c = plan.compute
    assert counts(c) == (2, 8, 4, 0)
    assert (c.node_links, c.leaf_spine_links) == (252, 256)
    assert "SuperPOD" in c.reason


def test_b300_twin_plane_below_one_su(catalog):
    """8 DGX B300 on Spectrum-X (two 400G planes, SN5600 radix 128 per plane): 8 x 8 = 64 <= 128 per plane ->
    one switch per plane, 2 switches, 128 node links (8 x 8 x 2)."""
    plan = fabrics(catalog, "dgx-b300", 8)
    assert counts(plan.compute) == (1, 2, 0, 0)
    assert plan.compute.planes == 2 and plan.compute.node_links == 128


def test_nvl72_racks_get_two_tiers_only_when_a_rail_outgrows_a_switch(catalog):
    """GB200 NVL72 (18 trays x 4 NICs, 4 rails, QM9700 k = 64), below the 8-rack SU:
    2 racks: 36 ports per rail; 2 rails x 36 = 72 > 64, 1 x 36 <= 64 -> one tier, 4 switches (one per rail).
    4 racks: 72 ports per rail > 64 -> two tiers. Leaves per rail = ceil(72 / 32) = 3 of 24 ports, 24 uplinks each;
    12 leaves x 24 = 288 uplinks need >= 288 / 64 = 4.5 -> 5 spines; 5 does not divide 24, 6 does -> 6 spines.
    18 switches instead of the reference spine-leaf groups' 68 (32 leaves, 24 spines, 12 cores)."""
    two = fabrics(catalog, "gb200-nvl72", 2)
    assert counts(two.compute) == (1, 4, 0, 0)
    four = fabrics(catalog, "gb200-nvl72", 4)
    assert counts(four.compute) == (2, 12, 6, 0)
    assert four.compute.leaf_spine_links == 288
    assert "72 ports" in four.compute.reason


def test_117_dgx_h100_two_tiers(catalog):
    """117 DGX H100 (936 GPUs) on QM9700 (k = 64), rail-optimised, non-blocking:
    - slots: 117 systems + 1 displaced by the UFM's 4 links = 118 -> ceil(118 / 32) = 4 SUs;
    - leaves: one per rail per SU = 4 x 8 = 32, each 32 ports down / 32 up (the last SU holds 118 - 96 = 22
      systems; its leaves are built in full, as the RA does). Sized per rail instead, ceil(117 / 32) = 4 leaves
      per rail: the same 32;
    - spines: 32 x 32 = 1,024 uplinks / 64 ports = 16, and 16 divides 32 (2 links to each spine) -> 16;
    - two tiers reach k^2 / 2 = 2,048 ports >= 940, so no core: 48 switches;
    - links: node + UFM = 117 x 8 + 4 = 940; leaf-spine = 1,024."""
    plan = fabrics(catalog, "dgx-h100", 117)
    c = plan.compute
    assert counts(c) == (2, 32, 16, 0)
    assert (c.node_links, c.leaf_spine_links, c.spine_core_links) == (940, 1024, 0)
    assert plan.scalable_units == 4
    assert "22 of its 32" in c.reason


def test_32_su_superpod_unchanged(catalog):
    """H100 RA Table 3 / B200 RA, 32 SU x 32 = 1,024 DGX (idealised, no UFM): 256 leaves; two tiers reach only
    2,048 ports < 8,192, so SU-local spines (8 per SU = 256) and cores: each spine 32 up -> 8,192 / 64 = 128
    cores; 8,192 links at every tier."""
    plan = fabrics(catalog, "dgx-h100", 1024, ufm_links=0)
    c = plan.compute
    assert counts(c) == (3, 256, 256, 128)
    assert (c.node_links, c.leaf_spine_links, c.spine_core_links) == (8192, 8192, 8192)
    assert c.reason.startswith("Three tiers")


def test_two_system_serving_plan_storage_and_management(plan):
    """Llama 3 70B served at 40 requests/s on DGX B300: 2 systems, replicas of 2 GPUs (inside one system), so no
    compute switch. Storage: read = max(8 GB/s single-node guidance, 40 GB/s per SU x 2 / 32 = 2.5) = 8, write
    8 x 0.5 = 4, capacity = 5 weight copies (~0.14 TB each) x 1.3 < 1 TB -> one NFS server (12 / 6 GB/s, 150 TB),
    on the in-band network, so no storage switch. In-band: 2 systems x 2 ports + 2 NFS + 2 x 2 head-node ports,
    an MLAG pair of SN5600: 2 switches (was 4 + 4 SN5600 for storage and in-band). OOB: 2 BMCs + PDUs + 2 switches
    + 2 head nodes + 1 NFS, under 48 -> one SN2201. Management: an HA pair of head nodes (was 5)."""
    p = plan(
        {
            "workload": "inference",
            "model": {"preset": "llama-3-70b"},
            "inference": {"requests_per_s": 40, "prompt_tokens": 1000, "output_tokens": 250},
            "hardware": {"system": "dgx-b300"},
        }
    )
    assert p["cluster"]["systems"] == 2
    f, st = p["fabric"], p["storage"]
    assert f["compute"]["leaf"] == 0
    assert (st["appliance"], st["appliances"], st["read_gbps"], st["write_gbps"]) == ("nfs-r7625-nvme", 1, 8.0, 4.0)
    assert f["storage"]["leaf"] == 0 and "NFS" in st["reason"]
    assert (f["inband"]["tiers"], f["inband"]["leaf"], f["inband"]["spine"]) == (1, 2, 0)
    assert (f["oob"]["leaf"], f["oob"]["spine"]) == (1, 0)
    assert f["management_servers"] == 2 and "pair" in f["management_reason"]
    sn5600 = sum(line["quantity"] for line in p["bom"] if line.get("catalog_id") == "sn5600")
    assert sn5600 == 2
    assert not any(line.get("catalog_id") == "ddn-ai400x2" for line in p["bom"])
    for name in ("compute", "storage", "inband", "oob"):
        assert f[name]["reason"], name
    explain = p["explain"]
    assert explain["storage.appliances"]["inputs"]["choice"] == st["reason"]
    assert explain["management_servers"]["inputs"]["servers"] == 2


def test_1024_gpu_plan_storage_and_management(plan):
    """Llama 3 70B on 1,024 H100 GPUs = 128 DGX H100 (4 published SUs of 32): the reference design.
    Storage: read = 40 GB/s x 4 SUs = 160, write = max(160 x 0.5 = 80, checkpoint ~0.99 TB / 120 s = 8.2) = 80;
    appliances = max(ceil(160 / 90) = 2, ceil(80 / 65) = 2, capacity ~12 TB / 500 = 1) = 2 AI400X2.
    Management: the reference design's 5 servers (2 head nodes + 3 service servers)."""
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-70b"},
            "training": {"tokens": 1e12, "gpus": 1024},
            "hardware": {"system": "dgx-h100"},
        }
    )
    st = p["storage"]
    assert (st["appliance"], st["appliances"], st["read_gbps"], st["write_gbps"]) == ("ddn-ai400x2", 2, 160.0, 80.0)
    assert p["fabric"]["management_servers"] == 5
    assert "SuperPOD" in st["reason"] and "SuperPOD" in p["fabric"]["management_reason"]


def test_small_storage_shares_the_su_guidance(catalog):
    """Below one SU the per-SU read is shared: 16 of 32 systems x 40 GB/s = 20 GB/s read, 10 write -> more than
    one NFS server's 12 / 6, so a parallel file system: ceil(20 / 90) = 1 AI400X2."""
    st, part = size_storage(1, 8e9, 1e11, 2.0, catalog.parts, Assumptions(), systems=16, su_systems=32)
    assert (st.read_gbps, st.write_gbps, st.appliances, part.id) == (20.0, 10.0, 1, "ddn-ai400x2")
    assert st.reason.startswith("Parallel file system: one NFS server cannot")


def test_13_nvl72_racks_leave_out_leaves_of_absent_racks(catalog):
    """13 GB200 NVL72 racks (936 GPUs, the issue's 130-switch case) on QM9700 (k = 64): 13 >= 8 racks, so the
    GB200 SuperPOD design, 2 SUs. Per spine-leaf group (one per rail per SU): 8 leaves x 18 uplinks = 144 over
    spines with 32 ports down -> at least 5, dividing 18 -> 6; 2 SUs x 4 rails x 6 = 48 spines, each 24 down / 24
    up. Core group j takes spine j of all 8 groups: 8 x 24 = 192 / 64 = 3 (divides 24) -> 6 groups x 3 = 18 cores.
    Leaves: one per rack per rail for the 13 racks present = 52 (the second SU's 3 absent racks would have had 12
    leaves serving nothing): 52 + 48 + 18 = 118 switches, was 130. Links: 52 x 18 = 936 leaf-spine (one per tray
    port); spines and cores stay cabled for the full SU: 48 x 24 = 1,152 spine-core."""
    plan = fabrics(catalog, "gb200-nvl72", 13)
    c = plan.compute
    assert counts(c) == (3, 52, 48, 18)
    assert (c.leaf_spine_links, c.spine_core_links) == (936, 1152)
    assert "5 of its 8 racks" in c.reason


def test_nfs_can_be_ruled_out_and_head_nodes_set(catalog):
    """With nfs_max_systems_fraction_of_su = 0 even 2 systems get the parallel file system (read max(8, 40 x 2 /
    32 = 2.5) = 8 GB/s -> ceil(8 / 90) = 1 AI400X2), and the reason says the assumption ruled NFS out. An override
    of management_servers sets the count at every size."""
    a = Assumptions(overrides={"nfs_max_systems_fraction_of_su": 0.0})
    st, part = size_storage(1, 8e9, None, 2.0, catalog.parts, a, systems=2, su_systems=32)
    assert (st.read_gbps, st.appliances, part.id) == (8.0, 1, "ddn-ai400x2")
    assert "rule out an NFS server" in st.reason
    plan = fabrics(catalog, "dgx-h100", 2, management_servers=3)
    assert plan.management_servers == 3 and "assumptions" in plan.management_reason
    assert fabrics(catalog, "dgx-h100", 2).management_servers == 2
    assert fabrics(catalog, "dgx-h100", 1).management_servers == 1
