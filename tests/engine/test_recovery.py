"""Recovery modes and `training.checkpointing = auto` (engine/performance/recovery.py), with hand-worked goodput.

Every expected number below is worked out by hand from the published inputs, not read from the code:
- failure rate: Llama 3 (419 interruptions in 54 days on 16,384 H100) -> catalog MTBF 6,335 h per 8-GPU DGX H100
  and 704 h per 72-GPU GB200 NVL72 rack;
- checkpoint 405.85e9 params x 14 B = 5.682e12 B, copied to host at 20 GB/s per GPU (the stall delta);
- goodput = tau / (tau + delta) x (1 - ((tau + delta) / 2 + R) / M), tau = Daly's interval (about sqrt(2 delta M)).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.assumptions.registry import Assumptions
from engine.performance.recovery import RecoveryMode, choose_modes
from engine.performance.whole_run import WholeRunInputs

PARAMS_405B = 405.85e9
CKPT_BYTES = PARAMS_405B * 14.0


def _inputs(checkpointing: str, mtbf_h: float = 6335.0, per_system: int = 8) -> WholeRunInputs:
    return WholeRunInputs.resolve(params=PARAMS_405B, checkpointing=checkpointing, node_mtbf_hours=mtbf_h,
                                  gpus_per_system=per_system, a=Assumptions())  # fmt: skip


def _by_hand(gpus: int, systems: int, mtbf_h: float, restart_s: float) -> float:
    """The goodput formula with Young's interval sqrt(2 delta M) (Daly's higher-order terms are < 0.1 % here)."""
    m = mtbf_h * 3600.0 / systems
    delta = CKPT_BYTES / (20e9 * gpus)
    tau = math.sqrt(2.0 * delta * m)
    return tau / (tau + delta) * (1.0 - ((tau + delta) / 2.0 + restart_s) / m)


def test_16k_h100_keeps_llama3s_asynchronous_checkpoints_at_about_90_percent():
    # 2,048 systems: M = 6335 h x 3600 / 2048 = 11,136 s; restart 15 min + 0.25 min x log2(2048) = 900 + 165 s.
    # delta = 5.682e12 / (20e9 x 16384) = 0.0173 s; tau = 19.6 s; goodput = 0.9991 x (1 - 1074.8 / 11136) = 0.903,
    # at or above the 90 % target, so auto keeps what Llama 3 ran (above 90 % effective training time).
    run = _inputs("auto")
    assert run.mode_at(16_384).name == "asynchronous"
    assert float(run.goodput(16_384)) == pytest.approx(0.9027, abs=5e-4)
    assert float(run.goodput(16_384)) == pytest.approx(_by_hand(16_384, 2048, 6335.0, 1065.0), rel=1e-3)


def test_100k_h100_auto_uses_elastic_recovery_and_stays_plausible():
    # 12,500 systems: M = 6335 x 3600 / 12500 = 1,824.5 s (a failure every 30 min); log2(12500) = 13.61.
    # asynchronous: R = 900 + 15 x 13.61 = 1,104 s -> 0.9991 x (1 - 1105.8 / 1824.5) = 0.394
    # in_memory:    R = 180 + 204.1 = 384.1 s     -> 0.9991 x (1 - 385.8 / 1824.5) = 0.788
    # elastic: 3/4 of failures cost the stall 10 + 2 x 13.61 = 37.2 s, 1/4 the in-memory restart 384.1 s:
    #          R = 27.9 + 96.0 = 124.0 s -> 0.9991 x (1 - 125.6 / 1824.5) = 0.930, the first to reach 90 %.
    run = _inputs("auto")
    async_, in_memory, elastic = run.mode_goodputs(100_000)
    assert float(async_) == pytest.approx(0.394, abs=2e-3)
    assert float(in_memory) == pytest.approx(0.788, abs=2e-3)
    assert float(elastic) == pytest.approx(0.930, abs=2e-3)
    assert float(elastic) == pytest.approx(_by_hand(100_000, 12_500, 6335.0, 0.75 * 37.219 + 0.25 * 384.14), rel=1e-3)
    assert run.mode_at(100_000).name == "elastic"
    # Bound: the published 16K runs held about 90 % (Llama 3) and Google's largest Gemini job 97 % with in-memory
    # replicas; a 100K plan below Gemini's 85 % before that upgrade would assume a team recovering worse than
    # practitioners already did at smaller scale.
    assert float(run.goodput(100_000)) >= 0.85


def test_1m_gb200_auto_takes_the_best_mode_when_none_reaches_the_target():
    # 13,888 NVL72 racks: M = 704 h x 3600 / 13888 = 182.5 s (a failure every 3 minutes): restarts from storage
    # (R = 900 + 15 x 13.76 = 1,106 s) or memory (386 s) never finish between failures; elastic loses
    # 0.75 x (10 + 27.5) + 0.25 x 386.4 = 124.7 s -> 0.9991 x (1 - 124.9 / 182.5) = 0.315.
    run = _inputs("auto", mtbf_h=704.0, per_system=72)
    assert run.mode_at(999_936).name == "elastic"
    assert float(run.goodput(999_936)) == pytest.approx(0.315, abs=2e-3)
    assert float(run.goodput(999_936)) == pytest.approx(_by_hand(999_936, 13_888, 704.0, 124.75), rel=2e-3)


def test_pinned_modes_are_honoured():
    # 100K GPUs pinned to asynchronous keeps the 0.394 worked out above; in_memory the 0.788.
    assert _inputs("asynchronous").mode_at(100_000).name == "asynchronous"
    assert float(_inputs("asynchronous").goodput(100_000)) == pytest.approx(0.394, abs=2e-3)
    assert float(_inputs("in_memory").goodput(100_000)) == pytest.approx(0.788, abs=2e-3)


def test_in_memory_modes_need_host_memory_for_their_copies():
    # 2 copies x 5.682e12 B / (64 GiB = 68.72e9 B per GPU) = 165.4 GPUs: 128 GPUs cannot hold them, 256 can.
    run = _inputs("auto")
    in_memory = run.modes[1]
    assert in_memory.min_gpus == pytest.approx(2 * CKPT_BYTES / (64 * 2**30), rel=1e-9)
    assert 165 < in_memory.min_gpus < 166
    # With an MTBF short enough that asynchronous misses 90 %, 128 GPUs still must stay asynchronous.
    short = _inputs("auto", mtbf_h=20.0)
    assert short.mode_at(128).name == "asynchronous"
    assert short.mode_at(256).name != "asynchronous"


def test_choose_modes_takes_the_first_mode_reaching_the_target_else_the_best():
    modes = tuple(RecoveryMode(n, 1.0, 0.0, 0.0, min_gpus=g) for n, g in (("a", 1), ("b", 1), ("c", 1000)))
    goodputs = np.array([[0.95, 0.50, 0.50, 0.50], [0.97, 0.92, 0.60, 0.60], [0.99, 0.99, 0.99, 0.70]])
    gpus = np.array([100, 100, 100, 2000])
    # column 0: a meets 0.9 first; 1: b; 2: only c meets it but 100 GPUs cannot hold c -> the best supported, b;
    # 3: none meets it -> the highest, c.
    assert choose_modes(goodputs, gpus, modes, 0.9).tolist() == [0, 1, 1, 2]


def test_plan_says_which_mode_it_used_and_why(plan):
    body = {
        "workload": "training",
        "model": {"preset": "llama-3-405b"},
        "training": {"tokens": 15e12, "gpus": 100_000, "global_batch_tokens": 64 * 2**20},
        "hardware": {"system": "dgx-h100"},
    }
    t = plan(body)["training"]
    assert t["goodput"]["checkpointing"] == "elastic"
    reason = t["goodput"]["checkpointing_reason"]
    assert "auto" in reason and "90%" in reason and "asynchronous 39%" in reason and "in-memory 79%" in reason
    assert "Recovery: elastic" in t["whole_run"]["note"]
