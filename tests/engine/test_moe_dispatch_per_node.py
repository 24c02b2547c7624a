"""A cross-node expert dispatch that sends each token once per node its experts sit on (DeepEP, Megatron-Core's
HybridEP), against a plain all-to-all that sends one copy per routed expert.

Expected values are worked out by hand: the distinct-node count from the hypergeometric law (math.comb), the bytes
from the token count, hidden size, routed experts and element size, at the catalog's DGX H100 link speeds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine import validate_request
from engine.assumptions.registry import Assumptions
from engine.performance.moe_terms import expert_alltoall_time, nodes_reached
from engine.performance.roofline import efficiency_for, hardware_for
from engine.workload.model import analyse_model


def _expected_nodes(experts: int, active: int, nodes: int) -> float:
    """nodes x P(a node holds at least one of the token's experts), experts drawn without repetition."""
    per_node = experts // nodes
    return nodes * (1.0 - math.comb(experts - per_node, active) / math.comb(experts, active))


@pytest.mark.parametrize(("experts", "active", "nodes"), [(128, 8, 2), (128, 8, 16), (256, 8, 32), (8, 2, 4)])
def test_nodes_reached_is_the_hypergeometric_expectation(experts, active, nodes):
    assert float(nodes_reached(float(experts), active, np.array([float(nodes)]))[0]) == pytest.approx(
        _expected_nodes(experts, active, nodes)
    )


def test_one_node_is_always_reached_and_more_experts_than_a_node_holds_reach_every_node():
    assert float(nodes_reached(128.0, 8, np.array([1.0]))[0]) == 1.0
    # 4 experts on 4 nodes, 2 active: a token reaches exactly 2 nodes.
    assert float(nodes_reached(4.0, 2, np.array([4.0]))[0]) == pytest.approx(2.0)


def _setup(catalog, preset: str, **assumptions):
    body = {"workload": "training", "model": {"preset": preset}, "training": {"tokens": 1e12, "gpus": 16}}
    work = analyse_model(validate_request(body, catalog).model)
    system = catalog.systems["dgx-h100"]
    gpu = catalog.gpu_of(system)
    a = Assumptions(overrides={"moe_dispatch_overlap": 0.0, **assumptions})
    return work, hardware_for(gpu, system, "fp8"), efficiency_for(gpu, "fp8", a)


def test_qwen3_30b_dispatch_over_two_dgx_h100_by_hand(catalog):
    """4,096 tokens a GPU, hidden 2,048, 8 of 128 experts, EP16 over two 8-GPU systems, FP8 dispatch with a BF16
    combine (1.5 B an element on average). Per node: the 8 experts fall on 1.992 of the 2 nodes, half of them
    remote, so 4,096 x 1.992 x 2,048 x 1.5 x 0.5 B cross at 50 GB/s x the fabric efficiency, then the 8 x 15/16
    copies go over NVLink. Plain: the 8 x 8/16 copies for the other system's experts cross the fabric, while the
    8 x 7/16 for this system's other experts go over NVLink at the same time."""
    work, hw, eff = _setup(catalog, "qwen3-30b-a3b")
    tokens, tp, ep = np.array([4096.0]), np.array([1.0]), np.array([16.0])
    copies = 4096 * 8 * 2048 * 1.5 * 15 / 16
    nvlink_s = copies / (450e9 * eff.nvlink)
    crossing = 4096 * _expected_nodes(128, 8, 2) * 2048 * 1.5 * 0.5
    per_node_s = crossing / (50e9 * eff.scaleout) + nvlink_s
    plain_s = 4096 * 8 * 2048 * 1.5 * 8 / 16 / (50e9 * eff.scaleout)
    assert plain_s > 4096 * 8 * 2048 * 1.5 * 7 / 16 / (450e9 * eff.nvlink)
    assert per_node_s < plain_s / 2  # four crossing copies a token collapse to about one
    got = float(expert_alltoall_time(work, hw, eff, tokens, tp, ep)[0])
    assert got == pytest.approx(eff.collective_latency_s + per_node_s)
    _, hw0, eff0 = _setup(catalog, "qwen3-30b-a3b", moe_dispatch_once_per_node=0)
    assert float(expert_alltoall_time(work, hw0, eff0, tokens, tp, ep)[0]) == pytest.approx(
        eff0.collective_latency_s + plain_s
    )


def test_top_two_routing_over_as_many_nodes_as_experts_keeps_the_plain_all_to_all(catalog):
    """Mixtral (2 of 8 experts) with each expert on its own node (TP8 EP8: 64 GPUs, 8 systems): a token's two
    experts are always on two different nodes, so per-node dispatch saves no fabric bytes (2 x 7/8 copies either
    way) and would add the NVLink forward; the faster, plain, all-to-all is kept."""
    assert _expected_nodes(8, 2, 8) == pytest.approx(2.0)
    work, hw, eff = _setup(catalog, "mixtral-8x7b")
    _, hw0, eff0 = _setup(catalog, "mixtral-8x7b", moe_dispatch_once_per_node=0)
    tokens, tp, ep = np.array([4096.0]), np.array([8.0]), np.array([8.0])
    assert float(expert_alltoall_time(work, hw, eff, tokens, tp, ep)[0]) == pytest.approx(
        float(expert_alltoall_time(work, hw0, eff0, tokens, tp, ep)[0])
    )


def test_top_two_routing_over_two_nodes_still_gains_from_per_node_dispatch(catalog):
    """The same model at TP2 EP8 (two systems): the two experts fall on 2 x (1 - C(4,2)/C(8,2)) = 1.57 nodes, half
    of them remote, 0.79 fabric copies a token against 2 x 7/8 = 1.75 for the plain all-to-all."""
    work, hw, eff = _setup(catalog, "mixtral-8x7b")
    _, hw0, eff0 = _setup(catalog, "mixtral-8x7b", moe_dispatch_once_per_node=0)
    tokens, tp, ep = np.array([4096.0]), np.array([2.0]), np.array([8.0])
    copies = 4096 * 2 * 4096 * 1.5 * 7 / 8
    per_node_s = 4096 * _expected_nodes(8, 2, 2) * 4096 * 1.5 * 0.5 / (50e9 * eff.scaleout) + copies / (
        450e9 * eff.nvlink
    )
    assert float(expert_alltoall_time(work, hw, eff, tokens, tp, ep)[0]) == pytest.approx(
        eff.collective_latency_s + per_node_s
    )
    assert per_node_s < float(expert_alltoall_time(work, hw0, eff0, tokens, tp, ep)[0])
