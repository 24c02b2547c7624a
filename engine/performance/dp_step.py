"""The step model's second stage: layout costs broadcast over data parallelism and ZeRO stage (`step_costs`).

Why a module of its own: the search calls `step_costs` about a hundred times per plan on batches of a few hundred
to a few thousand candidates, so its cost is numpy's per-operation cost times the operations per candidate. Every
figure that depends on the layout alone (the bubble, the pipeline time per micro-batch, the GPUs per data-parallel
rank, the dense parameters and their 16-bit bytes, the last micro-batch's backward, the interleaving factor of the
activations) is worked out once per layout into `LayoutCosts.columns` and gathered with the rest; the three
data-parallel collectives share their ring fraction (ranks - 1) / ranks. Each figure is the same floating-point
expression, in the same order, as when it was worked out per candidate, so every result is bit for bit the same
(only the work per candidate falls).

The step comes in two halves, `step_times` (pipeline, collectives, optimizer: the days) and `step_memory` (the
fullest stage, most of the work per candidate), joined by `step_costs`: the searches rank candidates by their days
first and ask for memory only where it can decide (a candidate fast enough to win, or to meet the deadline).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from engine.performance.dp_comm import (
    dp_buckets,
    dp_collectives,
    dp_exposed_s,
    dp_ranks_per_system,
    expert_collectives,
)
from engine.performance.layout_terms import (
    POS_EXPERTS,
    host_overflow_bytes,
    interleave_factor,
    offload_time_s,
    stage_memory,
)
from engine.performance.roofline import OPTIMIZER_BYTES_PER_PARAM, Efficiency, Hardware

if TYPE_CHECKING:
    from engine.performance.step_time import LayoutCosts

__all__ = ["StepCosts", "StepMemory", "StepTimes", "join", "step_costs", "step_memory", "step_times"]

# The per-layout columns `step_costs` gathers at once (`_columns`), in this order.
_COLUMNS = ("tp", "pp", "micro_batch", "interleave", "stage_time_s", "body_stage_time_s", "p2p_time_s",
            "params_per_gpu", "expert_params_per_gpu", "expert_dp_divisor", "cp", "layer_params_per_gpu", "offload",
            "dp_chunks", "backward_share", "ep_extra_in_flight", "ep_unpaired_s")  # fmt: skip
# The value of a column the layout costs leave absent (None).
_COLUMN_DEFAULTS = {"expert_dp_divisor": 1.0, "cp": 1.0, "offload": 0.0, "dp_chunks": 1.0, "backward_share": 2.0 / 3.0,
                    "ep_extra_in_flight": 0.0, "ep_unpaired_s": 0.0}  # fmt: skip
_EXPERTS, _OFFLOAD = _COLUMNS.index("expert_params_per_gpu"), _COLUMNS.index("offload")
_UNPAIRED = _COLUMNS.index("ep_unpaired_s")


@dataclass
class StepCosts:
    """Per-candidate arrays after choosing dp and ZeRO stage."""

    micro_batches: np.ndarray
    step_time_s: np.ndarray
    pipeline_time_s: np.ndarray
    bubble_time_s: np.ndarray
    dp_exposed_time_s: np.ndarray
    optimizer_time_s: np.ndarray
    tokens_per_step: np.ndarray
    weights_bytes: np.ndarray
    gradients_bytes: np.ndarray
    optimizer_bytes: np.ndarray
    activations_bytes: np.ndarray
    reserve_bytes: float
    memory_bytes: np.ndarray
    batch_exact: np.ndarray | None = None  # dp x micro_batch x m == the requested global batch
    fullest_stage: np.ndarray | None = None  # stage index that sets the memory need
    offload_time_s: np.ndarray | None = None  # exposed host-link transfers of offloaded state
    host_overflow_bytes: np.ndarray | float = 0.0  # offloaded state the host cannot hold, kept in HBM (in memory)
    dp_buckets: np.ndarray | None = None  # collectives the dense data-parallel reduction runs in (`dp_buckets`)
    ep_unpaired_time_s: np.ndarray | float = 0.0  # what EP overlap's unpaired passes add a step (in pipeline_time_s)


def _column(lay: LayoutCosts, key: str) -> np.ndarray | None:
    """A per-layout column; layout costs built without the expert data-parallel divisor (experts split by tp,
    the classic layout) use ep for it."""
    value = getattr(lay, key)
    if key == "expert_dp_divisor" and value is None:
        return lay.ep
    return value


def _columns(lay: LayoutCosts) -> np.ndarray:
    """The layout's per-layout columns, stacked once (and kept on the layout costs): `_COLUMNS`, then the figures
    that depend on the layout alone, each written exactly as `step_costs` once wrote it per candidate."""
    if lay.columns is None:
        base = [np.broadcast_to(np.asarray(_column(lay, k), dtype=float), lay.tp.shape)
                if _column(lay, k) is not None else np.full(lay.tp.shape, _COLUMN_DEFAULTS[k])
                for k in _COLUMNS]  # fmt: skip
        tp, pp, _mb, v, t_stage, t_body, p2p, params, experts, _ep, cp = base[:11]
        dense = params - experts
        derived = [
            (pp - 1.0) / v * t_body,  # the 1F1B bubble (Narayanan 2021)
            t_stage + p2p,  # pipeline time per micro-batch
            tp * cp * pp,  # GPUs per data-parallel rank
            dense,
            dense * 2.0,  # 16-bit dense weights, the ZeRO-3 parameter gather
            experts * 2.0,
            interleave_factor(pp, v),  # interleaving's activation factor
        ]
        lay.columns = np.stack(base + derived, axis=1)
    return lay.columns


# The columns `step_memory` reads (expert data-parallel divisor, cp, layer_params, offload, EP overlap, interleaving
# factor), kept apart so a memory check gathers 6 columns per candidate, not all of them. The interleaving factor
# is the last of the 7 figures `_columns` derives after `_COLUMNS`.
_MEMORY_COLUMNS = [*(_COLUMNS.index(k) for k in ("expert_dp_divisor", "cp", "layer_params_per_gpu", "offload",
                                                   "ep_extra_in_flight")), len(_COLUMNS) + 6]  # fmt: skip


def _column_any(lay: LayoutCosts, column: int) -> bool:
    """Whether any layout has a non-zero `column` (experts, offload), worked out once per layout costs.

    Why: `_times` and `_memory` ask whether their rows hold experts or offload (a reduction over a strided column,
    twice per call, about 150 calls per plan); for a dense model without offload no row can, and the answer is
    known without looking. Where some layout can, the rows are still checked, exactly as before."""
    key = ("step_column_any", column)
    flag = lay.derived.get(key)
    if flag is None:
        flag = bool(_columns(lay)[:, column].any())
        lay.derived[key] = flag
    return flag


def _positions_hold_experts(lay: LayoutCosts) -> bool:
    """Whether any layout's stage positions hold expert parameters (`_column_any`'s reason, for `_memory`)."""
    flag = lay.derived.get("positions_hold_experts")
    if flag is None:
        assert lay.positions is not None
        flag = bool(lay.positions[:, :, POS_EXPERTS].any())
        lay.derived["positions_hold_experts"] = flag
    return flag


def _memory_columns(lay: LayoutCosts) -> np.ndarray:
    """`_columns`' memory columns, stacked once (kept with the layout costs' derived figures)."""
    cols = lay.derived.get("step_memory_columns")
    if cols is None:
        cols = np.ascontiguousarray(_columns(lay)[:, _MEMORY_COLUMNS])
        lay.derived["step_memory_columns"] = cols
    return cols


class StepTimes(NamedTuple):
    """The time half of `StepCosts` (`step_times`): everything but memory, for the searches that rank candidates
    by days before asking which of them fit (`search/fixed.py`). Field names match `StepCosts`."""

    micro_batches: np.ndarray
    m_eff: np.ndarray  # micro-batches per step, at least one (what memory and the pipeline count)
    step_time_s: np.ndarray
    pipeline_time_s: np.ndarray
    bubble_time_s: np.ndarray
    dp_exposed_time_s: np.ndarray
    optimizer_time_s: np.ndarray
    offload_time_s: np.ndarray
    tokens_per_step: np.ndarray
    batch_exact: np.ndarray
    dp_buckets: np.ndarray  # collectives the dense data-parallel reduction runs in (`dp_comm.dp_buckets`)
    ep_unpaired_time_s: np.ndarray | float = 0.0  # what EP overlap's unpaired passes add a step (in pipeline_time_s)


class StepMemory(NamedTuple):
    """The memory half of `StepCosts` (`step_memory`): bytes per GPU of the fullest stage."""

    weights_bytes: np.ndarray
    gradients_bytes: np.ndarray
    optimizer_bytes: np.ndarray
    activations_bytes: np.ndarray
    reserve_bytes: float
    memory_bytes: np.ndarray
    fullest_stage: np.ndarray
    host_overflow_bytes: np.ndarray | float = 0.0  # offloaded state the host cannot hold (in memory_bytes)


def step_costs(
    lay: LayoutCosts,
    idx: np.ndarray,
    dp: np.ndarray,
    zero: np.ndarray,
    batch_sequences: int,
    seq_len: int,
    hw: Hardware,
    eff: Efficiency,
    nearest_batch: bool = False,
) -> StepCosts:
    """Broadcast layout costs (rows `idx`) over data parallelism `dp` and ZeRO stage `zero` (0-3): `step_times`
    and `step_memory` of the same rows, joined (`join`)."""
    dp = np.asarray(dp, dtype=float)
    zero = np.asarray(zero)
    # One gather of whole rows (`take` along axis 0: about three times faster than fancy indexing here).
    cols = _columns(lay).take(idx, axis=0)
    times = _times(lay, cols, dp, zero, batch_sequences, seq_len, hw, eff, nearest_batch)
    return join(times, _memory(lay, idx, _memory_columns(lay).take(idx, axis=0), dp, zero, times.m_eff, hw, eff))


def step_times(
    lay: LayoutCosts,
    idx: np.ndarray,
    dp: np.ndarray,
    zero: np.ndarray,
    batch_sequences: int,
    seq_len: int,
    hw: Hardware,
    eff: Efficiency,
    nearest_batch: bool | np.ndarray = False,
) -> StepTimes:
    """The step time of rows `idx` at data parallelism `dp` and ZeRO stage `zero`, without the memory (`_times`)."""
    dp = np.asarray(dp, dtype=float)
    zero = np.asarray(zero)
    return _times(lay, _columns(lay).take(idx, axis=0), dp, zero, batch_sequences, seq_len, hw, eff, nearest_batch)


def step_memory(
    lay: LayoutCosts,
    idx: np.ndarray,
    dp: np.ndarray,
    zero: np.ndarray,
    m_eff: np.ndarray,
    hw: Hardware,
    eff: Efficiency,
) -> StepMemory:
    """The memory of rows `idx` at `dp`, `zero` and `m_eff` micro-batches per step (`StepTimes.m_eff`): the same
    figures, bit for bit, as `step_costs` of those rows."""
    dp = np.asarray(dp, dtype=float)
    zero = np.asarray(zero)
    return _memory(lay, idx, _memory_columns(lay).take(idx, axis=0), dp, zero, m_eff, hw, eff)


def join(times: StepTimes, memory: StepMemory) -> StepCosts:
    """`StepCosts` from its two halves (of the same rows)."""
    return StepCosts(
        micro_batches=times.micro_batches,
        step_time_s=times.step_time_s,
        pipeline_time_s=times.pipeline_time_s,
        bubble_time_s=times.bubble_time_s,
        dp_exposed_time_s=times.dp_exposed_time_s,
        optimizer_time_s=times.optimizer_time_s,
        tokens_per_step=times.tokens_per_step,
        weights_bytes=memory.weights_bytes,
        gradients_bytes=memory.gradients_bytes,
        optimizer_bytes=memory.optimizer_bytes,
        activations_bytes=memory.activations_bytes,
        reserve_bytes=memory.reserve_bytes,
        memory_bytes=memory.memory_bytes,
        batch_exact=times.batch_exact,
        fullest_stage=memory.fullest_stage,
        offload_time_s=times.offload_time_s,
        host_overflow_bytes=memory.host_overflow_bytes,
        dp_buckets=times.dp_buckets,
        ep_unpaired_time_s=times.ep_unpaired_time_s,
    )


def _times(
    lay: LayoutCosts,
    cols: np.ndarray,
    dp: np.ndarray,
    zero: np.ndarray,
    batch_sequences: int,
    seq_len: int,
    hw: Hardware,
    eff: Efficiency,
    nearest_batch: bool | np.ndarray,
) -> StepTimes:
    """step = m x (t_stage + p2p) + (pp - 1) / v x t_body + exposed DP collectives + optimizer step, for the rows
    gathered in `cols` at data parallelism `dp` and ZeRO stage `zero`: the micro-batches per step
    (`_micro_batches`), the 1F1B pipeline (Narayanan 2021: m micro-batches plus the bubble), the gradient and
    parameter collectives over the data-parallel ranks (`dp_comm.dp_collectives`, `dp_comm.expert_collectives`),
    the part of them the backward does not hide (`dp_comm.dp_exposed_s`) and the optimizer step (`_optimizer_step`).

    Gradients are reduced over dp x cp (weights are replicated over cp). With expert parallelism (MoE, ep > 1) the
    expert share of the parameters is replicated only over dp x cp / ep ranks (dp x cp x tp / ep with the experts
    folded over the tensor-parallel ranks), so its gradient collectives and ZeRO sharding run over those. Each
    step is a helper of a few numpy operations on the same arrays (the search calls this about 80 times per plan:
    the helpers' calls are a fraction of a per cent)."""
    (tp, pp, mb, v, t_stage, _t_body, _p2p, _params, experts, ep_share, cp, _layer_params, offload, chunks,
     backward_share, _extra, unpaired, bubble, per_micro_batch, group, dense, dense_16bit, experts_16bit,
     _ileave) = cols.T  # fmt: skip
    dpc = dp * cp  # ranks holding the same weights
    any_experts = _column_any(lay, _EXPERTS) and bool(experts.any())
    # ranks holding the same experts (expert-data-parallel group): dp x cp / ep, or dp x cp x tp / ep with the
    # experts folded over the tensor-parallel ranks (ep_share = ep x etp / tp)
    edp = dpc / ep_share if any_experts else dpc
    dp_mb = dp * mb  # sequences per micro-batch step over the data-parallel ranks (the batch and tokens use it too)
    m, m_eff = _micro_batches(batch_sequences / dp_mb, nearest_batch)
    pipeline = m_eff * per_micro_batch + bubble
    unpaired_step: np.ndarray | float = 0.0
    t_ends = t_stage
    if _column_any(lay, _UNPAIRED) and unpaired.any():  # micro-batches EP overlap runs unpaired
        unpaired_step = np.minimum(m_eff, _unpaired_micro_batches(pp, v)) * unpaired
        pipeline = pipeline + unpaired_step
        # the once-per-step collectives hide under the last backward and first forward passes, which run unpaired
        t_ends = t_stage + unpaired
    # DP groups stay on NVLink only when the whole job fits a system; otherwise a group's ring crosses systems on
    # as many NICs as it has ranks in each (dp_comm.dp_ranks_per_system, dp_comm.crossing_bandwidth).
    per_system = dp_ranks_per_system(tp, cp, pp, dpc, hw.gpus_per_system)
    inside = group * dp <= hw.gpus_per_system
    buckets = dp_buckets(zero, dense, dp, v, chunks, eff)
    collectives = dp_collectives(
        lay.dp_bandwidth_bytes_s, inside, dpc, dense, dense_16bit, hw, eff, per_system, buckets
    )
    last_buckets = tuple(c / buckets for c in collectives)
    if any_experts:  # separate expert collectives over the expert-data-parallel ranks (MoE with ep > 1)
        expert_per_system = np.minimum(np.maximum(np.floor(per_system / ep_share), 1.0), edp)
        expert_buckets = dp_buckets(zero, experts, dp, v, chunks, eff)
        extra = expert_collectives(
            lay.dp_bandwidth_bytes_s, inside, edp, experts, experts_16bit, hw, eff, expert_per_system, expert_buckets
        )
        collectives = tuple(c + e for c, e in zip(collectives, extra, strict=True))
        last_buckets = tuple(np.maximum(b, e / expert_buckets) for b, e in zip(last_buckets, extra, strict=True))
    dp_exposed = dp_exposed_s(zero, m_eff, collectives, last_buckets, v, pp, t_stage, backward_share, eff, t_ends)
    optimizer_time, offload_time, step = _optimizer_step(
        lay, zero, dpc, edp, dense, experts if any_experts else None, offload, m_eff, pipeline + dp_exposed, hw, eff
    )
    return StepTimes(
        micro_batches=m,
        m_eff=m_eff,
        step_time_s=step,
        pipeline_time_s=pipeline,
        bubble_time_s=bubble,
        dp_exposed_time_s=dp_exposed,
        optimizer_time_s=optimizer_time,
        offload_time_s=offload_time,
        tokens_per_step=dp_mb * m * seq_len,
        batch_exact=dp_mb * m == batch_sequences,
        dp_buckets=np.broadcast_to(buckets, step.shape),
        ep_unpaired_time_s=unpaired_step,
    )


def _unpaired_micro_batches(pp: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Micro-batches' worth of a stage's passes that EP overlap's combined 1F1B cannot pair with a pass of another
    micro-batch: without pipelining the first forward and the last backward (one micro-batch's worth); with
    interleaving the first stage's warm-up forwards and cool-down backwards, 2 (pp - 1) + (v - 1) pp virtual-stage
    passes each, plus the one more micro-batch the overlap schedules into the warm-up (Megatron-Core's
    get_pp_rank_microbatches), each 1/v of a stage."""
    return np.where(pp > 1.0, (2.0 * (pp - 1.0) + (v - 1.0) * pp + 1.0) / np.maximum(v, 1.0), 1.0)


def _micro_batches(ratio: np.ndarray, nearest_batch: bool | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(m, max(m, 1)): m = global batch / (dp x micro_batch) micro-batches per step, floored (the batch is exact
    when it divides; `batch_exact` says so) or, with `nearest_batch` (a bool, or one per candidate, as a frontier
    pass with both kinds of count asks), the nearest whole number, at least one."""
    if isinstance(nearest_batch, np.ndarray):
        m = np.where(nearest_batch, np.maximum(np.rint(ratio), 1.0), np.floor(ratio))
    else:
        m = np.maximum(np.rint(ratio), 1.0) if nearest_batch else np.floor(ratio)
    return m, np.maximum(m, 1.0)


def _optimizer_step(
    lay: LayoutCosts,
    zero: np.ndarray,
    dpc: np.ndarray,
    edp: np.ndarray,
    dense: np.ndarray,
    experts: np.ndarray | None,
    offload: np.ndarray,
    m_eff: np.ndarray,
    step: np.ndarray,
    hw: Hardware,
    eff: Efficiency,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(optimizer seconds, offload seconds, the whole step): the optimizer step is HBM bound over the parameters a
    GPU updates (sharded over the data-parallel ranks from ZeRO-1; `experts` None when no row holds any), or runs
    on the host with offload (`layout_terms.offload_time_s`), its exposed host-link time instead. `step` is the
    pipeline plus the exposed DP communication."""
    sharded = zero >= 1
    updated = dense / np.where(sharded, dpc, 1.0)
    if experts is not None:
        updated = updated + experts / np.where(sharded, edp, 1.0)
    optimizer_time = updated * (OPTIMIZER_BYTES_PER_PARAM / (hw.hbm_bytes_s * eff.hbm))
    if _column_any(lay, _OFFLOAD) and offload.any():  # the optimizer step moves to the host: host-link time instead
        optimizer_time = np.where(offload > 0, 0.0, optimizer_time)
        offload_time = offload_time_s(lay.memory, offload, updated, m_eff)
        return optimizer_time, offload_time, step + optimizer_time + offload_time
    return optimizer_time, np.zeros_like(m_eff), step + optimizer_time


def _memory(
    lay: LayoutCosts,
    idx: np.ndarray,
    cols: np.ndarray,
    dp: np.ndarray,
    zero: np.ndarray,
    m_eff: np.ndarray,
    hw: Hardware,
    eff: Efficiency,
) -> StepMemory:
    """The fullest stage's memory (`layout_terms.stage_memory`) of rows `idx` (`cols`: their memory columns)."""
    ep_share, cp, layer_params, offload, extra_in_flight, ileave = cols.T
    dpc = dp * cp  # ranks holding the same weights
    edp = dpc / ep_share  # ranks holding the same experts (expert-data-parallel group)
    assert lay.positions is not None
    weights, grads, optim, acts, total, fullest = stage_memory(
        lay.positions.take(idx, axis=0),
        ileave,
        layer_params,
        zero,
        dpc,
        edp,
        offload,
        m_eff,
        experts_possible=_positions_hold_experts(lay),
        extra_in_flight=extra_in_flight if extra_in_flight.any() else None,
    )
    reserve = lay.memory.reserve_bytes if lay.memory.reserve_bytes is not None else hw.hbm_bytes * eff.reserve_fraction
    overflow: np.ndarray | float = 0.0
    if _uses_host(lay):  # what the host cannot take stays on the GPU (`layout_terms.host_overflow_bytes`)
        host_acts = lay.act_offload_bytes.take(idx) if lay.act_offload_bytes is not None else 0.0
        if offload.any() or np.any(host_acts):
            params, experts = lay.params_per_gpu.take(idx), lay.expert_params_per_gpu.take(idx)
            overflow = host_overflow_bytes(lay.memory, params - experts, experts, offload, zero, dpc, edp, host_acts)
            total = total + overflow
    return StepMemory(weights, grads, optim, acts, reserve, total + reserve, fullest, overflow)


def _uses_host(lay: LayoutCosts) -> bool:
    """Whether any layout keeps optimizer state or activations in host memory (worked out once per layout costs,
    as `_column_any`)."""
    flag = lay.derived.get("step_uses_host")
    if flag is None:
        acts = lay.act_offload_bytes
        flag = _column_any(lay, _OFFLOAD) or (acts is not None and bool(acts.any()))
        lay.derived["step_uses_host"] = flag
    return flag
