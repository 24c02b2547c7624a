"""MoE parallel folding: whole experts on the tensor-parallel ranks (expert tensor parallelism 1), as NVIDIA's
Megatron-Bridge MoE recipes run (expert_tensor_parallel_size = 1), beside experts split over them (etp = tp).

Expected values are worked out by hand from Megatron-Core's rule ep x etp x expert-dp = tp x cp x dp and the
Qwen3 235B-A22B shape (hidden 4,096, 128 experts of 1,536, 8 active, 94 layers), not read off the code.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine import run_plan, to_json, validate_request
from engine.assumptions.registry import Assumptions
from engine.performance.moe_terms import moe_ffn_gemms
from engine.performance.roofline import efficiency_for, gemm_time, hardware_for
from engine.performance.step_time import layout_costs
from engine.request.validation import RequestInvalid
from engine.workload.model import analyse_model

QWEN = {"preset": "qwen3-235b-a22b"}


def _body(parallelism: dict, gpus: int = 256, model: dict | None = None) -> dict:
    return {
        "workload": "training",
        "model": model or QWEN,
        "hardware": {"system": "dgx-h100"},
        "training": {"tokens": 1e11, "gpus": gpus, "precision": "fp8", "parallelism": parallelism},
    }


def _setup(catalog):
    work = analyse_model(validate_request(_body({}), catalog).model)
    system = catalog.systems["dgx-h100"]
    gpu = catalog.gpu_of(system)
    return work, hardware_for(gpu, system, "fp8"), efficiency_for(gpu, "fp8", Assumptions())


def test_folded_expert_gemms_are_whole_experts_on_a_tp_share_of_the_tokens(catalog):
    """TP2 EP32 folded, 4,096 tokens a micro-batch: each rank dispatches 2,048; a local expert (128 / 32 = 4 of
    them) gets 2,048 x 8 x 32 / 128 = 4,096 tokens at full width (gate+up 3,072, down 1,536). Split over TP2 with
    EP16 (the same 32 GPUs an expert layer spans): 8 local experts of 4,096 tokens at half width."""
    work, hw, eff = _setup(catalog)
    tokens, tp = np.array([4096.0]), np.array([2.0])
    one_expert = gemm_time(np.array([4096.0]), 4096.0, np.array([3072.0]), hw, eff) + gemm_time(
        np.array([4096.0]), np.array([1536.0]), 4096.0, hw, eff
    )
    folded = moe_ffn_gemms(work, hw, eff, tokens, tp, np.array([32.0]), np.array([1.0]))
    assert folded == pytest.approx(4 * one_expert * eff.moe_load_imbalance)
    half = gemm_time(np.array([4096.0]), 4096.0, np.array([1536.0]), hw, eff) + gemm_time(
        np.array([4096.0]), np.array([768.0]), 4096.0, hw, eff
    )
    split = moe_ffn_gemms(work, hw, eff, tokens, tp, np.array([16.0]))
    assert split == pytest.approx(8 * half * eff.moe_load_imbalance)


def test_folded_experts_are_sharded_over_ep_alone_and_share_the_data_parallel_ranks(catalog):
    """Per GPU, one layer's routed experts (128 x 3 x 4,096 x 1,536 parameters) / ep when folded, / (ep x tp) when
    split; the ranks holding the same experts are dp x cp x tp / ep folded (divisor ep x etp / tp = 16), dp x cp / ep
    split (divisor 32)."""
    work, hw, eff = _setup(catalog)
    ones = np.ones(2)
    tp, ep = np.array([2.0, 2.0]), np.array([32.0, 32.0])
    lay = layout_costs(work, hw, eff, tp, ones, ones, ones, np.zeros(2), ep, fold=np.array([1, 0]))
    expert_layer = 128 * 3 * 4096 * 1536 * work.params / work.params_derived
    assert lay.expert_params_per_gpu[0] == pytest.approx(94 * expert_layer / 32)
    assert lay.expert_params_per_gpu[1] == pytest.approx(94 * expert_layer / 64)
    assert list(lay.expert_dp_divisor) == [16.0, 32.0]
    assert list(lay.etp) == [1.0, 2.0]


def test_the_published_qwen3_235b_h100_layout_plans_with_folded_experts(catalog):
    """TP2 PP8 EP32 on 256 H100: dp = 16, so 32 expert ranks fit only folded over TP2 x DP16."""
    body = _body({"tp": 2, "pp": 8, "cp": 1, "ep": 32, "etp": 1, "interleave": 4, "micro_batch": 1})
    training = to_json(run_plan(validate_request(body, catalog), catalog))["training"]
    assert training["parallelism"]["dp"] == 16
    assert training["parallelism"]["etp"] == 1 and training["parallelism"]["ep"] == 32
    with pytest.raises(RequestInvalid) as caught:
        validate_request(_body({"tp": 2, "pp": 8, "ep": 32, "etp": 2, "dp": 16}), catalog)
    assert "training.parallelism.ep (32) must divide training.parallelism.dp (16)" in str(caught.value)


def test_the_search_folds_when_only_folding_fits_the_pins(catalog):
    """Pinned TP2 EP32 on 256 GPUs with pp 8 and etp left to the search: only the folded layout exists."""
    body = _body({"tp": 2, "pp": 8, "ep": 32})
    training = to_json(run_plan(validate_request(body, catalog), catalog))["training"]
    assert training["parallelism"]["etp"] == 1


@pytest.mark.parametrize(
    ("parallelism", "model", "words"),
    [
        ({"tp": 2, "etp": 4}, None, "must be 1 (experts folded over the tensor-parallel ranks) or equal to"),
        ({"etp": 2}, None, "or equal to training.parallelism.tp (not pinned)"),
        ({"etp": 1}, {"preset": "llama-3-8b"}, "needs a mixture-of-experts model"),
        ({"etp": 0}, None, "must be > 0"),
        ({"etp": 1.5}, None, "must be a whole number"),
    ],
)
def test_bad_etp_is_a_field_error(catalog, parallelism, model, words):
    with pytest.raises(RequestInvalid) as caught:
        validate_request(_body(parallelism, model=model), catalog)
    assert "training.parallelism.etp" in str(caught.value)
    assert words in str(caught.value)


def test_dense_plans_report_no_expert_tensor_parallelism(catalog):
    body = _body({}, gpus=16, model={"preset": "llama-3-8b"})
    assert to_json(run_plan(validate_request(body, catalog), catalog))["training"]["parallelism"]["etp"] is None


def test_a_folded_expert_group_spans_ep_gpus_alone(catalog):
    """DeepSeek-V3 at TP8 EP128: split, an expert group spans 128 x 8 = 1,024 GPUs (over the 512 cap); folded, 128."""
    folded = {"tp": 8, "pp": 1, "ep": 128, "etp": 1}
    assert validate_request(_body(folded, gpus=4096, model={"preset": "deepseek-v3"}), catalog)
    with pytest.raises(RequestInvalid) as caught:
        validate_request(_body({**folded, "etp": 8}, gpus=4096, model={"preset": "deepseek-v3"}), catalog)
    assert "training.parallelism.ep x tp (1024) must be at most 512 GPUs per expert group" in str(caught.value)


def test_searched_folding_spans_the_tensor_parallel_ranks():
    """The grid pairs folding with tp > 1 and ep >= tp only (a pinned etp 1 keeps every ep, and no split layout
    where tp > 1)."""
    from engine.search.grid import GridOptions, layout_grid

    opt = GridOptions(tps=(1, 2, 4), pps=(1,), mbs=(1,), rcs=(0,), eps=(1, 2, 4, 8), cps=(1,), interleave=1,
                      first_layers=None, last_layers=None, folds=(0, 1))  # fmt: skip
    g = layout_grid(8, opt)
    folded = {(int(t), int(e)) for t, e, f in zip(g["tp"], g["ep"], g["fold"], strict=True) if f}
    assert folded == {(2, 2), (2, 4), (2, 8), (4, 4), (4, 8)}
    pinned = layout_grid(8, GridOptions(**{**opt.__dict__, "fold_only": True}))
    kept = {(int(t), int(e), int(f)) for t, e, f in zip(pinned["tp"], pinned["ep"], pinned["fold"], strict=True)}
    assert all(f == 1 or t == 1 for t, _e, f in kept)
    assert (4, 2, 1) in kept  # a pinned etp 1 with fewer expert ranks than tp is honoured
