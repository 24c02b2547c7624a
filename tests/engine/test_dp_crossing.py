"""Data-parallel rings that cross systems: NCCL sends each channel across through a different GPU's NIC, so a group
with m ranks in each system crosses on m NICs at once (dp_comm.crossing_bandwidth).

Hand figures: DGX H100 NVLink 900 GB/s both ways = 450 GB/s per direction, one 400 Gb/s NIC per GPU = 50 GB/s.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.assumptions.registry import Assumptions
from engine.performance.dp_comm import crossing_bandwidth, dp_collectives, dp_ranks_per_system
from engine.performance.roofline import efficiency_for, hardware_for

NVLINK, NIC = 450e9, 50e9


@pytest.mark.parametrize(
    ("ranks_per_system", "expected"),
    [
        (1, 50e9),  # tensor parallelism fills the system: one NIC per crossing, as a rail-only ring
        (2, 100e9),  # two ranks per system cross on two NICs
        (8, 400e9),  # FSDP over whole DGX systems: the node's eight NICs, 3,200 Gb/s
        (72, 450e9 * 72 / 71),  # a rack-scale domain: NVLink carries 71/72 of each share and is the slower
    ],
)
def test_crossing_bandwidth_by_hand(ranks_per_system, expected):
    got = crossing_bandwidth(NVLINK, NIC, np.array([float(ranks_per_system)]))
    assert float(got[0]) == pytest.approx(expected, rel=1e-12)


def test_fsdp_gather_over_two_dgx_h100_uses_both_nodes_nics(catalog):
    system = catalog.systems["dgx-h100"]
    gpu = catalog.gpu_of(system)
    hw = hardware_for(gpu, system, "bf16")
    eff = efficiency_for(gpu, "bf16", Assumptions())
    assert hw.nvlink_bytes_s == NVLINK and hw.scaleout_bytes_s == NIC
    # 16 ranks (TP1) on 2 systems, 8 per system; 8e9 parameters, 16 GB of 16-bit weights to all-gather.
    dense = np.array([8e9])
    ar, rs, ag = dp_collectives(NIC, np.array([False]), np.array([16.0]), dense, 2.0 * dense, hw, eff,
                                np.array([8.0]), np.array([1.0]))  # fmt: skip
    bandwidth = min(8 * NIC * eff.scaleout, NVLINK * eff.nvlink * 8 / 7)
    grads = 8e9 * eff.grad_reduce_bytes_per_param
    # Ring latency with NCCL's constants (10 us start, 3.4 us an NVLink step, 14 us a network step): an
    # all-gather or reduce-scatter takes 15 steps, 1 of them between the two systems: 10 + 14 x 3.4 + 14 =
    # 71.6 us; an all-reduce's ring would take 30 (2 across), but its tree takes 2 x (7 x 3.4 + log2(2) x 14)
    # + 10 = 85.6 us.
    assert (eff.collective_latency_s, eff.ring_step_nvlink_s, eff.ring_step_network_s) == pytest.approx(
        (10e-6, 3.4e-6, 14e-6)
    )
    half, reduce = 71.6e-6, 85.6e-6
    assert float(ag[0]) == pytest.approx(half + 15 / 16 * 16e9 / bandwidth, rel=1e-12)
    assert float(rs[0]) == pytest.approx(half + 15 / 16 * grads / bandwidth, rel=1e-12)
    assert float(ar[0]) == pytest.approx(reduce + 2 * 15 / 16 * grads / bandwidth, rel=1e-12)
    # The same group with tensor parallelism filling each system (one rank per system) crosses on one NIC: 8x
    # the NIC-bound time, and every one of its 15 steps crosses the network (10 + 15 x 14 = 220 us).
    _, _, one_nic = dp_collectives(NIC, np.array([False]), np.array([16.0]), dense, 2.0 * dense, hw, eff,
                                   np.array([1.0]), np.array([1.0]))  # fmt: skip
    assert float(one_nic[0]) == pytest.approx(220e-6 + 15 / 16 * 16e9 / (NIC * eff.scaleout))
    assert float(one_nic[0]) > 7 * float(ag[0])
    # In 80 chunks (a layer each) every chunk pays the start and the hops again; the bytes are the same.
    _, _, chunked = dp_collectives(NIC, np.array([False]), np.array([16.0]), dense, 2.0 * dense, hw, eff,
                                   np.array([8.0]), np.array([80.0]))  # fmt: skip
    assert float(chunked[0]) == pytest.approx(80 * half + 15 / 16 * 16e9 / bandwidth, rel=1e-12)


@pytest.mark.parametrize(
    ("tp", "cp", "pp", "dpc", "gpus_per_system", "expected"),
    [
        (8, 1, 16, 128, 8, 1),  # Llama 3 405B on DGX H100: tensor parallelism fills each system
        (1, 1, 1, 16, 8, 8),  # FSDP over two DGX systems: all eight GPUs of each are ranks of the group
        (2, 2, 1, 8, 8, 4),  # tp2 cp2 dp4 on DGX: a system holds two replicas of 4 GPUs, each with its 2 cp ranks
        (4, 1, 4, 32, 8, 1),  # tp4 pp4: a replica spans two systems; each holds one rank of a stage's group
        (4, 4, 1, 16, 8, 2),  # tp4 cp4: a replica spans two systems; each holds 2 of its 4 cp ranks
        (2, 1, 1, 64, 72, 36),  # Llama 3.1 405B, TP2 FSDP over 64 ranks on GB200 NVL72 racks
        (4, 1, 16, 4, 72, 1),  # tp4 pp16 = 64 GPUs per replica: one replica per rack
        (1, 2, 1, 1024, 72, 72),  # tp1 cp2 over many racks: every GPU of a rack is a rank of the group
        (1, 1, 1, 4, 72, 4),  # never more than the group itself
    ],
)
def test_ranks_of_a_group_per_system_by_hand(tp, cp, pp, dpc, gpus_per_system, expected):
    got = dp_ranks_per_system(np.array([float(tp)]), np.array([float(cp)]), np.array([float(pp)]),
                              np.array([float(dpc)]), gpus_per_system)  # fmt: skip
    assert float(got[0]) == expected
