"""Never a cluster without a network (issue 17): frontier-scale clusters get a real compute fabric, with more
planes when one plane would need a fourth tier, or the plan is infeasible with a plain reason.

Expected counts are worked by hand from the radix rule and the Clos rules (fabric.md sections 4-5), not taken
from the engine's output.
"""

from __future__ import annotations

import pytest

from engine.assumptions.registry import Assumptions
from engine.physical.fabric import size_fabrics


def fabric_on(catalog, system_id, systems, fabric_id, **overrides):
    system = catalog.systems[system_id]
    storage = catalog.parts["ddn-ai400x2"]
    a = Assumptions(overrides=overrides)
    return size_fabrics(system, systems, system.systems_per_rack, storage, 1, fabric_id, True, catalog.parts, a)


@pytest.mark.parametrize("gpus", [100_000, 131_072])
def test_h100_beyond_three_ndr_tiers_is_an_explicit_problem(catalog, gpus):
    # QM9700 at 400G: k = 64, three tiers reach about k^3/4 = 65,536 ports per plane; 100,000 and 131,072 rail
    # ports do not fit, and a ConnectX-7 400G NIC is one link in one plane (no multi-plane design is published).
    plan = fabric_on(catalog, "dgx-h100", gpus // 8, "infiniband-ndr")
    c = plan.compute
    assert (c.leaf, c.spine, c.core, c.tiers) == (0, 0, 0, 0)
    reason = next(p for p in plan.problems if "compute ports per plane" in p)
    assert f"{gpus:,} compute ports per plane" in reason and "65,536" in reason
    assert "cannot split over more planes" in reason
    # SN5600 at 400G (k = 128, about 524,288 per plane) and Q3400 split to 400G (k = 288) would connect it.
    assert "roce-400g" in reason and "infiniband-xdr" in reason


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
    assert plan.problems == [] or all("medium" in p for p in plan.problems)
    assert (c.tiers, c.planes, c.radix, plan.su_systems, plan.scalable_units) == (3, 1, 128, 64, sus)
    assert (c.leaf, c.spine, c.core) == (sus * 8, pods * spines_per_pod, cores)
    assert c.node_links == gpus // 8 * 8  # node links = systems x NICs (one plane, no UFM on Ethernet)
    assert c.leaf_spine_links == sus * 8 * 64 == c.spine_core_links  # full SUs built, every uplink lands on a core


def test_b300_million_gpus_splits_into_two_xdr_planes(catalog):
    # 125,000 DGX B300 = 1,000,000 rail ports. One plane at 800G: k = 144 reaches about 144^3/4 = 746,496 -> no.
    # The ConnectX-8 splits into 2 x 400G (catalog: 2 planes), and Q3400 ports split to 400G: k = 288 per plane,
    # 144 systems per SU; UFM's 4 links displace one system (no spare leaf port) -> ceil(125,001 / 144) = 869 SUs,
    # 869 x 8 leaves per plane x 2 planes = 13,904 leaves. (Requests stop at max_cluster_gpus = 131,072 and the
    # OOB network is not yet sized for a million GPUs, so the compute stage is called directly.)
    from engine.physical.fabric.compute import compute_fabric

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
    assert any("Multi-plane" in n for n in c.notes)


def test_b300_below_the_one_plane_limit_keeps_one_plane(catalog):
    # 10,000 systems = 80,000 ports < 746,496: one 800G plane is enough; more planes are never added for free.
    plan = fabric_on(catalog, "dgx-b300", 10_000, "infiniband-xdr")
    assert (plan.compute.planes, plan.compute.link_gbps) == (1, 800.0)


def test_a_plan_without_a_network_is_infeasible(plan):
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-405b"},
            "training": {"tokens": 15e12, "gpus": 100_000},
            "hardware": {"system": "dgx-h100"},
        }
    )
    assert p["feasible"] is False
    assert any("100,000 compute ports per plane" in problem for problem in p["problems"])


def test_the_same_cluster_on_a_higher_radix_fabric_is_feasible(plan):
    p = plan(
        {
            "workload": "training",
            "model": {"preset": "llama-3-405b"},
            "training": {"tokens": 15e12, "gpus": 100_000},
            "hardware": {"system": "dgx-h100", "fabric": "roce-400g"},
        }
    )
    assert p["feasible"] is True
    c = p["fabric"]["compute"]
    assert min(c["leaf"], c["spine"], c["core"]) > 0 and c["node_links"] == 12_500 * 8
