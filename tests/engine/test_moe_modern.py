"""Mixture-of-experts as trained today (DeepSeek-V3): shared and fine-grained experts, leading dense layers,
multi-head latent attention, node-limited routing, FP8 dispatch and dispatch overlap.

Expected values are worked out by hand from the DeepSeek-V3 report's configuration (arXiv 2412.19437, section 4.2)
and from the formulas in the DeepSeek-V2 paper (arXiv 2405.04434, section 2.1), not read off the code.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine import validate_request
from engine.assumptions.registry import Assumptions
from engine.performance.moe_terms import expert_alltoall_time, moe_ffn_gemms
from engine.performance.roofline import efficiency_for, gemm_time, hardware_for
from engine.request.validation import RequestInvalid
from engine.workload.model import analyse_model

H, HEADS, VOCAB, LAYERS = 7168, 128, 129280, 61
# Per layer, by hand: MLA query 7168 x 1536 + 1536 (norm) + 1536 x 128 x 192; key-value latent 7168 x (512 + 64)
# + 512 (norm) + 512 x 128 x (128 + 128); output 128 x 128 x 7168.
MLA = 7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 + 512 * 128 * 256 + 128 * 128 * 7168
EXPERT = 3 * 7168 * 2048  # SwiGLU expert of width 2,048
DENSE_FFN = 3 * 7168 * 18432
NORMS = 2 * 7168


def _model(catalog, **model):
    body = {"workload": "training", "model": model, "training": {"tokens": 1e12, "gpus": 64}}
    return validate_request(body, catalog).model


def test_deepseek_v3_parameters_by_hand(catalog):
    work = analyse_model(_model(catalog, preset="deepseek-v3"))
    moe_layers, dense_layers = 58, 3
    routed = EXPERT * 256 * moe_layers
    replicated = (MLA + NORMS) * LAYERS + 7168 * 256 * moe_layers + EXPERT * moe_layers + DENSE_FFN * dense_layers
    embeddings = 2 * VOCAB * H + H  # untied input and output matrices, final norm
    assert work.params == routed + replicated + embeddings
    assert work.expert_params == routed
    assert work.active_params == replicated + embeddings + EXPERT * 8 * moe_layers
    # The report's 671B total and 37B active (the 14B multi-token-prediction module left out), to 0.2 % and 1.5 %:
    # it rounds, and counts the router and norms its own way.
    assert work.params == pytest.approx(671e9, rel=2e-3)
    assert work.active_params == pytest.approx(37e9, rel=1.5e-2)
    # Latent attention caches kv_lora + rope elements per layer and token: 61 x 576 x 2 B = 70,272 B in BF16.
    assert work.kv_bytes_per_token(2.0) == 70_272.0
    # Attention FLOPs use MLA's widths: 6 x layers x seq x (128 x 192 + 128 x 128) per token.
    attention = 6.0 * LAYERS * 4096 * (128 * 192 + 128 * 128)
    assert work.training_flops_per_token() == pytest.approx(6.0 * work.compute_params_active + attention)


def test_deepseek_v2_parameters_by_hand(catalog):
    """DeepSeek-V2 (arXiv 2405.04434, section 3.1): MLA as DeepSeek-V3's on a hidden size of 5,120, the first
    layer's FFN dense (12,288), then 2 shared and 160 routed experts of 1,536, 6 active; 236B total, 21B active."""
    h, layers, moe_layers = 5120, 60, 59
    mla = h * 1536 + 1536 + 1536 * 128 * 192 + h * 576 + 512 + 512 * 128 * 256 + 128 * 128 * h
    expert = 3 * h * 1536
    routed = expert * 160 * moe_layers
    replicated = (mla + 2 * h) * layers + h * 160 * moe_layers + 2 * expert * moe_layers + 3 * h * 12288
    embeddings = 2 * 102_400 * h + h
    work = analyse_model(_model(catalog, preset="deepseek-v2"))
    assert work.params == routed + replicated + embeddings == 235_741_434_880
    assert work.active_params == replicated + embeddings + 6 * expert * moe_layers == 21_375_800_320
    assert work.params == pytest.approx(236e9, rel=2e-3) and work.active_params == pytest.approx(21e9, rel=2e-2)


def test_a_tiny_fine_grained_moe_by_hand(catalog):
    """4 layers (1 dense), hidden 256, 4 heads MHA, 16 experts of 64 with 2 shared and 4 active, plain FFN."""
    shape = dict(layers=4, hidden=256, heads=4, kv_heads=4, ffn_hidden=1024, vocab=1000, seq_len=128,
                 ffn_gated=False, moe={"experts": 16, "active": 4, "shared": 2, "expert_ffn_hidden": 64,
                                        "dense_layers": 1})  # fmt: skip
    work = analyse_model(_model(catalog, **shape))
    attention, norms, expert, dense = 4 * 256 * 256, 2 * 256, 2 * 256 * 64, 2 * 256 * 1024
    router = 256 * 16
    replicated = (attention + norms) * 4 + (router + 2 * expert) * 3 + dense * 1 + 2 * 1000 * 256 + 256
    assert work.params == replicated + 16 * expert * 3
    assert work.active_params == replicated + 4 * expert * 3
    # Active FFN width of an average layer: 3 MoE layers of (4 + 2) x 64 and 1 dense layer of 1,024.
    assert work.ffn_active_width == (3 * 6 * 64 + 1024) / 4


def test_routed_experts_run_as_small_gemms_with_the_imbalance(catalog):
    """EP = 8 on 256 experts: 32 local experts, each on tokens x 8 x 8 / 256 = 1,024 of 4,096 tokens."""
    system = catalog.systems["hgx-h800"]
    gpu = catalog.gpu_of(system)
    hw, eff = hardware_for(gpu, system, "bf16"), efficiency_for(gpu, "bf16", Assumptions())
    work = analyse_model(_model(catalog, preset="deepseek-v3"))
    per_expert = gemm_time(1024.0, 7168.0, 4096.0, hw, eff) + gemm_time(1024.0, 2048.0, 7168.0, hw, eff)
    shared = gemm_time(4096.0, 7168.0, 4096.0, hw, eff) + gemm_time(4096.0, 2048.0, 7168.0, hw, eff)
    expected = 32 * per_expert * 1.1 + shared  # moe_load_imbalance 1.1
    assert float(moe_ffn_gemms(work, hw, eff, 4096.0, 1.0, 8.0)) == pytest.approx(expected, rel=1e-12)


def test_node_limit_fp8_and_overlap_cut_the_exposed_all_to_all(catalog):
    """EP 64 (8 nodes of 8): plain routing sends 8 copies per token, 7/8 of them to the other nodes' experts over
    the NICs (the 7/64 for this node's other experts go over NVLink at the same time); node-limited routing (4
    nodes) sends 4 copies x 7/8 (the share on other nodes) over the NICs and
    forwards the 8 x 63/64 copies inside nodes over NVLink. Plain routing here is the plain all-to-all dispatcher
    (a per-node one is covered in tests/engine/test_moe_dispatch_per_node.py)."""
    system = catalog.systems["hgx-h800"]
    gpu = catalog.gpu_of(system)
    a = Assumptions(overrides={"moe_dispatch_once_per_node": 0})
    hw, eff = hardware_for(gpu, system, "bf16"), efficiency_for(gpu, "bf16", a)
    plain = analyse_model(
        _model(
            catalog,
            preset="deepseek-v3",
            moe={"experts": 256, "active": 8, "shared": 1, "expert_ffn_hidden": 2048, "dense_layers": 3},
        )
    )
    limited = analyse_model(_model(catalog, preset="deepseek-v3"))  # node_limit 4
    tokens, element = 4096.0, 2.0
    nic = hw.scaleout_bytes_s * eff.scaleout
    nvl = hw.nvlink_bytes_s * eff.nvlink
    t_plain = eff.collective_latency_s + tokens * 8 * H * element * 7 / 8 / nic
    assert tokens * 8 * H * element * 7 / 8 / nic > tokens * 8 * H * element * 7 / 64 / nvl
    t_limited = (
        eff.collective_latency_s + tokens * 4 * H * element * 7 / 8 / nic + tokens * 8 * H * element * 63 / 64 / nvl
    )
    assert float(expert_alltoall_time(plain, hw, eff, tokens, 1.0, 64.0)) == pytest.approx(t_plain, rel=1e-12)
    assert float(expert_alltoall_time(limited, hw, eff, tokens, 1.0, 64.0)) == pytest.approx(t_limited, rel=1e-12)
    assert t_limited < t_plain
    # FP8 dispatch (1 B) with a BF16 combine (2 B): 1.5 B per element on average.
    fp8 = dataclasses.replace(eff, fp8=True)
    t_fp8 = eff.collective_latency_s + tokens * 8 * H * 1.5 * 7 / 8 / nic
    assert float(expert_alltoall_time(plain, hw, fp8, tokens, 1.0, 64.0)) == pytest.approx(t_fp8, rel=1e-12)
    # DualPipe-style overlap hides 95 %: 5 % of the time stays exposed when hiding is free; ep = 1 costs nothing.
    hidden = dataclasses.replace(eff, moe_dispatch_overlap=0.95, moe_dispatch_sm_fraction=0.0)
    assert float(expert_alltoall_time(plain, hw, hidden, tokens, 1.0, 64.0)) == pytest.approx(0.05 * t_plain)
    # Hiding is not free when the dispatch kernels hold 20 of 132 SMs (DeepSeek-V3, section 3.2.2): the compute
    # under the hidden 95 % slows by 20/132, so the step pays 0.05 + 0.95 x 20/132 = 0.19394 of the time.
    taxed = dataclasses.replace(hidden, moe_dispatch_sm_fraction=20 / 132)
    expected = (0.05 + 0.95 * 20 / 132) * t_plain
    assert float(expert_alltoall_time(plain, hw, taxed, tokens, 1.0, 64.0)) == pytest.approx(expected)
    # With nothing hidden (Megatron-Core's default dispatcher) the SM share changes nothing.
    exposed = dataclasses.replace(eff, moe_dispatch_overlap=0.0, moe_dispatch_sm_fraction=20 / 132)
    assert float(expert_alltoall_time(plain, hw, exposed, tokens, 1.0, 64.0)) == pytest.approx(t_plain)
    assert float(expert_alltoall_time(plain, hw, eff, tokens, 1.0, np.array([1.0]))[0]) == 0.0


@pytest.mark.parametrize(
    ("moe", "field"),
    [
        ({"experts": 8, "active": 2, "dense_layers": 32}, "model.moe.dense_layers"),
        ({"experts": 8, "active": 2, "shared": -1}, "model.moe.shared"),
        ({"experts": 8, "active": 2, "node_limit": 0}, "model.moe.node_limit"),
        ({"experts": 8, "active": 2, "expert_ffn_hidden": 0}, "model.moe.expert_ffn_hidden"),
        ({"experts": 8, "active": 9}, "model.moe.active"),
    ],
)
def test_impossible_moe_shapes_are_field_errors(catalog, moe, field):
    body = {"workload": "training", "model": {"preset": "llama-3-8b", "moe": moe},
            "training": {"tokens": 1e12, "gpus": 64}}  # fmt: skip
    with pytest.raises(RequestInvalid) as info:
        validate_request(body, catalog)
    assert field in info.value.errors, info.value.errors
