"""Compute-fabric rules against NVIDIA's published SuperPOD tables (the rows are tests, not code paths).

Expected values are copied from the reference tables named on each row, never from the engine's output.
"""

from __future__ import annotations

import pytest

from engine.assumptions.registry import Assumptions
from engine.physical.clos import LeafType, spread
from engine.physical.fabric import size_fabrics


def compute(catalog, system_id, systems, **overrides):
    system = catalog.systems[system_id]
    storage = catalog.parts["ddn-ai400x2"]
    a = Assumptions(overrides=overrides)
    plan = size_fabrics(system, systems, system.systems_per_rack, storage, 1, "auto", True, catalog.parts, a)
    assert plan.problems == []
    c = plan.compute
    return plan, (c.leaf, c.spine, c.core, c.node_links, c.leaf_spine_links, c.spine_core_links)


# H100 RA Table 4 (identical in the B200 RA): UFM displaces one node; node+UFM cables = 8 x nodes + 4.
@pytest.mark.parametrize("system_id", ["dgx-h100", "dgx-b200"])
@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        (31, (8, 4, 0, 252, 256, 0)),  # 1 SU
        (127, (32, 16, 0, 1020, 1024, 0)),  # 4 SU
    ],
)
def test_ra_table4_with_ufm(catalog, system_id, nodes, expected):
    _, counts = compute(catalog, system_id, nodes)
    assert counts == expected


# H100 RA Table 3 (4, 16 SU) and the B200 RA web table (2, 4, 8, 16, 32, 64 SU): idealised 32 nodes per SU.
@pytest.mark.parametrize(
    ("sus", "expected"),
    [
        (2, (16, 8, 0, 512, 512, 0)),
        (4, (32, 16, 0, 1024, 1024, 0)),
        (8, (64, 32, 0, 2048, 2048, 0)),
        (16, (128, 128, 64, 4096, 4096, 4096)),
        (32, (256, 256, 128, 8192, 8192, 8192)),
        (64, (512, 512, 256, 16384, 16384, 16384)),
    ],
)
def test_ra_table3_idealised(catalog, sus, expected):
    _, counts = compute(catalog, "dgx-h100", sus * 32, ufm_links=0)
    assert counts == expected


def test_two_tiers_until_radix_runs_out(catalog):
    # QM9700 k = 64: two tiers hold k^2/2 = 2,048 rail ports = 8 SU of 256 (fabric.md section 5); 9 SU needs a core.
    plan8, _ = compute(catalog, "dgx-h100", 8 * 32, ufm_links=0)
    plan9, _ = compute(catalog, "dgx-h100", 9 * 32, ufm_links=0)
    assert (plan8.compute.tiers, plan9.compute.tiers) == (2, 3)


def test_three_su_spines_spread_evenly(catalog):
    # 24 leaves x 32 uplinks = 768 need >= 12 spines; 12 does not divide 32, 16 does -> 16 spines, 2 links each.
    _, counts = compute(catalog, "dgx-h100", 3 * 32, ufm_links=0)
    assert counts[:2] == (24, 16)


# DGX SuperPOD RA with DGX B300, Table 3: twin-planar Spectrum-X, 64 nodes per SU, cables at 800G.
@pytest.mark.parametrize(
    ("sus", "leaf", "spine", "cables"),
    [(1, 16, 8, 512), (2, 32, 16, 1024), (4, 64, 32, 2048), (8, 128, 64, 4096), (16, 256, 128, 8192)],
)
def test_b300_twin_plane_table(catalog, sus, leaf, spine, cables):
    plan, _ = compute(catalog, "dgx-b300", sus * 64)
    c = plan.compute
    assert (c.leaf, c.spine, c.core) == (leaf, spine, 0)
    by_tier = {g.tier: g.cables for g in c.links}
    assert by_tier["node-leaf"] == cables and by_tier["leaf-spine"] == cables


def test_gb200_spine_leaf_groups(catalog):
    # GB200 RA: one SLG per rail per SU, one leaf per rack per rail (18 trays), three tiers by construction.
    # Leaves: 8 racks x 4 rails = 32. SLG spines: 8 leaves x 18 uplinks = 144 over spines with 32 down ports ->
    # at least 5; the count must divide 18 -> 6 per SLG (6 spines per SLG also in secondary NCP-AIN notes) = 24.
    plan, counts = compute(catalog, "gb200-nvl72", 8)
    assert plan.compute.tiers == 3
    assert counts[:2] == (32, 24)
    assert counts[3] == 8 * 72 + 4  # UFM uses spare leaf ports (18 of 32 used), displacing no rack
    assert plan.displaced_systems == 0
    # Non-blocking: spine-core links equal leaf-spine links equal tray ports (576).
    assert counts[4] == counts[5] == 576


def test_even_spread_rule_directly():
    # 8 leaves x 32 uplinks on 64-port spines: 4 spines of 8 links per leaf; a leaf type that cannot reach
    # enough spines returns None (the caller adds a tier).
    assert spread([LeafType(8, 32, 32)], 64) == (4, (32,))
    assert spread([LeafType(72, 32, 32)], 64) is None


def test_oversubscription_option_halves_uplinks(catalog):
    # 2:1 leaves: 32 down, 16 up; 8 leaves x 16 = 128 uplinks -> 2 spines of 64 ports.
    _, counts = compute(catalog, "dgx-h100", 32, ufm_links=0, compute_oversubscription=2.0)
    assert counts[:2] == (8, 2) and counts[4] == 128


def test_inference_replica_inside_one_domain_needs_no_compute_fabric(plan):
    p = plan(
        {
            "workload": "inference",
            "model": {"preset": "llama-3-8b"},
            "inference": {"requests_per_s": 50, "prompt_tokens": 1000, "output_tokens": 200},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert p["inference"]["gpus_per_replica"] <= 8
    assert p["fabric"]["compute"]["leaf"] == 0 and p["fabric"]["compute"]["cables"] == 0
    assert p["fabric"]["oob"]["leaf"] >= 1


def test_h100_su_media_are_multimode(catalog):
    # fabric.md section 7: NVIDIA's H100 SuperPOD cabling is multimode throughout (runs <= 50 m); DGX side uses
    # 4 twin-port flat-top OSFPs per node, the switch side ceil(ports / 2) finned twin-port modules.
    plan, _ = compute(catalog, "dgx-h100", 127)
    node_leaf = next(g for g in plan.compute.links if g.tier == "node-leaf")
    assert node_leaf.medium == "mmf"
    assert node_leaf.a_modules == 127 * 4
    assert node_leaf.b_modules == 32 * 16  # 32 leaves x 32 node ports / 2 per module
    assert {g.medium for g in plan.compute.links} == {"mmf"}


# Port arithmetic (engine.physical.fabric.ports), worked by hand from the switch datasheets in the catalog.
@pytest.mark.parametrize(
    ("switch", "link_gbps", "radix"),
    [
        ("qm9700", 400.0, 64),  # 64 NDR ports at their native speed
        ("qm9700", 200.0, 128),  # each 400G port splits into 2 x 200G
        ("sn5600", 400.0, 128),  # 64 x 800G -> 128 x 400G
        ("sn5600", 100.0, 256),  # split no finer than 200G: 64 x 800 / 200
        ("q3400", 200.0, 288),  # split no finer than 400G: 144 x 800 / 400
    ],
)
def test_switch_radix_at_a_link_speed(catalog, switch, link_gbps, radix):
    from engine.physical.fabric.ports import switch_radix

    assert switch_radix(catalog.parts[switch], link_gbps) == radix


@pytest.mark.parametrize(
    ("radix", "ratio", "down"),
    [
        (64, 1.0, 32),  # non-blocking: half down, half up
        (64, 4.0 / 3.0, 36),  # 36 down + ceil(36 / (4/3)) = 27 up = 63 <= 64; 37 + 28 = 65 > 64
        (64, 5.0 / 3.0, 40),  # 40 down + 24 up = 64
        (48, 3.0, 36),  # 36 + 12 = 48
    ],
)
def test_leaf_down_ports_keep_the_ratio(radix, ratio, down):
    from engine.physical.fabric.ports import leaf_down_ports

    assert leaf_down_ports(radix, ratio) == down


def test_fabric_package_keeps_its_public_names():
    import engine.physical.fabric as fabric

    assert {"Fabric", "FabricPlan", "LinkGroup", "SwitchTier", "size_fabrics", "FABRIC_SWITCH"} <= set(fabric.__all__)
    assert fabric.FABRIC_SWITCH["infiniband-ndr"] == "qm9700"


# The radix rule (issue 17): a non-blocking leaf has radix/2 ports down at the link speed; with one NIC per rail,
# that is the SU's systems per rail, and spines and cores follow from the Clos rules. Worked by hand for each switch
# generation in the catalog (ports from hardware.md section 3), UFM links left out (idealised, as Table 3 above).
def fabric_on(catalog, system_id, systems, fabric_id, **overrides):
    system = catalog.systems[system_id]
    storage = catalog.parts["ddn-ai400x2"]
    a = Assumptions(overrides=overrides)
    plan = size_fabrics(system, systems, system.systems_per_rack, storage, 1, fabric_id, True, catalog.parts, a)
    assert plan.problems == []
    return plan


# DGX B300 on Q3400 XDR: the CX-8 runs one 800G link (one plane); k = 144 -> 72 down / 72 up, 72 systems per SU,
# 8 leaves per SU. Two tiers: spines >= 8 x SUs x 72 / 144 = 4 x SUs, and must divide 72 (even spreading):
# 1 SU -> 4, 2 -> 8, 3 -> 12, 4 -> 16 does not divide 72 -> 18, 8 -> 32 -> 36, 18 SU -> 72 (k^2/2 = 10,368 ports).
@pytest.mark.parametrize(
    ("sus", "leaf", "spine"),
    [(1, 8, 4), (2, 16, 8), (3, 24, 12), (4, 32, 18), (8, 64, 36), (18, 144, 72)],
)
def test_b300_on_xdr_follows_the_radix(catalog, sus, leaf, spine):
    plan = fabric_on(catalog, "dgx-b300", sus * 72, "infiniband-xdr", ufm_links=0)
    c = plan.compute
    assert (c.link_gbps, c.radix, c.planes, c.tiers) == (800.0, 144, 1, 2)
    assert (c.leaf, c.spine, c.core) == (leaf, spine, 0)
    assert c.node_links == sus * 72 * 8 == c.leaf_spine_links  # non-blocking: every node link has an uplink
    assert plan.scalable_units == sus and plan.su_systems == 72


def test_b300_on_xdr_third_tier(catalog):
    # 19 SU: 152 leaves cannot all reach 72-uplink spines -> SU-local spines: 8 leaves x 72 up over spines with
    # 72 down -> 8 per SU (9 links per leaf), each 72 up. Cores per group: 19 x 72 / 144 = 9.5 -> 10, 11 do not
    # divide 72 -> 12 per group, 8 groups -> 96 cores. Links: 152 x 72 = 10,944 at each tier.
    plan = fabric_on(catalog, "dgx-b300", 19 * 72, "infiniband-xdr", ufm_links=0)
    c = plan.compute
    assert (c.tiers, c.leaf, c.spine, c.core) == (3, 152, 152, 96)
    assert c.node_links == c.leaf_spine_links == c.spine_core_links == 10944


def test_b300_on_xdr_ufm_displaces_one_system(catalog):
    # A 72-down leaf has no spare port, so the 4 UFM links take one system's slot (as H100 RA Table 4): SU 1 holds
    # 71 systems; node + UFM links = 71 x 8 + 4 = 572; leaf-spine = 8 x 72 = 576.
    plan = fabric_on(catalog, "dgx-b300", 71, "infiniband-xdr")
    c = plan.compute
    assert (c.leaf, c.spine, c.node_links, c.leaf_spine_links) == (8, 4, 572, 576)
    assert plan.displaced_systems == 1 and plan.scalable_units == 1


@pytest.mark.parametrize(
    ("system_id", "fabric_id", "link_gbps", "planes", "su", "spine"),
    [
        # SN5600 at 800G (roce-800g), B300 single plane: k = 64 -> 32 systems per SU; 8 x 32 / 64 = 4 spines.
        ("dgx-b300", "roce-800g", 800.0, 1, 32, 4),
        # SN5600 at 400G, B300 twin-plane (the RA's Spectrum-X design): k = 128 -> 64 per SU; per plane
        # 8 x 64 / 128 = 4 spines, 2 planes -> 8 (Table 3 above, 1 SU).
        ("dgx-b300", "roce-400g", 400.0, 2, 64, 8),
        # SN5600 at 400G, H100 (400G NIC, one plane): 64 per SU, 4 spines.
        ("dgx-h100", "roce-400g", 400.0, 1, 64, 4),
        # Q3400 split to 400G, H100: k = 288 -> 144 per SU; 8 x 144 / 288 = 4 spines (4 divides 144).
        ("dgx-h100", "infiniband-xdr", 400.0, 1, 144, 4),
        # QM9700 at 400G, H100: k = 64 -> 32 per SU (the RA's SU); 8 x 32 / 64 = 4 spines.
        ("dgx-h100", "infiniband-ndr", 400.0, 1, 32, 4),
    ],
)
def test_one_su_on_every_switch_generation(catalog, system_id, fabric_id, link_gbps, planes, su, spine):
    plan = fabric_on(catalog, system_id, su, fabric_id, ufm_links=0)
    c = plan.compute
    assert (c.link_gbps, c.planes, plan.su_systems) == (link_gbps, planes, su)
    assert (c.leaf, c.spine, c.core) == (8 * planes, spine, 0)
    assert c.node_links == su * 8 * planes


@pytest.mark.parametrize("system_id", ["dgx-h100", "dgx-h200", "dgx-b200", "dgx-b300", "hgx-h100-oem", "gb300-nvl72"])
def test_published_designs_fall_out_of_the_rule(catalog, system_id):
    # On each system's reference fabric the rule gives the catalog's published SU (H100/H200/B200 RA: 32 nodes;
    # B300 RA Spectrum-X: 64; NVL72: the RA's 8 racks) and plane count (B300/GB300: CX-8 800G as 2 x 400G).
    plan = fabric_on(catalog, system_id, catalog.systems[system_id].su_systems, "auto", ufm_links=0)
    phys = catalog.parts.systems[system_id]
    assert (plan.su_systems, plan.compute.planes) == (catalog.systems[system_id].su_systems, phys.compute_planes)


def test_a100_on_the_catalogs_ndr_switch(catalog):
    # The DGX A100 RA's 20-node SU comes from the 40-port HDR QM8790 (40 / 2 = 20), which the catalog does not
    # carry; on its QM9700 split to 200G (k = 128) the rule gives 64 systems per SU and 8 leaves for 64 systems.
    plan = fabric_on(catalog, "dgx-a100-80gb", 64, "auto", ufm_links=0)
    assert (plan.compute.link_gbps, plan.compute.radix, plan.su_systems, plan.compute.leaf) == (200.0, 128, 64, 8)
