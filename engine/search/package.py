"""A scored candidate of the training search, packaged as the `Plan` the training section and explain entries
read: its layout, step breakdown and memory, from the costs already computed for it or re-evaluated alone.

Apart from the search itself (`layouts.py`) so that module stays about the queries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.performance.cp_comm import CP_COMM_NAMES
from engine.performance.dp_step import StepMemory, StepTimes
from engine.performance.memory import GIB, OFFLOAD_NAMES, MemoryBreakdown
from engine.performance.stages import stage_layer_counts
from engine.performance.step_time import RECOMPUTE_NAMES, LayoutCosts, StepCosts
from engine.search.results import Plan

if TYPE_CHECKING:
    from engine.search.layouts import TrainingSearch

__all__ = ["Scored", "package_plan"]

SECONDS_PER_DAY = 86_400.0


# A scored candidate's figures where the search left them: (its step times and their row, its memory and its
# row), the two halves possibly from different chunks (`fixed._score_in_bound_order`); a `StepCosts` holds both.
Scored = tuple[StepTimes | StepCosts, int, StepMemory | StepCosts, int]


def package_plan(
    s: TrainingSearch,
    lay: LayoutCosts,
    idx: np.ndarray,
    zero: np.ndarray,
    dp: np.ndarray,
    i: int,
    nearest: bool,
    scored: Scored | None = None,
) -> Plan:
    """Package candidate i: from its already computed costs (`scored`, read in place, one value per figure) or
    re-evaluated alone.

    Speed: an auto plan packages about seventy plans (each frontier point is one), so each figure is read as one
    Python number (`item`) rather than through a one-row copy of every array; the ideal days are
    `TrainingSearch.days`' expression on those numbers (the same floating-point operations, in the same order)."""
    if scored is None:
        sl = slice(i, i + 1)
        c = s.step(lay, idx[sl], dp[sl], zero[sl], nearest)
        scored = (c, 0, c, 0)
    t, row, mem, mrow = scored
    j = int(idx[i])
    assert lay.cp is not None and lay.first_layers is not None and lay.last_layers is not None
    tp, pp, cp, d = int(lay.tp.item(j)), int(lay.pp.item(j)), int(lay.cp.item(j)), int(dp[i])
    first, last = int(lay.first_layers.item(j)), int(lay.last_layers.item(j))
    micro_batches, micro_batch = t.micro_batches.item(row), int(lay.micro_batch.item(j))
    m = float(max(micro_batches, 1))
    per_step = {k: getattr(lay, k).item(j) * m for k in ("tp_comm_time_s", "p2p_time_s", "ep_comm_time_s")}
    step_time_s, tokens_per_step = t.step_time_s.item(row), t.tokens_per_step.item(row)
    return Plan(
        tp=tp, pp=pp, dp=d, micro_batch=micro_batch, interleave=int(lay.interleave.item(j)),
        recompute=RECOMPUTE_NAMES[int(lay.recompute.item(j))], zero_stage=int(zero[i]), gpus=tp * cp * pp * d,
        micro_batches=int(micro_batches), step_time_s=step_time_s, tokens_per_step=tokens_per_step,
        days_ideal=s.spec.tokens / max(tokens_per_step, 1.0) * step_time_s / SECONDS_PER_DAY,
        stage_time_s=lay.stage_time_s.item(j), pipeline_time_s=t.pipeline_time_s.item(row),
        bubble_time_s=t.bubble_time_s.item(row), dp_exposed_time_s=t.dp_exposed_time_s.item(row),
        optimizer_time_s=t.optimizer_time_s.item(row),
        memory=MemoryBreakdown(
            weights_gib=mem.weights_bytes.item(mrow) / GIB,
            gradients_gib=mem.gradients_bytes.item(mrow) / GIB,
            optimizer_gib=mem.optimizer_bytes.item(mrow) / GIB,
            activations_gib=mem.activations_bytes.item(mrow) / GIB,
            reserve_gib=float(mem.reserve_bytes) / GIB,
            host_overflow_gib=_row(mem.host_overflow_bytes, mrow) / GIB,
        ),
        ep=int(lay.ep.item(j)) if lay.ep is not None else 1, cp=cp,
        etp=(int(lay.etp.item(j)) if lay.etp is not None else tp) if s.work.shape.moe is not None else None,
        stage_layers=tuple(stage_layer_counts(s.work.shape.layers, pp, first, last)),
        offload=OFFLOAD_NAMES[int(lay.offload.item(j)) if lay.offload is not None else 0],
        activation_offload_layers=int(lay.act_offload.item(j)) if lay.act_offload is not None else 0,
        activation_offload_time_s=lay.act_offload_time_s.item(j) * m if lay.act_offload_time_s is not None else 0.0,
        activation_offload_host_gib=lay.act_offload_bytes.item(j) / GIB if lay.act_offload_bytes is not None else 0.0,
        batch_exact=bool(t.batch_exact.item(row)) if t.batch_exact is not None else True,
        global_batch_sequences=d * micro_batch * int(micro_batches),
        fullest_stage=int(mem.fullest_stage.item(mrow)) if mem.fullest_stage is not None else 0,
        cp_comm_time_s=lay.cp_comm_time_s.item(j) * m if lay.cp_comm_time_s is not None else 0.0,
        cp_comm=CP_COMM_NAMES[int(lay.cp_comm.item(j))] if lay.cp_comm is not None and cp > 1 else None,
        cp_comm_windowed=(
            CP_COMM_NAMES[int(lay.cp_comm_windowed.item(j))] if lay.cp_comm_windowed is not None and cp > 1 else None
        ),
        offload_time_s=t.offload_time_s.item(row) if t.offload_time_s is not None else 0.0,
        dp_buckets=int(t.dp_buckets.item(row)) if t.dp_buckets is not None else 0,
        ep_unpaired_time_s=_row(t.ep_unpaired_time_s, row),
        ep_overlap=(bool(lay.ep_overlap.item(j)) if lay.ep_overlap is not None else False)
        if s.work.shape.moe is not None else None,
        **per_step,
    )  # fmt: skip


def _row(value: np.ndarray | float, row: int) -> float:
    """One row of a per-candidate figure that is a plain 0 where no candidate has any."""
    return float(value) if np.ndim(value) == 0 else value.item(row)
