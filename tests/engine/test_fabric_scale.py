"""Never a cluster without a network (issue 17): frontier-scale clusters get a real compute fabric (more planes,
a fourth tier, or a requested oversubscribed upper tier), or the plan is infeasible with a plain reason.

Expected counts are worked by hand from the radix rule and the Clos rules (fabric.md sections 4-5), not taken
from the engine's output.
"""

from __future__ import annotations

import pytest

from engine.assumptions.registry import Assumptions
from engine.physical.fabric import size_fabrics
from engine.physical.fabric.compute import compute_fabric
from engine.physical.fabric.optics import uncovered_optics_w

QM9700_MAX_W = 1720  # NVIDIA QM9700 hardware manual: 1,720 W with optics (the catalog's power_max_w)


def fabric_on(catalog, system_id, systems, fabric_id, **overrides):
    system = catalog.systems[system_id]
    storage = catalog.parts["ddn-ai400x2"]
    a = Assumptions(overrides=overrides)
    return size_fabrics(system, systems, system.systems_per_rack, storage, 1, fabric_id, True, catalog.parts, a)


def test_100k_h100_on_ndr_gets_a_fourth_tier(catalog):
    # 12,500 DGX H100 on QM9700 at 400G (k = 64). SU = 32 systems (32 down ports / 1 NIC per rail), 8 rails ->
    # 8 leaves per SU, each 32 down / 32 up; the UFM's 4 links find no spare leaf port and displace one system:
    # ceil(12,501 / 32) = 391 SUs, 3,128 leaves.
    # Pods of 1 SU: 8 x 32 = 256 uplinks over the fewest spines that divide 32 and offer 256 down ports -> 8
    # spines (32 down each). Three tiers cannot join 391 pods: core group j would need 391 x 32 = 12,512 ports
    # but a spine's 32 uplinks reach only 32 cores (2,048 ports); pods of 2 and 4 SUs (196 and 98 pods) fail the
    # same way and 8 SUs would need 64 spines per pod (a leaf has 32 uplinks).
    # Fourth tier, pods of 1 SU: a super-pod takes 32 x 32 / 32 = 32 pods (core group j: 32 cores, 32 down /
    # 32 up); 391 pods -> 13 super-pods (12 full, 7 pods in the last, whose groups get 7 x 32 / 32 -> 8 cores,
    # the fewest dividing 32). Super-core group (j, i) joins 13 cores x 32 links = 416 -> 8 switches (the fewest
    # dividing 32 with 8 x 64 >= 416); 8 x 32 groups -> 2,048 super-cores.
    plan = fabric_on(catalog, "dgx-h100", 12_500, "infiniband-ndr")
    c = plan.compute
    assert plan.problems == []
    assert (c.tiers, c.planes, c.radix, plan.su_systems, plan.scalable_units) == (4, 1, 64, 32, 391)
    assert (c.leaf, c.spine, c.core, c.super_core) == (3_128, 3_128, 12 * 8 * 32 + 8 * 8, 2_048)
    assert c.node_links == 12_500 * 8 + 4
    assert c.leaf_spine_links == 3_128 * 32 == c.spine_core_links
    assert c.core_super_links == 12 * 8 * 32 * 32 + 8 * 8 * 28  # the last super-pod's cores: 7 x 32 / 8 = 28 up
    assert c.design == "four-tier" and c.reason.startswith("Four tiers: 391 scalable units")
    # Switch power: 11,440 QM9700 at 1,720 W (with optics) = 19.68 MW.
    switches = sum(t.count for t in c.switches)
    assert switches == 3_128 + 3_128 + 3_136 + 2_048 == 11_440
    assert switches * QM9700_MAX_W == 19_676_800


def test_100k_h100_links_and_optics_per_tier(catalog):
    # Row geometry (one row per SU, 800 mm racks, 3.6 m row pitch, 4 m slack): a row holds 32 / 4 = 8 compute
    # racks + its network rack -> end of row 9 x 0.8 + 4 = 11.2 m (multimode, 50 m); the farthest of 391 rows to
    # the central row ceil(391 / 2) x 3.6 + 9 x 0.8 / 2 + 4 = 713.2 m (past 2 x DR4's 500 m: 2 x FR4, 2 km);
    # spine-core inside the central row: ceil((3,128 + 3,136) / 32) = 196 racks x 0.8 + 4 = 160.8 m; core-super
    # ceil(8,312 / 32) = 260 racks -> 212 m (both 2 x DR4, 500 m).
    c = fabric_on(catalog, "dgx-h100", 12_500, "infiniband-ndr").compute
    tiers = {g.tier: g for g in c.links}
    assert {t: round(g.length_m, 1) for t, g in tiers.items()} == {
        "node-leaf": 11.2,
        "ufm-leaf": 11.2,
        "leaf-spine": 713.2,
        "spine-core": 160.8,
        "core-super": 212.0,
    }
    modules = {t: (g.a_module_part, g.a_modules, g.b_module_part, g.b_modules) for t, g in tiers.items()}
    # Node side: 8 x 400G per DGX in twin-port 800G cages -> 4 modules each; leaf side: ceil(100,004 / 3,128) =
    # 32 links per leaf -> 16 twin-port modules.
    assert modules["node-leaf"] == ("osfp-2xsr4-flat", 50_000, "osfp-2xsr4-finned", 3_128 * 16)
    assert modules["leaf-spine"] == ("osfp-2xfr4-finned", 3_128 * 16, "osfp-2xfr4-finned", 3_128 * 16)
    # Cores: ceil(100,096 / 3,136) = 32 links -> 16 modules; super-cores: ceil(100,096 / 2,048) = 49 -> 25.
    assert modules["spine-core"] == ("osfp-2xdr4-finned", 3_128 * 16, "osfp-2xdr4-finned", 3_136 * 16)
    assert modules["core-super"] == ("osfp-2xdr4-finned", 3_136 * 16, "osfp-2xdr4-finned", 2_048 * 25)
    assert tiers["leaf-spine"].cable_part == "fibre-smf-lc-duplex" and tiers["leaf-spine"].cable_length_m == 800
    assert tiers["spine-core"].cable_part == "fibre-smf-mpo12" and tiers["spine-core"].cable_length_m == 200
    # Optics power IT gains (QM9700's 1,720 W already covers its own modules): 50,000 DGX-side SR8 modules at
    # 15 W + the UFM pair's 2 single-port SR4 modules at 9 W = 750,018 W.
    assert uncovered_optics_w([c], catalog.parts) == pytest.approx(50_000 * 15 + 2 * 9)


def test_an_oversubscribed_upper_tier_connects_100k_h100_in_three_tiers(catalog):
    # Requested 7:1 above the spines (Meta's oversubscribed aggregation between AI zones): a spine keeps 56 ports
    # down and 8 up. Pods of 1-6 SUs fail (their spines fill 32-48 down ports and the core groups cannot take the
    # pods); pods of 7 SUs: 56 leaves x 32 = 1,792 uplinks over 32 spines (56 down, 8 up each). ceil(391 / 7) = 56
    # pods, core group j takes 56 x 8 = 448 links -> 8 cores (fewest dividing 8 with 8 x 64 >= 448); 32 groups ->
    # 256 cores. 3,128 + 1,792 + 256 = 5,176 switches instead of the non-blocking four tiers' 11,440.
    system, phys = catalog.systems["dgx-h100"], catalog.parts.systems["dgx-h100"]
    a = Assumptions(overrides={"compute_upper_oversubscription": 7.0})
    c = compute_fabric(system, phys, 12_500, "infiniband-ndr", catalog.parts, a, True).fabric
    assert (c.tiers, c.leaf, c.spine, c.core, c.super_core) == (3, 3_128, 56 * 32, 256, 0)
    assert c.leaf_spine_links == 3_128 * 32 and c.spine_core_links == 56 * 32 * 8
    assert c.design == "oversubscribed" and "Oversubscribed 7:1 above the spines" in c.reason


def test_too_big_for_four_ndr_tiers_is_infeasible_with_the_reason(catalog):
    # 300,000 DGX H100 = 2,400,000 rail ports; four tiers of k = 64 reach 2 x 32^4 = 2,097,152 per plane and a
    # ConnectX-7 400G NIC is one link in one plane. Q3400 split to 400G (k = 288) and SN5600 at 400G (k = 128)
    # would connect it.
    system, phys = catalog.systems["dgx-h100"], catalog.parts.systems["dgx-h100"]
    sized = compute_fabric(system, phys, 300_000, "infiniband-ndr", catalog.parts, Assumptions(), True)
    c = sized.fabric
    assert (c.leaf, c.spine, c.core, c.tiers) == (0, 0, 0, 0)
    (reason,) = sized.problems
    assert "2,400,000 compute ports per plane" in reason and "four tiers" in reason and "2,097,152" in reason
    assert "cannot split over more planes" in reason
    assert "infiniband-xdr" in reason and "roce-400g" in reason


def test_gb200_million_gpus_on_ndr_gets_four_tiers(catalog):
    # 13,889 NVL72 racks x 72 = 1,000,008 GPUs, 4 rails of 18 trays per rack. Per rail, per SU of 8 racks: one
    # leaf per rack (18 down, 18 up of 64). ceil(13,889 / 8) = 1,737 SUs. Four tiers are tried on the smallest pods
    # first: pods of 1 SU (8 x 18 = 144 uplinks -> 6 spines of 24 down) fit at most 32 pods under a super-pod's
    # cores, and 6,948 pods need 218 super-pods, more than a core's 32 uplinks reach (32 x 64 / 32 = 64); pods of
    # 2 and 3 SUs (109 and 73 super-pods) fail the same way. Pods of 4 SUs: 32 leaves x 18 = 576 uplinks over 18
    # spines of 32 down (16 would not divide 18); 435 pods per rail x 4 rails = 1,740 pods; a super-pod takes 32
    # pods (32 cores per group, 32 down / 32 up) -> 55 super-pods (54 full, 12 pods in the last: 12 x 32 / 32 ->
    # 16 cores per group, the fewest dividing 32). Super-core group (j, i): 55 x 32 = 1,760 links -> 32 switches
    # (the fewest dividing 32 with 64 each >= 1,760) -> 18 x 32 x 32 = 18,432 super-cores. Leaves: 13,889 x 4 =
    # 55,556 (a leaf per rack present and rail).
    system, phys = catalog.systems["gb200-nvl72"], catalog.parts.systems["gb200-nvl72"]
    sized = compute_fabric(system, phys, 13_889, "infiniband-ndr", catalog.parts, Assumptions(), True)
    c = sized.fabric
    assert sized.problems == [] and sized.scalable_units == 1_737
    assert (c.tiers, c.leaf, c.spine, c.super_core) == (4, 55_556, 1_740 * 18, 18 * 32 * 32)
    assert c.core == 54 * 18 * 32 + 18 * 16


def test_b300_million_gpus_splits_into_two_xdr_planes(catalog):
    # 125,000 DGX B300 = 1,000,000 rail ports. One plane at 800G: k = 144 reaches about 144^3/4 = 746,496 -> no.
    # The ConnectX-8 splits into 2 x 400G (catalog: 2 planes), and Q3400 ports split to 400G: k = 288 per plane,
    # 144 systems per SU; UFM's 4 links displace one system (no spare leaf port) -> ceil(125,001 / 144) = 869 SUs,
    # 869 x 8 leaves per plane x 2 planes = 13,904 leaves. More planes in three tiers come before a fourth tier.
    system, phys = catalog.systems["dgx-b300"], catalog.parts.systems["dgx-b300"]
    sized = compute_fabric(system, phys, 125_000, "infiniband-xdr", catalog.parts, Assumptions(), True)
    c = sized.fabric
    assert sized.problems == []
    assert (c.planes, c.link_gbps, c.radix, sized.su_systems, sized.scalable_units) == (2, 400.0, 288, 144, 869)
    assert c.node_links == (125_000 * 8 + 4) * 2  # systems x NICs x planes, plus UFM links in each plane
    # Per plane: pods of 1, 2, 3 SUs need 435, 218, 145 cores per group, more than a spine's 144 uplinks reach.
    # Pods of 4 SU: 32 leaves x 144 up; 32 spines do not divide 144 -> 36 (4 links per leaf, 128 down each);
    # 218 pods; cores per group >= 218 x 128 / 288 = 96.9 and dividing 128 -> 128; 36 groups -> 4,608 cores.
    assert (c.tiers, c.leaf, c.spine, c.core) == (3, 13_904, 2 * 218 * 36, 2 * 36 * 128)
    assert c.leaf_spine_links == 13_904 * 144  # every leaf's 144 uplinks
    assert c.spine_core_links == 2 * 218 * 36 * 128  # every spine's 128 uplinks (the last pod's spines built whole)
    assert any("Multi-plane" in n for n in c.notes) and c.design == "multi-plane"


def test_b300_below_the_one_plane_limit_keeps_one_plane(catalog):
    # 10,000 systems = 80,000 ports < 746,496: one 800G plane is enough; more planes are never added for free.
    plan = fabric_on(catalog, "dgx-b300", 10_000, "infiniband-xdr")
    assert (plan.compute.planes, plan.compute.link_gbps, plan.compute.design) == (1, 800.0, "fat-tree")


@pytest.mark.parametrize(
    ("gpus", "sus", "pods", "spines_per_pod", "cores"),
    [
        # 12,500 systems / 64 per SU -> 196 SUs, 1,568 leaves (64 down / 64 up). Pods of 1 SU need 196 x 64 / 128
        # = 98 cores per group, more than a spine's 64 uplinks reach -> pods of 2 SU (98 pods): 16 leaves x 64 up
        # over 64-down spines = 16 spines per pod; cores per group >= 98 x 64 / 128 = 49 and dividing 64 -> 64,
        # 16 groups -> 1,024 cores.
        (100_000, 196, 98, 16, 1024),
        # 16,384 systems -> 256 SUs, 2,048 leaves; pods of 1 SU need 128 cores per group -> pods of 2 SU (128
        # pods), 16 spines each; 128 x 64 / 128 = 64 cores per group, 16 groups -> 1,024.
        (131_072, 256, 128, 16, 1024),
    ],
)
def test_h100_on_spectrum4_at_400g_gets_three_tiers(catalog, gpus, sus, pods, spines_per_pod, cores):
    plan = fabric_on(catalog, "dgx-h100", gpus // 8, "roce-400g")
    c = plan.compute
    assert plan.problems == []
    assert (c.tiers, c.planes, c.radix, plan.su_systems, plan.scalable_units) == (3, 1, 128, 64, sus)
    assert (c.leaf, c.spine, c.core) == (sus * 8, pods * spines_per_pod, cores)
    assert c.node_links == gpus // 8 * 8  # node links = systems x NICs (one plane, no UFM on Ethernet)
    assert c.leaf_spine_links == sus * 8 * 64 == c.spine_core_links  # full SUs built, every uplink lands on a core


def test_100k_h100_plans_on_its_reference_fabric_across_halls(plan):
    """The whole chain: four tiers, racks in several halls, and every upper-tier run on an optic that spans it."""
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-405b"},
            "training": {"tokens": 15e12, "gpus": 100_000, "global_batch_tokens": 64 * 2**20},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert p["feasible"] is True and p["notes"] == []
    c = p["fabric"]["compute"]
    assert (c["tiers"], c["super_core"], c["design"]) == (4, 2_048, "four-tier")
    # 3,125 compute racks at 4 x 10.2 = 40.8 kW = 127.5 MW of GPU systems alone: at least ceil(127.5 / 32) = 4
    # halls of 32 MW, and 4 halls to a building.
    campus = p["racks"]["campus"]
    assert campus["halls"] >= 4 and campus["buildings"] == -(-campus["halls"] // 4)
    reach = {"osfp-2xsr4-flat": 50, "osfp-2xsr4-finned": 50, "osfp-2xdr4-finned": 500, "osfp-2xfr4-finned": 2000}
    for g in c["link_groups"]:
        if g["tier"] in ("leaf-spine", "spine-core", "core-super"):
            assert g["medium"] == "smf" and reach[g["to_module"]] >= g["length_m"], g
    assert p["power"]["optics_kw"] > 750  # the DGX-side modules alone: 50,000 x 15 W


def test_a_storage_fabric_beyond_three_tiers_gets_a_fourth(catalog):
    # 100,000 system ports on QM9700 at 400G, node side 4:3: a node leaf has d + ceil(3d / 4) <= 64 -> 36 down,
    # 27 up; ceil(100,000 / 36) = 2,778 node leaves (even: leaf pairs) and ceil(2,000 / 32) = 63 storage leaves.
    # Two and three tiers of radix 64 do not reach 2,841 leaves, so pods of 32 leaves (each leaf given the widest
    # need, 32 uplinks) under 32 spines: ceil(2,841 / 32) = 89 pods, 2,848 spines; a super-pod takes 32 pods ->
    # 3 super-pods (2 full: 32 x 32 cores; the last, 25 pods: 25 x 32 / 32 -> 32 cores per group, the fewest
    # dividing 32) -> 3,072 cores; super-core group: 3 x 32 = 96 links -> 2 switches, x 32 x 32 = 2,048.
    from engine.physical.fabric.edge import edge_fabric

    fab = edge_fabric("storage", catalog.parts["qm9700"], 400.0, 100_000, 4 / 3, 2_000)
    assert (fab.tiers, fab.leaf, fab.spine, fab.core, fab.super_core) == (4, 2_841, 2_848, 3_072, 2_048)
    assert fab.leaf_spine_links == 2_841 * 32 and fab.spine_core_links == 2_848 * 32
    assert fab.reason.startswith("Four tiers")
    # Past four tiers (3,000,000 ports): not built, and the reason says so instead of an assertion error.
    too_big = edge_fabric("storage", catalog.parts["qm9700"], 400.0, 3_000_000, 4 / 3, 2_000)
    assert too_big.leaf == 0 and "no design of four tiers" in too_big.reason


def test_a_run_no_optic_spans_makes_the_plan_infeasible(plan):
    """1M GB200 GPUs on XDR: 13,888 NVL72 racks at about 132 kW are about 1.8 GW of GPU systems, so at least
    ceil(1,833 / 32) = 58 halls in 15 buildings; with buildings 250 m apart the upper tier's runs pass the 500 m of
    the longest-reach 800G module in the catalog (DR class). A cluster that cannot be cabled is not a plan."""
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-405b"},
            "training": {"tokens": 15e12, "gpus": 999_936, "global_batch_tokens": 256 * 2**20},
            "hardware": {"system": "gb200-nvl72", "fabric": "infiniband-xdr"},
        }
    )
    assert p["feasible"] is False
    (problem,) = p["problems"]
    assert "no catalog medium spans" in problem
    metres = float(problem.split("spans ")[1].split(" m")[0])
    assert metres > 500
