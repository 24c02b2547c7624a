"""Batch ramp-up: what the smaller batches at the start of a run cost against the steady state.

Why apart from the other whole-run factors: the ramp is not a judgement with a range but arithmetic on the model's
published batch schedule and the plan's own step breakdown (the part of a step that does not shrink with fewer
micro-batches), so it has its own small module the whole run and the search both read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["fixed_share", "ramp_efficiency", "ramp_excess"]


def fixed_share(step_time_s, pipeline_time_s, bubble_time_s):
    """Share of a step that does not shrink with fewer micro-batches: the pipeline bubble, exposed data-parallel
    collectives, the optimizer step and offload transfers (the step minus the micro-batches' own work)."""
    step = np.maximum(np.asarray(step_time_s, dtype=float), 1e-12)
    work = np.asarray(pipeline_time_s, dtype=float) - np.asarray(bubble_time_s, dtype=float)
    return np.clip(1.0 - work / step, 0.0, 1.0)


def ramp_excess(schedule: Mapping[str, Any], batch_tokens: float, tokens: float) -> float:
    """Token-weighted mean of (1/x - 1) over the whole run, where x is the batch of the moment over the plan's batch.

    Published schedules come in two forms, both accepted:
    - linear, `{start_tokens, ramp_tokens}` (GPT-3: from 32K tokens to the full batch over the first billions of
      tokens): the mean of 1/x - 1 over x growing linearly from x0 to 1 is ln(1/x0) / (1 - x0) - 1;
    - stepped, `{steps: [{batch_tokens, until_tokens}, ...]}` (Llama 3 405B doubles its batch twice): each earlier
      batch b_i is used until `until_tokens` tokens have been trained, and pays (plan batch / b_i - 1).
    Only the ramp's share of the run's tokens pays; a stage whose batch is not smaller than the plan's costs nothing.
    """
    if schedule.get("steps"):
        excess, trained = 0.0, 0.0
        for step in schedule["steps"]:
            until = min(float(step["until_tokens"]), tokens)
            x = float(step["batch_tokens"]) / batch_tokens
            if until > trained and 0.0 < x < 1.0:
                excess += (until - trained) / tokens * (1.0 / x - 1.0)
            trained = max(trained, until)
        return excess
    start, length = float(schedule.get("start_tokens") or 0.0), float(schedule.get("ramp_tokens") or 0.0)
    if start <= 0.0 or length <= 0.0 or start >= batch_tokens:
        return 0.0
    x0 = start / batch_tokens
    return min(1.0, length / tokens) * (math.log(1.0 / x0) / (1.0 - x0) - 1.0)


def ramp_efficiency(share_fixed, excess: float):
    """Steady-state time over the time with a batch ramp whose token-weighted excess is `excess` (`ramp_excess`),
    on the same GPUs.

    A step at batch fraction x keeps its fixed part F and scales its work part W = T - F by x, so each token
    costs (x W + F) / (x T) of a full-batch token: 1 + c (1/x - 1) with c = F / T; over the run, 1 + c x excess.
    """
    if excess <= 0.0:
        return np.ones_like(np.asarray(share_fixed, dtype=float))
    return 1.0 / (1.0 + np.asarray(share_fixed, dtype=float) * excess)
