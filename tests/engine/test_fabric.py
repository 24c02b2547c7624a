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
    plan = size_fabrics(system, systems, 8, storage, 1, "auto", True, catalog.parts, Assumptions(overrides=overrides))
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
