"""A scored candidate of the training search, packaged as the `Plan` the training section and explain entries
read: its layout, step breakdown and memory, from the costs already computed for it or re-evaluated alone.

Apart from the search itself (`layouts.py`) so that module stays about the queries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.performance.memory import GIB, OFFLOAD_NAMES, MemoryBreakdown
from engine.performance.stages import stage_layer_counts
from engine.performance.step_time import RECOMPUTE_NAMES, LayoutCosts, StepCosts
from engine.search.results import Plan

if TYPE_CHECKING:
    from engine.search.layouts import TrainingSearch

__all__ = ["package_plan"]


def package_plan(
    s: TrainingSearch,
    lay: LayoutCosts,
    idx: np.ndarray,
    zero: np.ndarray,
    dp: np.ndarray,
    i: int,
    nearest: bool,
    scored: tuple[StepCosts, int] | None = None,
) -> Plan:
    """Package candidate i: from its already computed costs (`scored`: the StepCosts holding it and its row,
    read in place) or re-evaluated alone."""
    sl = slice(i, i + 1)
    c, row = (s.step(lay, idx[sl], dp[sl], zero[sl], nearest), 0) if scored is None else scored
    j = int(idx[i])
    assert lay.cp is not None and lay.first_layers is not None and lay.last_layers is not None
    tp, pp, cp, d = int(lay.tp[j]), int(lay.pp[j]), int(lay.cp[j]), int(dp[i])
    first, last = int(lay.first_layers[j]), int(lay.last_layers[j])
    m = float(max(c.micro_batches[row], 1))
    per_step = {k: float(getattr(lay, k)[j]) * m for k in ("tp_comm_time_s", "p2p_time_s", "ep_comm_time_s")}
    return Plan(
        tp=tp, pp=pp, dp=d, micro_batch=int(lay.micro_batch[j]), interleave=int(lay.interleave[j]),
        recompute=RECOMPUTE_NAMES[int(lay.recompute[j])], zero_stage=int(zero[i]), gpus=tp * cp * pp * d,
        micro_batches=int(c.micro_batches[row]), step_time_s=float(c.step_time_s[row]),
        tokens_per_step=float(c.tokens_per_step[row]), days_ideal=float(s.days(c)[row]),
        stage_time_s=float(lay.stage_time_s[j]), pipeline_time_s=float(c.pipeline_time_s[row]),
        bubble_time_s=float(c.bubble_time_s[row]), dp_exposed_time_s=float(c.dp_exposed_time_s[row]),
        optimizer_time_s=float(c.optimizer_time_s[row]),
        memory=MemoryBreakdown(
            weights_gib=float(c.weights_bytes[row]) / GIB,
            gradients_gib=float(c.gradients_bytes[row]) / GIB,
            optimizer_gib=float(c.optimizer_bytes[row]) / GIB,
            activations_gib=float(c.activations_bytes[row]) / GIB,
            reserve_gib=float(c.reserve_bytes) / GIB,
        ),
        ep=int(s.ep_of(lay, idx[sl])[0]), cp=cp,
        stage_layers=tuple(stage_layer_counts(s.work.shape.layers, pp, first, last)),
        offload=OFFLOAD_NAMES[int(lay.offload[j]) if lay.offload is not None else 0],
        batch_exact=bool(c.batch_exact[row]) if c.batch_exact is not None else True,
        global_batch_sequences=d * int(lay.micro_batch[j]) * int(c.micro_batches[row]),
        fullest_stage=int(c.fullest_stage[row]) if c.fullest_stage is not None else 0,
        cp_comm_time_s=float(lay.cp_comm_time_s[j]) * m if lay.cp_comm_time_s is not None else 0.0,
        offload_time_s=float(c.offload_time_s[row]) if c.offload_time_s is not None else 0.0,
        **per_step,
    )  # fmt: skip
