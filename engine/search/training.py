"""Training stage: search the parallel layout, size the GPU count (or the time), add goodput and a frontier.

The speed model is the per-operation roofline in `step_time.py` (calibrated per GPU generation, see
docs/accuracy.md); the layout is found by the exhaustive vectorised search in `search.py`. This module turns
the chosen plan into the plan's `training` section: ideal and expected days, MFU and HFU, memory, the search
statistics and a time-vs-GPUs frontier for the system.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Gpu, System
from engine.performance.batch_ramp import fixed_share
from engine.performance.goodput import Goodput, expected_goodput
from engine.performance.whole_run import WholeRun, whole_run_days, whole_runs
from engine.request.spec import TrainingSpec
from engine.search.layouts import Plan, SearchStats, TrainingSearch
from engine.search.shared import SearchMemo, copy_outcome, copy_points
from engine.search.training_failure import explain_failure
from engine.search.training_recovery import failure_note, recovery_reason
from engine.search.training_result import TrainingLayout, TrainingResult
from engine.workload.model import Workload

__all__ = [
    "FRONTIER_FACTORS",
    "SECONDS_PER_DAY",
    "TrainingLayout",
    "TrainingResult",
    "expected_days",
    "hardware_flops_per_token",
    "size_training",
]

SECONDS_PER_DAY = 86_400.0
# GPU counts of the frontier, as multiples of the plan's count (then rounded to whole systems).
FRONTIER_FACTORS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)


def hardware_flops_per_token(work: Workload, recompute: str, flash_attention: bool) -> float:
    """Model FLOPs plus recomputed forward FLOPs (HFU numerator; training-calibration.md section 1).

    Full recompute replays every layer's forward (2 x layer compute params + 2 l s (qk + v) attention, 4 l s h when
    the head size is hidden / heads); selective replays the attention core unless fused attention already does it
    inside its backward.
    """
    s = work.shape
    model = work.training_flops_per_token()
    # Fused attention skips the blocks outside a sliding window; unfused attention computes the whole masked square.
    span = work.attention_span(s.seq_len) if flash_attention else float(s.seq_len)
    attention_fwd = 2.0 * s.layers * span * (work.qk_width + work.v_width)
    head = s.vocab * s.hidden
    if recompute == "full":
        return model + 2.0 * (work.compute_params_active - head) + attention_fwd
    if recompute == "selective" and not flash_attention:
        return model + attention_fwd
    return model


def expected_days(plan: Plan, search: TrainingSearch) -> WholeRun:
    """The plan's one time-to-train: the steady-state days (`Plan.days_ideal`) stretched by the whole run's
    efficiencies (whole_run.py), p50 with its p10-p90 range. The plan, its frontier and every reader use it."""
    return expected_days_many([plan], search)[0]


def expected_days_many(plans: list[Plan], search: TrainingSearch) -> list[WholeRun]:
    """`expected_days` for several plans of one search at once."""
    return whole_runs([p.days_ideal for p in plans], [p.gpus for p in plans], search.run, _fixed_shares(plans))


def expected_day_ranges(plans: list[Plan], search: TrainingSearch) -> list[tuple[float, float, float]]:
    """The (p10, p50, p90) days of `expected_days_many`, the same figures without the factor records: what the
    frontier's points show."""
    return whole_run_days([p.days_ideal for p in plans], [p.gpus for p in plans], search.run, _fixed_shares(plans))


def _fixed_shares(plans: list[Plan]) -> list[float]:
    """Each plan's `fixed_share` in one numpy pass (element for element the expression of one plan alone)."""
    steps = [p.step_time_s for p in plans]
    work = [p.pipeline_time_s - p.ep_unpaired_time_s for p in plans]  # EP overlap's unpaired passes are fixed too
    return fixed_share(steps, work, [p.bubble_time_s for p in plans]).tolist()


def _goodput(work: Workload, system: System, gpus: int, search: TrainingSearch, a: Assumptions) -> Goodput:
    """The failure-and-checkpoint record of the plan (the same inputs the search's whole-run efficiency uses), in
    the recovery mode the plan uses and with why."""
    run = search.run
    systems = math.ceil(gpus / system.gpus_per_system)
    mode = run.mode_at(gpus)
    return expected_goodput(
        params=work.params,
        gpus=gpus,
        systems=systems,
        node_mtbf_hours=search.node_mtbf_hours,
        write_gbyte_s_per_gpu=mode.stall_bytes_s_per_gpu / 1e9,
        checkpoint_bytes_per_param=a["checkpoint_bytes_per_param"],
        restart_s=float(mode.restart_seconds(systems)),
        mtbf_source=system.mtbf_source if a["node_mtbf_hours"] <= 0 else "assumption node_mtbf_hours",
        checkpointing=mode.name,
        checkpointing_reason=recovery_reason(work, gpus, search, a),
    )


def _result(
    work: Workload,
    spec: TrainingSpec,
    system: System,
    gpu: Gpu,
    plan: Plan,
    search: TrainingSearch,
    stats: SearchStats,
    a: Assumptions,
    detail: bool = True,
) -> TrainingResult:
    """The sizing's figures from the chosen plan. `detail=False` (a rented system's row, read for its GPUs, days,
    MFU and search alone) leaves out the goodput record and the whole run's factor records: the days are the same
    p50 (`expected_day_ranges`, the same figures without the records)."""
    flops_per_token = work.training_flops_per_token()
    hw_flops = hardware_flops_per_token(work, plan.recompute, search.eff.flash_attention)
    tokens_per_s = plan.tokens_per_step / plan.step_time_s
    peak = search.hw.gemm_peak_flops / 1e12
    model_tflops = tokens_per_s * flops_per_token / plan.gpus / 1e12
    hw_tflops = tokens_per_s * hw_flops / plan.gpus / 1e12
    good = _goodput(work, system, plan.gpus, search, a) if detail else None
    run = expected_days(plan, search) if detail else None
    days = run.days_p50 if run is not None else expected_day_ranges([plan], search)[0][1]
    layout = TrainingLayout(
        tp=plan.tp,
        pp=plan.pp,
        dp=plan.dp,
        micro_batch=plan.micro_batch,
        recompute=plan.recompute,
        micro_batches=plan.micro_batches,
        global_batch_sequences=plan.dp * plan.micro_batch * plan.micro_batches,
        interleave=plan.interleave,
        zero_stage=plan.zero_stage,
        ep=plan.ep,
        etp=plan.etp,
        cp=plan.cp,
        cp_comm=plan.cp_comm,
        cp_comm_windowed=plan.cp_comm_windowed,
        ep_overlap=plan.ep_overlap,
        stage_layers=plan.stage_layers,
        offload=plan.offload,
        activation_offload_layers=plan.activation_offload_layers,
    )
    return TrainingResult(
        feasible=True,
        gpus=plan.gpus,
        days=days,
        days_ideal=plan.days_ideal,
        step_time_s=plan.step_time_s,
        tokens_per_s=tokens_per_s,
        model_tflops_per_gpu=model_tflops,
        hardware_tflops_per_gpu=hw_tflops,
        mfu=model_tflops / peak,
        hfu=hw_tflops / peak,
        total_flops=float(flops_per_token * spec.tokens),  # JSON readers (and jsonb) lose ints past 2**53
        flops_per_token=flops_per_token,
        hardware_flops_per_token=hw_flops,
        layout=layout,
        hbm_gib=gpu.hbm_gib,
        peak_tflops=peak,
        plan=plan,
        goodput=good,
        whole_run=run,
        whole_run_note=failure_note(spec, run, good) if run is not None and good is not None else None,
        search=stats,
        global_batch_sequences_requested=search.batch_sequences,
        pinned_micro_batch=spec.parallelism.micro_batch,
        batch_tolerance=search.batch_tolerance,
        memory_options=search.memory,
    )


def _frontier(
    work: Workload, spec: TrainingSpec, system: System, search: TrainingSearch, gpus: int, a: Assumptions
) -> list[dict[str, object]]:
    """Fastest plan at GPU counts around the chosen one (whole systems): the time-vs-GPUs curve. A count at which no
    layout trains the requested batch exactly takes the nearest batch one can, as a plan pinned to that count does,
    and says so in its point."""
    gps = system.gpus_per_system
    counts = sorted({max(gps, round(gpus * f / gps) * gps) for f in FRONTIER_FACTORS})
    points: list[dict[str, object]] = []
    counts = [n for n in counts if n <= a["max_cluster_gpus"]]
    results = zip(counts, search.fastest_many(counts, fold_nearest=True), strict=True)
    found = [(n, plan) for n, (plan, _stats, _miss) in results if plan is not None]
    ranges = expected_day_ranges([plan for _n, plan in found], search)
    for (n, plan), (days_p10, days_p50, days_p90) in zip(found, ranges, strict=True):
        tokens_per_s = plan.tokens_per_step / plan.step_time_s
        points.append(
            {
                "gpus": n,
                "days_ideal": plan.days_ideal,
                "days": days_p50,
                "days_p10": days_p10,
                "days_p90": days_p90,
                "step_time_s": plan.step_time_s,
                "mfu": tokens_per_s * work.training_flops_per_token() / n / search.hw.gemm_peak_flops,
                # the batch this count trains on: the request's, or the nearest a layout at this count can take
                "global_batch_sequences": plan.dp * plan.micro_batch * plan.micro_batches,
                "parallelism": {
                    "tp": plan.tp,
                    "pp": plan.pp,
                    "dp": plan.dp,
                    "micro_batch": plan.micro_batch,
                    "recompute": plan.recompute,
                    "interleave": plan.interleave,
                    "zero_stage": plan.zero_stage,
                    "ep": plan.ep,
                    "etp": plan.etp,
                    "cp": plan.cp,
                    "cp_comm": plan.cp_comm,
                    "cp_comm_windowed": plan.cp_comm_windowed,
                    "ep_overlap": plan.ep_overlap,
                    "activation_offload_layers": plan.activation_offload_layers,
                },
            }
        )
    return points


def size_training(
    work: Workload,
    spec: TrainingSpec,
    system: System,
    gpu: Gpu,
    assumptions: Assumptions,
    batch_ramp: Mapping[str, Any] | None = None,
    frontier: bool = True,
    memo: SearchMemo | None = None,
) -> TrainingResult:
    """Size one training job on one system: search the layout, then GPU count (deadline) or days (GPU count).

    `batch_ramp` is the model preset's published batch schedule `{start_tokens, ramp_tokens}`, if any: the whole
    run (and the deadline search, which meets the whole run's p50) pays for its smaller early batches.
    `frontier=False` leaves the time-vs-GPUs frontier out (empty), and the goodput and whole-run records (None): a
    rented system's sizing is read for its GPU count and days only, and the frontier's eight GPU-count searches are
    most of a sizing's cost. `memo` (one per plan, `search/shared.py`) hands a system the search answers of an
    earlier system with equal search inputs."""
    if gpu.dense_tflops(spec.precision) is None:
        return TrainingResult(
            False, [f"{gpu.name} has no {spec.precision.upper()} tensor cores; train in bf16 or pick a newer GPU."]
        )
    pin = spec.parallelism
    max_tp = assumptions["max_tensor_parallel"]
    search = TrainingSearch(work, spec, system, gpu, assumptions)
    search.run = search.run.with_ramp(batch_ramp, search.batch_sequences * work.shape.seq_len, spec.tokens)
    if pin.tp is not None and pin.tp not in search.tp_options():
        return TrainingResult(
            False,
            [
                f"pinned tp={pin.tp} is not allowed on {system.id}: TP must be at most the {system.nvlink_domain_gpus}"
                f"-GPU NVLink domain and max_tensor_parallel={max_tp}, must divide heads={work.shape.heads}, and must "
                f"divide kv_heads={work.shape.kv_heads} or be a multiple of it."
            ],
        )
    memo = memo if memo is not None else SearchMemo()
    key = search.inputs_key()
    if spec.gpus is not None:
        gpus = spec.gpus
        plan, stats, miss = memo.answer((key, "gpus", gpus), lambda: search.fastest(gpus), copy_outcome)
    else:
        deadline = spec.deadline_days
        assert deadline is not None
        plan, stats, miss = memo.answer(
            (key, "deadline", deadline), lambda: search.smallest_for_deadline(deadline), copy_outcome
        )
    stats.seconds += search.layout_seconds
    if plan is None:
        problems = explain_failure(work, spec, system, gpu, miss, stats, max_gpus=assumptions["max_cluster_gpus"])
        result = TrainingResult(False, problems)
        result.search = stats
        return result
    result = _result(work, spec, system, gpu, plan, search, stats, assumptions, detail=frontier)
    if frontier:
        n = plan.gpus
        result.frontier = memo.answer(
            (key, "frontier", n), lambda: _frontier(work, spec, system, search, n, assumptions), copy_points
        )
    return result
