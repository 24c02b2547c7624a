"""Expected whole run: the range arithmetic, checkpointing modes, restart growth, goodput at 16K and 100K GPUs,
the batch ramp and the drivers, each against values worked out by hand from the model's formulas.

Hand inputs: H100 systems fail every 16,384 x 54 x 24 / 419 / 8 = 6,335 h (Llama 3 paper, section 3.3.4; the
catalog rounds it to the hour); checkpoints are 14 bytes per parameter; restart 15 min + 0.25 min per doubling of
systems (3 min in memory); stalls 0.08 GB/s per GPU to storage (synchronous), 20 GB/s to host (otherwise).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from engine import run_plan, to_json, validate_request
from engine.assumptions.registry import Assumptions
from engine.performance.batch_ramp import fixed_share, ramp_efficiency, ramp_excess
from engine.performance.whole_run import (
    Z90,
    WholeRunInputs,
    whole_run,
    whole_run_days,
    whole_runs,
)

NODE_MTBF_H = 6335.0
PARAMS_405B = 405e9


def _inputs(checkpointing: str = "asynchronous", mtbf_h: float = NODE_MTBF_H, params: float = PARAMS_405B,
            **overrides: float) -> WholeRunInputs:  # fmt: skip
    return WholeRunInputs.resolve(params=params, checkpointing=checkpointing, node_mtbf_hours=mtbf_h,
                                  gpus_per_system=8, a=Assumptions(overrides=dict(overrides)))  # fmt: skip


def _daly_goodput(delta: float, mtbf: float, restart: float) -> float:
    """Daly (2006) higher-order interval, then tau / (tau + delta) x (1 - ((tau + delta) / 2 + R) / M)."""
    x = delta / (2 * mtbf)
    tau = math.sqrt(2 * delta * mtbf) * (1 + math.sqrt(x) / 3 + x / 9) - delta
    return tau / (tau + delta) * (1 - ((tau + delta) / 2 + restart) / mtbf)


def test_range_is_the_lognormal_sum_of_the_factor_ranges():
    """One system (no stragglers) that never fails: only production (0.64-1.0) and stalls (1-8 %) spread."""
    run = whole_run(10.0, 8, _inputs(mtbf_h=1e12))
    # p50: 10 days / (0.795 x 0.97); p90 / p50 = exp(Z sigma), sigma = sqrt(sum (ln(high/low) / 2Z)^2).
    assert run.days_p50 == pytest.approx(10 / (0.795 * 0.97), rel=1e-6)
    spread = math.sqrt(math.log(1.0 / 0.64) ** 2 + math.log(0.99 / 0.92) ** 2) / 2  # = Z x sigma = 0.22614
    assert spread == pytest.approx(0.22614, abs=1e-5)
    assert run.days_p90 == pytest.approx(run.days_p50 * math.exp(spread), rel=1e-6)
    assert run.days_p10 == pytest.approx(run.days_p50 * math.exp(-spread), rel=1e-6)
    assert run.days_p10 < run.days_p50 < run.days_p90
    # Drivers by share of the variance: ln(1.0/0.64) = 0.4463 squared against 0.0733^2 (97.4 % and 2.6 %).
    assert run.drivers == ("production vs benchmark", "evaluations and data stalls")
    assert run.share_of_spread("production vs benchmark") == pytest.approx(
        0.4463**2 / (0.4463**2 + 0.0733**2), rel=1e-3
    )
    assert run.share_of_spread("stragglers") == 0.0


def test_restart_grows_with_the_systems_and_is_shorter_in_memory():
    inputs, memory = _inputs(), _inputs("in_memory")
    # 1 system: 15 min; 2,048 systems (16,384 GPUs): 15 + 0.25 x 11 = 17.75 min; 12,288: 15 + 0.25 x 13.585.
    assert float(inputs.restart_seconds(8)) == pytest.approx(15 * 60)
    assert float(inputs.restart_seconds(16_384)) == pytest.approx(17.75 * 60)
    assert float(inputs.restart_seconds(98_304)) == pytest.approx((15 + 0.25 * math.log2(12_288)) * 60)
    assert float(memory.restart_seconds(16_384)) == pytest.approx((3 + 0.25 * 11) * 60)


def test_asynchronous_checkpoints_cost_less_than_synchronous_at_scale():
    sync, asyn = _inputs("synchronous"), _inputs()
    gpus = 16_384
    mtbf, restart = NODE_MTBF_H * 3600 / 2048, 17.75 * 60
    # Stall per checkpoint: 405e9 x 14 B over 16,384 GPUs at 0.08 GB/s = 4.33 s; at 20 GB/s to host 0.0173 s.
    g_sync = _daly_goodput(PARAMS_405B * 14 / (gpus * 0.08e9), mtbf, restart)
    g_async = _daly_goodput(PARAMS_405B * 14 / (gpus * 20e9), mtbf, restart)
    assert float(sync.goodput(gpus)) == pytest.approx(g_sync, rel=1e-9)
    assert float(asyn.goodput(gpus)) == pytest.approx(g_async, rel=1e-9)
    assert g_async > g_sync
    # The gap widens with slower storage (a tenth of the bandwidth): synchronous stalls 43 s per checkpoint.
    slow = _inputs("synchronous", storage_write_gbyte_s_per_gpu=0.008)
    assert float(asyn.goodput(gpus)) - float(slow.goodput(gpus)) > 2 * (g_async - g_sync)


def test_goodput_near_90_percent_at_16k_and_plausible_at_100k_in_memory():
    """Llama 3 held above 90 % effective training time on 16,384 H100; at 98,304 GPUs a failure comes every
    6335 h / 12,288 = 31 min, and only a fast (in-memory) restart keeps the run near 0.8."""
    g16 = float(_inputs().goodput(16_384))
    assert g16 == pytest.approx(_daly_goodput(PARAMS_405B * 14 / (16_384 * 20e9), NODE_MTBF_H * 3600 / 2048,
                                              17.75 * 60), rel=1e-9)  # fmt: skip
    assert g16 == pytest.approx(0.9027, abs=5e-4)  # 1 - (9.8 s + 1,065 s) / 11,137 s, x 0.9991
    restart_100k = (3 + 0.25 * math.log2(12_288)) * 60  # 384 s
    g100 = float(_inputs("in_memory").goodput(98_304))
    assert g100 == pytest.approx(_daly_goodput(PARAMS_405B * 14 / (98_304 * 20e9), NODE_MTBF_H * 3600 / 12_288,
                                               restart_100k), rel=1e-9)  # fmt: skip
    assert 0.78 < g100 < 0.80  # 1 - (1.6 s + 384 s) / 1,856 s ~ 0.792
    # From storage (18.4 min restarts against 31 min between failures) the run keeps well under half its time.
    assert float(_inputs().goodput(98_304)) < 0.45


def test_failures_drive_the_range_at_100k_from_storage():
    run = whole_run(10.0, 98_304, _inputs())
    assert run.drivers[0] == "failures and checkpoints"
    assert run.days_p10 < run.days_p50 < run.days_p90
    small = whole_run(10.0, 1024, _inputs())
    assert small.drivers[0] == "production vs benchmark"


def test_batch_ramp_by_hand():
    """Fixed share c = 0.2 of the step, batch ramping linearly from a quarter over 10 % of the tokens:
    extra time = 0.1 x 0.2 x (ln 4 / 0.75 - 1) = 0.016968, efficiency 1 / 1.016968."""
    linear = ramp_excess({"start_tokens": 1e6, "ramp_tokens": 1e11}, 4e6, 1e12)
    assert float(ramp_efficiency(0.2, linear)) == pytest.approx(1 / 1.016968, rel=1e-6)
    # The same by summing per-token cost 1 + c (1/x - 1) over the ramp (midpoint rule), independent of the closed form.
    x = 0.25 + 0.75 * (np.arange(100_000) + 0.5) / 100_000
    excess = 0.1 * float(np.mean(0.2 * (1 / x - 1)))
    assert float(ramp_efficiency(0.2, linear)) == pytest.approx(1 / (1 + excess), rel=1e-6)
    assert float(ramp_efficiency(0.2, 0.0)) == 1.0  # no ramp
    # Fixed share: step 10 s, pipeline 9 s of which 1 s bubble -> work 8 s, fixed 2 s -> 0.2.
    assert float(fixed_share(10.0, 9.0, 1.0)) == pytest.approx(0.2)
    ramp = _inputs().with_ramp({"start_tokens": 1e6, "ramp_tokens": 1e11}, 4e6, 1e12)
    assert ramp.ramp_excess == pytest.approx(0.1 * (math.log(4) / 0.75 - 1))
    assert _inputs().with_ramp({"start_tokens": 8e6, "ramp_tokens": 1e11}, 4e6, 1e12).ramp_excess == 0.0


def test_stepped_batch_schedule_by_hand():
    """Llama 3 405B's published schedule (4M tokens until 252M, 8M until 2.87T, then 16M) on a 15.6T-token run:
    the 4M stage pays 252e6 / 15.6e12 x (4 - 1) and the 8M stage (2.87e12 - 252e6) / 15.6e12 x (2 - 1)."""
    steps = {"steps": [{"batch_tokens": 4e6, "until_tokens": 252e6}, {"batch_tokens": 8e6, "until_tokens": 2.87e12}]}
    by_hand = 252e6 / 15.6e12 * 3 + (2.87e12 - 252e6) / 15.6e12 * 1
    assert ramp_excess(steps, 16e6, 15.6e12) == pytest.approx(by_hand, rel=1e-12)
    assert by_hand == pytest.approx(0.184007, rel=1e-5)
    # A plan batch no larger than an early stage pays nothing for it; a run shorter than the schedule pays pro rata.
    assert ramp_excess(steps, 8e6, 15.6e12) == pytest.approx(252e6 / 15.6e12 * 1, rel=1e-12)
    assert ramp_excess(steps, 16e6, 1e12) == pytest.approx(252e6 / 1e12 * 3 + (1e12 - 252e6) / 1e12, rel=1e-12)


def test_a_preset_ramp_lengthens_the_whole_run_not_the_steady_state(catalog):
    body = {"workload": "training", "model": {"preset": "llama-3-8b"},
            "training": {"tokens": 1e11, "gpus": 64, "global_batch_tokens": 4 * 1024 * 1024},
            "hardware": {"system": "dgx-h100"}}  # fmt: skip
    preset = catalog.models["llama-3-8b"]
    ramped = replace(catalog, models={**catalog.models, "llama-3-8b": replace(preset, extra={
        **(preset.extra or {}), "batch_ramp": {"start_tokens": 1024 * 1024, "ramp_tokens": 5e10}})})  # fmt: skip
    base = to_json(run_plan(validate_request(body, catalog), catalog))["training"]
    ramp = to_json(run_plan(validate_request(body, ramped), ramped))["training"]
    assert ramp["days_steady_state"] == base["days_steady_state"] and ramp["tokens_per_s"] == base["tokens_per_s"]
    factor = next(f for f in ramp["whole_run"]["factors"] if f["name"] == "batch ramp-up")
    # Half the tokens ramp from a quarter of the batch: 1 / (1 + 0.5 x c x 0.8484) with the plan's fixed share c.
    share = 1 - (base["step_breakdown_s"]["pipeline"] - base["step_breakdown_s"]["bubble"]) / base["step_time_s"]
    assert factor["efficiency"] == pytest.approx(1 / (1 + 0.5 * share * (math.log(4) / 0.75 - 1)), rel=1e-9)
    assert ramp["days"] == pytest.approx(base["days"] / factor["efficiency"], rel=1e-9)


def test_the_vectorised_spread_matches_the_reported_range():
    """`log_sigma` (used to size at the p90) must give the same spread as the p10-p90 range the plan reports."""
    inputs = _inputs()
    for gpus in (64, 2048, 32768):
        run = whole_run(10.0, gpus, inputs)
        assert float(inputs.log_sigma(gpus)) == pytest.approx(math.log(run.days_p90 / run.days_p50) / Z90, rel=1e-9)


def test_planning_at_the_p90_meets_the_deadline_at_the_p90(catalog):
    body = {"workload": "training", "model": {"preset": "llama-3-8b"}, "hardware": {"system": "dgx-h100"},
            "training": {"tokens": 3.5e12, "deadline_days": 24, "global_batch_tokens": 16 * 1024 * 1024}}  # fmt: skip
    p50 = to_json(run_plan(validate_request(body, catalog), catalog))["training"]
    body["training"]["deadline_percentile"] = "p90"
    p90 = to_json(run_plan(validate_request(body, catalog), catalog))["training"]
    assert p50["days"] <= 24 < p50["days_range"]["p90"]  # the expected run meets it, the p90 run does not
    assert p90["days_range"]["p90"] <= 24 and p90["gpus"] > p50["gpus"]
    # The p90 multiplier: exp(Z90 x sigma); the production-efficiency range alone (0.64-1.0) gives sigma >= 0.1741.
    assert p90["days_range"]["p90"] / p90["days"] >= math.exp(Z90 * math.log(1.0 / 0.64) / (2 * Z90)) - 1e-9


def test_frontier_days_are_the_whole_runs_days():
    """The frontier's light path (`whole_run_days`: the range without the factor records) gives exactly the days of
    `whole_runs` (by hand at 8 GPUs in the first test above), with a batch ramp and at sizes where failures and
    stragglers spread, and one plan's days are those of the plans taken together."""
    inputs = replace(_inputs(), ramp_excess=0.3)
    days, gpus, shares = [10.0, 7.5, 3.0], [8, 4096, 98_304], [0.0, 0.2, 0.45]
    runs = whole_runs(days, gpus, inputs, shares)
    assert whole_run_days(days, gpus, inputs, shares) == [(r.days_p10, r.days_p50, r.days_p90) for r in runs]
    assert whole_run_days(days[1:2], gpus[1:2], inputs, shares[1:2]) == [(runs[1].days_p10, runs[1].days_p50,
                                                                         runs[1].days_p90)]  # fmt: skip
    # failures and stragglers widen the range at 98K GPUs
    assert runs[2].days_p90 / runs[2].days_p50 > runs[1].days_p90 / runs[1].days_p50
