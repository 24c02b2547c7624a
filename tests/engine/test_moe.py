"""Mixture-of-experts training with expert parallelism (ep).

Expected values are worked by hand from the model shapes (Mixtral's published config) and the all-to-all
volume formula, never copied from the engine's output. (While ep was added, dense plans were checked to be
unchanged against a snapshot of the engine's own output; that snapshot is not kept as a test, since a test of
copied output would block every later calibration change. Dense models never get ep > 1: a test below.)
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from engine import RequestInvalid, validate_request
from engine.assumptions.registry import Assumptions
from engine.performance.memory import GIB, expert_params_per_gpu, params_per_gpu, training_memory
from engine.performance.step_time import efficiency_for, expert_alltoall_bytes, hardware_for, layout_costs
from engine.search.layouts import TrainingSearch
from engine.workload.model import analyse_model
from tests.samples import TRAINING_REQUEST

# Mixtral 8x7B (mistralai/Mixtral-8x7B-v0.1 config): 32 layers, hidden 4096, SwiGLU ffn 14336, 8 experts, top-2.
# Expert weights: 32 layers x 8 experts x 3 matrices x 4096 x 14336 = 45,097,156,608 parameters.
MIXTRAL_8X7B_EXPERT_PARAMS = 32 * 8 * 3 * 4096 * 14336
assert MIXTRAL_8X7B_EXPERT_PARAMS == 45_097_156_608
# Everything else (attention 2h^2 + 2h x 1024 per layer, router, norms, embedding and head): 46.70B - 45.10B.
MIXTRAL_8X7B_DENSE_PARAMS = 46_702_792_704 - MIXTRAL_8X7B_EXPERT_PARAMS

# Dense requests of different shapes, systems and modes: none of them may ever be given ep > 1.
DENSE_REQUESTS = {
    "sample_70b_auto": copy.deepcopy(TRAINING_REQUEST),
    "405b_16k_auto": {
        "workload": "training",
        "model": {"preset": "llama-3-405b"},
        "training": {"tokens": 15e12, "gpus": 16384, "global_batch_tokens": 16 * 2**20},
        "hardware": {"system": "auto"},
    },
    "8b_h100_64": {
        "workload": "training",
        "model": {"preset": "llama-3-8b"},
        "training": {"tokens": 1e12, "gpus": 64},
        "hardware": {"system": "dgx-h100"},
    },
    "70b_nvl72_deadline": {
        "workload": "training",
        "model": {"preset": "llama-3-70b"},
        "training": {"tokens": 15e12, "deadline_days": 60},
        "hardware": {"system": "gb200-nvl72"},
    },
}


def _mixtral(gpus: int | None = 1024, system: str = "dgx-h100", **parallelism) -> dict:
    training: dict = {"tokens": 2e12, "parallelism": parallelism}
    if gpus is None:
        training["deadline_days"] = 30
    else:
        training["gpus"] = gpus
    return {
        "workload": "training",
        "model": {"preset": "mixtral-8x7b", "seq_len": 4096},
        "training": training,
        "hardware": {"system": system},
    }


def _errors(catalog, body: dict) -> dict[str, list[str]]:
    with pytest.raises(RequestInvalid) as exc:
        validate_request(body, catalog)
    return exc.value.errors


def test_ep_is_never_chosen_for_dense_models(plan, catalog):
    for body in DENSE_REQUESTS.values():
        t = plan(copy.deepcopy(body))["training"]
        assert t["parallelism"]["ep"] == 1
        assert t["step_breakdown_s"]["expert_all_to_all"] == 0.0
        assert all(point["parallelism"]["ep"] == 1 for point in t["frontier"])
    request = validate_request(copy.deepcopy(DENSE_REQUESTS["8b_h100_64"]), catalog)
    system = catalog.systems["dgx-h100"]
    search = TrainingSearch(
        analyse_model(request.model), request.training, system, catalog.gpu_of(system), Assumptions()
    )
    assert search.ep_options() == [1]
    assert set(search.layouts.ep.tolist()) == {1.0}


# ------------------------------------------------------------------------------------------- hand-worked figures


def test_alltoall_bytes_small_case_by_hand():
    # 2 sequences x 2048 tokens = 4096 tokens, hidden 1024, top-2 routing, ep = 4, bf16:
    # every token goes to 2 experts as a 1024 x 2 B vector = 4096 x 2 x 2048 B = 16,777,216 B of copies,
    # and 3 of the 4 expert GPUs are remote: 16,777,216 x 3/4 = 12,582,912 B leave (and arrive at) each GPU.
    assert expert_alltoall_bytes(4096, 1024, 2, 4) == 12_582_912
    assert expert_alltoall_bytes(4096, 1024, 2, 1) == 0.0
    # ep = 8: 7/8 of 16,777,216 = 14,680,064.
    assert expert_alltoall_bytes(4096, 1024, 2, np.array([8]))[0] == 14_680_064


def test_alltoall_time_uses_nvlink_inside_the_domain_else_the_nics(catalog, shape_of):
    """Four all-to-alls per layer (dispatch + combine, forward and backward) on the link the ep x tp group uses,
    with a plain all-to-all dispatcher (tests/engine/test_moe_dispatch_per_node.py covers the per-node one)."""
    work = analyse_model(shape_of("mixtral-8x7b"))  # seq 32768, micro-batch 1 -> 32,768 tokens
    system = catalog.systems["dgx-h100"]
    gpu = catalog.gpu_of(system)
    plain = Assumptions(overrides={"moe_dispatch_once_per_node": 0})
    hw, eff = hardware_for(gpu, system, "bf16"), efficiency_for(gpu, "bf16", plain)
    one = np.ones(3)
    tp = np.array([1.0, 2.0, 1.0])
    ep = np.array([8.0, 8.0, 1.0])
    lay = layout_costs(work, hw, eff, tp, one, one, one, np.zeros(3), ep)
    # ep = 8, tp = 1: 8 GPUs fit the 8-GPU NVLink domain. Bytes: 32768 x 2 x 4096 x 2 B x 7/8.
    nvlink_bytes = 32768 * 2 * 4096 * 2 * 7 / 8
    a2a_nvlink = eff.collective_latency_s + nvlink_bytes / (hw.nvlink_bytes_s * eff.nvlink)
    assert lay.ep_comm_time_s[0] == pytest.approx(32 * 4 * a2a_nvlink, rel=1e-12)
    # ep = 8, tp = 2: 16 GPUs over two systems; sequence parallelism halves each rank's tokens. Of a GPU's 8 expert
    # ranks 4 are on the other system: half the copies cross the NICs, while 3/8 go to this system's other expert
    # ranks over NVLink at the same time (much the shorter).
    nic_bytes = 16384 * 2 * 4096 * 2 * 1 / 2
    assert nic_bytes / hw.scaleout_bytes_s > 16384 * 2 * 4096 * 2 * 3 / 8 / hw.nvlink_bytes_s
    a2a_nic = eff.collective_latency_s + nic_bytes / (hw.scaleout_bytes_s * eff.scaleout)
    assert lay.ep_comm_time_s[1] == pytest.approx(32 * 4 * a2a_nic, rel=1e-12)
    assert lay.ep_comm_time_s[2] == 0.0
    # The all-to-alls are part of the stage time: ep = 8 adds their link time to ep = 1 at tp = 1, and changes the
    # routed-expert GEMMs from 8 local experts on a quarter of the tokens each to 1 expert on twice the tokens
    # (forward once, backward twice, over 32 layers).
    from engine.performance.moe_terms import moe_ffn_gemms

    tokens = 32768.0
    gemms = moe_ffn_gemms(work, hw, eff, tokens, 1.0, 8.0) - moe_ffn_gemms(work, hw, eff, tokens, 1.0, 1.0)
    expected = lay.ep_comm_time_s[0] + 3 * 32 * gemms
    assert lay.stage_time_s[0] - lay.stage_time_s[2] == pytest.approx(expected, rel=1e-9)


def test_mixtral_8x7b_expert_weights_split_over_ep8(shape_of):
    work = analyse_model(shape_of("mixtral-8x7b"))
    assert work.moe_expert_params_per_layer() * 32 == MIXTRAL_8X7B_EXPERT_PARAMS
    # EP = 8: each GPU holds one whole expert per layer: 45,097,156,608 / 8 = 5,637,144,576 parameters,
    # 11,274,289,152 B = 10.5 GiB of bf16 weights; the 1,605,636,096 dense parameters are not split.
    assert expert_params_per_gpu(work, 1, 1, 8) == 5_637_144_576
    assert params_per_gpu(work, 1, 1, 8) == MIXTRAL_8X7B_DENSE_PARAMS + 5_637_144_576
    assert params_per_gpu(work, 1, 1, 1) == MIXTRAL_8X7B_DENSE_PARAMS + MIXTRAL_8X7B_EXPERT_PARAMS
    common = {
        "tp": 1,
        "pp": 1,
        "dp": 8,
        "micro_batch": 1,
        "micro_batches": 8,
        "recompute": "full",
        "hbm_gib": 80.0,
        "reserve_fraction": 0.0,
    }
    ep8 = training_memory(work, ep=8, **common)
    ep1 = training_memory(work, ep=1, **common)
    assert ep8.weights_gib * GIB == pytest.approx(2 * (MIXTRAL_8X7B_DENSE_PARAMS + 5_637_144_576), rel=1e-12)
    assert ep8.gradients_gib * GIB == pytest.approx(2 * (MIXTRAL_8X7B_DENSE_PARAMS + 5_637_144_576), rel=1e-12)
    assert (ep1.weights_gib - ep8.weights_gib) * GIB == pytest.approx(2 * 7 / 8 * MIXTRAL_8X7B_EXPERT_PARAMS)
    # Distributed optimizer (ZeRO-1): dense state shards over dp = 8, expert state over dp / ep = 1 rank holding
    # that expert: 12 x (1,605,636,096 / 8 + 5,637,144,576) = 70,054,189,056 B, the same as 12 x 46.7B / 8 at ep = 1.
    assert ep8.optimizer_gib * GIB == pytest.approx(70_054_189_056, rel=1e-12)
    assert ep1.optimizer_gib * GIB == pytest.approx(70_054_189_056, rel=1e-12)
    assert ep8.activations_gib == ep1.activations_gib  # tokens x active experts per GPU either way


# ------------------------------------------------------------------------------------------- search and pins


def test_mixtral_plan_reports_ep_and_its_all_to_all(plan):
    t = plan(_mixtral())["training"]
    par = t["parallelism"]
    assert par["ep"] in (1, 2, 4, 8)
    assert par["tp"] * par["cp"] * par["pp"] * par["dp"] == 1024  # ep is carved out of dp, not extra GPUs
    assert par["dp"] % par["ep"] == 0
    assert (t["step_breakdown_s"]["expert_all_to_all"] > 0) == (par["ep"] > 1)
    # The search considered ep: it beats (or ties) the best plan with experts only sharded over tp.
    pinned = plan(_mixtral(ep=1))["training"]
    assert t["step_time_s"] <= pinned["step_time_s"]


@pytest.mark.parametrize("ep", [1, 2, 4, 8])
def test_pinned_ep_is_honoured(plan, ep):
    t = plan(_mixtral(ep=ep))["training"]
    assert t["parallelism"]["ep"] == ep
    assert t["parallelism"]["dp"] % ep == 0
    assert all(point["parallelism"]["ep"] == ep for point in t["frontier"])


def test_pinned_ep_in_deadline_mode(plan):
    p = plan(_mixtral(gpus=None, ep=4))
    assert p["feasible"]
    par = p["training"]["parallelism"]
    assert par["ep"] == 4 and par["dp"] % 4 == 0


def test_ep_expert_state_shrinks_memory_without_zero(plan):
    """Without a distributed optimizer every GPU holds full 16 B/param state, so ep = 8 cuts the expert share 8x."""
    pins = {"tp": 1, "pp": 8, "zero_stage": 0, "recompute": "full", "micro_batch": 1, "interleave": 1}
    ep1 = plan(_mixtral(system="dgx-b200", ep=1, **pins))["training"]
    ep8 = plan(_mixtral(system="dgx-b200", ep=8, **pins))["training"]
    experts_per_stage = MIXTRAL_8X7B_EXPERT_PARAMS / 8  # pp = 8: 4 of 32 layers per stage
    saved_gib = 16 * experts_per_stage * 7 / 8 / GIB
    assert ep1["memory_per_gpu_gib"] - ep8["memory_per_gpu_gib"] == pytest.approx(saved_gib, rel=1e-9)


# ------------------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("model", "training", "message"),
    [
        (
            {"preset": "mixtral-8x7b"},
            {"gpus": 64, "parallelism": {"ep": 3}},
            "training.parallelism.ep (3) must divide model.moe.experts (8)",
        ),
        (
            {"preset": "llama-3-8b"},
            {"gpus": 64, "parallelism": {"ep": 2}},
            "training.parallelism.ep (2) needs a mixture-of-experts model (model.moe); dense models use ep = 1",
        ),
        (  # experts split over tp (etp = tp): ep groups come out of dp
            {"preset": "mixtral-8x7b"},
            {"gpus": 64, "parallelism": {"ep": 4, "etp": 2, "dp": 6, "tp": 2, "pp": 1}},
            "training.parallelism.ep (4) must divide training.parallelism.dp (6) (expert groups are carved out of dp)",
        ),
        (  # neither split (8 does not divide dp 6) nor folded (8 does not divide tp x cp x dp = 12)
            {"preset": "mixtral-8x7b"},
            {"gpus": 96, "parallelism": {"ep": 8, "dp": 6, "tp": 2, "cp": 1}},
            "training.parallelism.ep (8) must divide training.parallelism.dp (6) (expert groups are carved out of "
            "dp), or with etp 1 the tp x cp x dp ranks of a stage (12)",
        ),
        (
            {"preset": "mixtral-8x7b"},
            {"gpus": 96, "parallelism": {"ep": 8, "tp": 8, "etp": 8}},
            "training.parallelism.ep (8) must divide the data-parallel degree, so tp x cp x pp x ep (64) must divide "
            "training.gpus (96)",
        ),
        (  # folded too, 48 GPUs cannot hold whole stages of lcm(tp x cp, ep) = 8 ranks on pp 4 (32)
            {"preset": "mixtral-8x7b"},
            {"gpus": 48, "parallelism": {"ep": 8, "tp": 4, "pp": 4}},
            "training.parallelism.ep (8) must divide the data-parallel degree, so tp x cp x pp x ep (128) must divide "
            "training.gpus (48), or with the experts folded over tp (etp 1) pp x lcm(tp x cp, ep) (32)",
        ),
        (
            {"preset": "mixtral-8x7b", "moe": {"experts": 256, "active": 8}},
            {"gpus": 4096, "parallelism": {"ep": 256, "tp": 4}},
            "training.parallelism.ep x tp (1024) must be at most 512 GPUs per expert group",
        ),
    ],
)
def test_bad_ep_is_a_field_error(catalog, model, training, message):
    body = {"workload": "training", "model": model, "training": {"tokens": 1e12, **training}}
    assert _errors(catalog, body)["training.parallelism.ep"] == [message]


def test_ep_must_be_a_positive_integer(catalog):
    for bad in (0, 2.5, "8"):
        body = _mixtral(ep=bad)
        assert "training.parallelism.ep" in _errors(catalog, body)


def test_token_permutation_moves_each_routed_copy_through_hbm_by_hand(catalog, shape_of):
    """DeepSeek-V3 (hidden 7,168, 8 routed experts a token), 4,096 tokens on an H100: the permute reads each token
    once per routed expert and writes the copy (2 x 8), the unpermute reads the 8 copies and writes their sum
    (8 + 1): 25 x 4,096 x 7,168 x 2 B = 1.468 GB at 3.35 TB/s x 0.8, plus two kernel launches of 4 us. A stack
    whose dispatch kernels place the tokens themselves (DeepSeek-V3's) has no such pass."""
    from engine.performance.moe_terms import moe_permute_time

    work = analyse_model(shape_of("deepseek-v3"))
    system = catalog.systems["dgx-h100"]
    gpu = catalog.gpu_of(system)
    hw = hardware_for(gpu, system, "fp8")
    eff = efficiency_for(gpu, "fp8", Assumptions())
    expected = 25 * 4096 * 7168 * 2 / (3.35e12 * 0.8) + 2 * 4e-6
    assert float(moe_permute_time(work, hw, eff, 4096.0)) == pytest.approx(expected, rel=1e-9)
    fused = efficiency_for(gpu, "fp8", Assumptions(overrides={"moe_permute_in_dispatch": 1}))
    assert float(moe_permute_time(work, hw, fused, 4096.0)) == 0.0
