"""Fused attention by head size: 64-wide heads run slower than 128-wide ones for the same FLOPs.

Expected ratios come from the assumption's published figures (Shah et al., 'FlashAttention-3', arXiv 2407.08608,
Figure 5: the Hopper kernels run 64-wide heads at 0.67-0.76 of their 128-wide speed, the stored 0.72; FlashAttention-2
at 0.87-0.89, Ampere's stored 0.88), worked by hand below, not read off the code.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.assumptions.registry import Assumptions
from engine.performance.roofline import attention_head_speed, efficiency_for, hardware_for
from engine.performance.step_time import _layer_forward
from engine.request.spec import ModelSpec
from engine.workload.model import analyse_model

# Two models alike in every GEMM and in attention FLOPs (query, key and value widths are all 4,096): 32 heads of 128
# against 64 heads of 64. Only the fused kernel's head size differs.
WIDE = ModelSpec(layers=2, hidden=4096, heads=32, kv_heads=32, ffn_hidden=11008, vocab=32000, seq_len=4096)
NARROW = WIDE.model_copy(update={"heads": 64, "kv_heads": 64})


def _efficiency(catalog, system_id: str):
    system = catalog.systems[system_id]
    gpu = catalog.gpu_of(system)
    return hardware_for(gpu, system, "bf16"), efficiency_for(gpu, "bf16", Assumptions())


@pytest.mark.parametrize(
    ("head_dim", "speed"),
    [
        (64, 0.72),  # the published ratio itself
        (96, 0.86),  # halfway: 0.72 + 0.28 x 32/64
        (80, 0.79),  # a quarter of the way: 0.72 + 0.28 x 16/64
        (128, 1.0),  # the fitted attention speed
        (192, 1.0),  # wider heads get no credit (DeepSeek's 192-wide query-key heads)
        (32, 0.72),  # narrower than any published figure: held at the 64-wide one
    ],
)
def test_speed_interpolates_between_64_and_128(catalog, head_dim, speed):
    _hw, eff = _efficiency(catalog, "dgx-h100")
    assert eff.attention_head64_ratio == 0.72
    assert attention_head_speed(head_dim, eff) == pytest.approx(speed, abs=1e-12)


@pytest.mark.parametrize(("system_id", "ratio"), [("dgx-h100", 0.72), ("dgx-b200", 0.72), ("dgx-a100-80gb", 0.88)])
def test_narrow_heads_take_longer_by_the_generation_ratio(catalog, system_id, ratio):
    """Same FLOPs, same kernel launches: the narrow model's attention (forward and backward) less its launch
    overhead is the wide one's divided by the generation's ratio; every other part of the layer is the same."""
    hw, eff = _efficiency(catalog, system_id)
    one = np.array([1.0])
    wide = _layer_forward(analyse_model(WIDE), hw, eff, one, one, one, one)
    narrow = _layer_forward(analyse_model(NARROW), hw, eff, one, one, one, one)
    launch = eff.kernel_overhead_s
    assert (narrow.attention[0] - launch) == pytest.approx((wide.attention[0] - launch) / ratio, rel=1e-12)
    assert narrow.attention_backward[0] / wide.attention_backward[0] == pytest.approx(
        narrow.attention[0] / wide.attention[0], rel=1e-12
    )
    assert narrow.gemm[0] == pytest.approx(wide.gemm[0], rel=1e-12)
    assert narrow.elementwise[0] == pytest.approx(wide.elementwise[0], rel=1e-12)


def test_only_the_fused_kernel_reads_the_ratio(catalog):
    """Without a fused kernel the scores go through HBM and its speed does not depend on the head size: changing
    the ratio moves the fused attention of 64-wide heads and leaves the unfused one as it was."""
    hw, eff = _efficiency(catalog, "dgx-h100")
    one = np.array([1.0])
    work = analyse_model(NARROW)

    def attention(**change):
        return _layer_forward(work, hw, dataclasses.replace(eff, **change), one, one, one, one).attention[0]

    assert attention(flash_attention=False, attention_head64_ratio=0.5) == attention(flash_attention=False)
    launch = eff.kernel_overhead_s
    assert attention(attention_head64_ratio=0.36) - launch == pytest.approx(2.0 * (attention() - launch), rel=1e-12)
