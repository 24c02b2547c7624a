"""Training stage: pick a parallel layout that fits HBM and size the GPU count or the time to train.

Layout rule (Megatron-LM practice): tensor parallelism first, inside one NVLink domain, then pipeline
parallelism, data parallelism for the rest. Speed comes from one MFU assumption in `achieved_tflops_per_gpu`
so a roofline model can replace it later without touching the search.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from planner.sizing.assumptions import Assumptions
from planner.sizing.catalog import Gpu, System
from planner.sizing.memory import MemoryBreakdown, training_memory
from planner.sizing.request import TrainingSpec
from planner.sizing.workload import Workload

__all__ = ["SECONDS_PER_DAY", "TrainingLayout", "TrainingResult", "achieved_tflops_per_gpu", "size_training"]

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class TrainingLayout:
    """A parallel layout and the micro-batching it implies for the global batch."""

    tp: int
    pp: int
    dp: int
    micro_batch: int
    recompute: str
    micro_batches: int  # per pipeline per step (m)
    global_batch_sequences: int  # dp x micro_batch x m, what one step really trains on


@dataclass
class TrainingResult:
    """Outcome for one system: figures when feasible, otherwise the binding limit in `problems`."""

    feasible: bool
    problems: list[str] = field(default_factory=list)
    gpus: int = 0
    days: float = 0.0
    step_time_s: float = 0.0
    tokens_per_s: float = 0.0
    model_tflops_per_gpu: float = 0.0
    mfu: float = 0.0
    total_flops: float = 0.0
    flops_per_token: float = 0.0
    layout: TrainingLayout | None = None
    memory: MemoryBreakdown | None = None
    hbm_gib: float = 0.0
    peak_tflops: float = 0.0

    def as_dict(self) -> dict[str, object]:
        """The plan's `training` section (design.md contract keys plus the memory breakdown)."""
        assert self.layout is not None and self.memory is not None
        lay = self.layout
        return {
            "gpus": self.gpus,
            "days": self.days,
            "step_time_s": self.step_time_s,
            "tokens_per_s": self.tokens_per_s,
            "model_tflops_per_gpu": self.model_tflops_per_gpu,
            "mfu": self.mfu,
            "parallelism": {
                "tp": lay.tp,
                "pp": lay.pp,
                "dp": lay.dp,
                "micro_batch": lay.micro_batch,
                "recompute": lay.recompute,
            },
            "memory_per_gpu_gib": self.memory.total_gib,
            "memory_breakdown_gib": self.memory.as_dict(),
            "hbm_gib": self.hbm_gib,
            "micro_batches_per_step": lay.micro_batches,
            "global_batch_sequences": lay.global_batch_sequences,
            "pipeline_bubble_fraction": (lay.pp - 1) / lay.micro_batches,
            "total_flops": self.total_flops,
            "flops_per_token": self.flops_per_token,
            "peak_tflops_per_gpu": self.peak_tflops,
        }


def achieved_tflops_per_gpu(gpu: Gpu, precision: str, assumptions: Assumptions) -> tuple[float, float, float]:
    """(achieved, peak, mfu) TFLOP/s per GPU. The single place the speed model lives (roofline comes later)."""
    peak = gpu.dense_tflops(precision)
    if peak is None:
        raise ValueError(f"{gpu.id} has no {precision} tensor cores")
    mfu = assumptions["training_mfu_fp8"] if precision == "fp8" else assumptions["training_mfu"]
    return peak * mfu, peak, mfu


def _tp_options(work: Workload, system: System, max_tp: int, pinned: int | None) -> list[int]:
    """TP degrees that split heads and KV groups evenly and stay inside the NVLink domain."""
    s = work.shape
    limit = min(system.nvlink_domain_gpus, max_tp)
    options = [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= limit and s.heads % t == 0 and s.kv_heads % t == 0]
    if pinned is not None:
        return [pinned] if pinned in options else []
    return options


def _layouts(work: Workload, system: System, spec: TrainingSpec, max_tp: int) -> Iterator[tuple[int, int]]:
    """(tp, pp) in preference order: smallest PP first and, for each PP, the smallest TP."""
    pin = spec.parallelism
    tps = _tp_options(work, system, max_tp, pin.tp)
    pps = [pin.pp] if pin.pp is not None else list(range(1, work.shape.layers + 1))
    for pp in pps:
        for tp in tps:
            yield tp, pp


@dataclass
class _Search:
    """Why candidates were rejected, so an infeasible answer can name the binding limit and the closest miss."""

    min_memory: tuple[float, int, int] | None = None  # (GiB, tp, pp) of the leanest layout tried
    # Fastest a memory-fitting layout can go when the deadline needs more GPUs than it may use:
    # (days, usable GPUs, GPUs the deadline needs, binding limit "global batch" | "max_cluster_gpus").
    closest: tuple[float, int, int, str] | None = None
    divisibility_misses: list[int] = field(default_factory=list)

    def saw_memory(self, mem: MemoryBreakdown, tp: int, pp: int) -> None:
        if self.min_memory is None or mem.total_gib < self.min_memory[0]:
            self.min_memory = (mem.total_gib, tp, pp)

    def saw_limit(self, days: float, usable: int, needed: int, limit: str) -> None:
        if self.closest is None or days < self.closest[0]:
            self.closest = (days, usable, needed, limit)


def size_training(
    work: Workload, spec: TrainingSpec, system: System, gpu: Gpu, assumptions: Assumptions
) -> TrainingResult:
    """Size one training job on one system: layout, GPU count (or days), step time and memory.

    Unless recompute is pinned, selective recompute is tried first and full recompute only when nothing fits,
    as practitioners do (full recompute costs a third more hardware FLOPs).
    """
    if spec.parallelism.recompute is not None:
        return _size_with_recompute(work, spec, system, gpu, assumptions, spec.parallelism.recompute)
    selective = _size_with_recompute(work, spec, system, gpu, assumptions, "selective")
    if selective.feasible or not selective.problems or not selective.problems[0].startswith("memory"):
        return selective
    full = _size_with_recompute(work, spec, system, gpu, assumptions, "full")
    if full.feasible or not full.problems[0].startswith("memory"):
        return full
    return selective


def _size_with_recompute(
    work: Workload, spec: TrainingSpec, system: System, gpu: Gpu, assumptions: Assumptions, recompute: str
) -> TrainingResult:
    if gpu.dense_tflops(spec.precision) is None:
        return TrainingResult(
            False, [f"{gpu.name} has no {spec.precision.upper()} tensor cores; train in bf16 or pick a newer GPU."]
        )
    pin = spec.parallelism
    max_tp = assumptions["max_tensor_parallel"]
    if pin.tp is not None and not _tp_options(work, system, max_tp, pin.tp):
        return TrainingResult(
            False,
            [
                f"pinned tp={pin.tp} is not allowed on {system.id}: TP must be at most the {system.nvlink_domain_gpus}"
                f"-GPU NVLink domain and max_tensor_parallel={max_tp}, and must divide heads={work.shape.heads} and "
                f"kv_heads={work.shape.kv_heads}."
            ],
        )
    if pin.pp is not None and pin.pp > work.shape.layers:
        return TrainingResult(False, [f"pinned pp={pin.pp} exceeds the model's {work.shape.layers} layers."])

    achieved, peak, mfu = achieved_tflops_per_gpu(gpu, spec.precision, assumptions)
    flops_per_token = work.training_flops_per_token()
    total_flops = flops_per_token * spec.tokens
    micro_batch = pin.micro_batch or 1
    batch_sequences = max(1, spec.global_batch_tokens // work.shape.seq_len)
    max_gpus = assumptions["max_cluster_gpus"]
    reserve = assumptions["training_memory_reserve_fraction"]
    gps = system.gpus_per_system
    min_m_per_stage = assumptions["min_microbatches_per_stage"]
    search = _Search()

    ideal_gpus = None
    if spec.deadline_days is not None:
        ideal_gpus = total_flops / (spec.deadline_days * SECONDS_PER_DAY * achieved * 1e12)

    for tp, pp in _layouts(work, system, spec, max_tp):
        group = tp * pp
        # A pipeline needs at least pp micro-batches in flight (times min_microbatches_per_stage) to keep
        # every stage busy; that caps data parallelism for a given global batch.
        need_m = 1 if pp == 1 else min_m_per_stage * pp
        max_dp = batch_sequences // (micro_batch * need_m)
        if spec.gpus is not None:
            if spec.gpus % group:
                search.divisibility_misses.append(group)
                continue
            gpus = spec.gpus
        elif pin.dp is not None:
            gpus = pin.dp * group
        else:
            # Whole systems, and a whole number of model-parallel groups.
            unit = math.lcm(gps, group)
            gpus = max(unit, math.ceil(ideal_gpus / unit) * unit)
        dp = gpus // group
        if pin.dp is not None and pin.dp != dp:
            continue
        micro_batches = batch_sequences // (dp * micro_batch)
        mem = training_memory(
            work,
            tp=tp,
            pp=pp,
            dp=dp,
            micro_batch=micro_batch,
            micro_batches=max(1, micro_batches),
            recompute=recompute,
            hbm_gib=gpu.hbm_gib,
            reserve_fraction=reserve,
        )
        search.saw_memory(mem, tp, pp)
        if mem.total_gib > gpu.hbm_gib:
            continue
        if spec.gpus is None:
            # A deadline (or pinned dp) sets the size; the global batch and the cluster cap bound it.
            by_batch, by_cap = group * max_dp, (max_gpus // group) * group
            if gpus > min(by_batch, by_cap):
                usable = min(by_batch, by_cap)
                if usable >= group > 0:
                    days = total_flops / (usable * achieved * 1e12) / SECONDS_PER_DAY
                    search.saw_limit(days, usable, gpus, "global batch" if by_batch < by_cap else "cluster size")
                continue
        elif micro_batches < need_m:
            search.saw_limit(math.inf, group * max_dp, gpus, "global batch")
            continue
        layout = TrainingLayout(tp, pp, dp, micro_batch, recompute, micro_batches, dp * micro_batch * micro_batches)
        return _result(work, spec, layout, mem, gpus, achieved, peak, mfu, total_flops, flops_per_token, gpu)

    return TrainingResult(
        False, _explain_failure(work, spec, system, gpu, search, total_flops, achieved, ideal_gpus, max_gpus)
    )


def _result(
    work: Workload,
    spec: TrainingSpec,
    layout: TrainingLayout,
    mem: MemoryBreakdown,
    gpus: int,
    achieved: float,
    peak: float,
    mfu: float,
    total_flops: float,
    flops_per_token: float,
    gpu: Gpu,
) -> TrainingResult:
    cluster_flops = gpus * achieved * 1e12
    days = total_flops / cluster_flops / SECONDS_PER_DAY
    step_tokens = layout.global_batch_sequences * work.shape.seq_len
    problems: list[str] = []
    feasible = True
    if spec.deadline_days is not None and days > spec.deadline_days * (1 + 1e-9):
        feasible = False
        problems.append(
            f"the pinned layout uses {gpus} GPUs and needs {days:.1f} days, beyond the "
            f"{spec.deadline_days:g}-day deadline; unpin dp or raise it."
        )
    return TrainingResult(
        feasible=feasible,
        problems=problems,
        gpus=gpus,
        days=days,
        step_time_s=step_tokens * flops_per_token / cluster_flops,
        tokens_per_s=cluster_flops / flops_per_token,
        model_tflops_per_gpu=achieved,
        mfu=mfu,
        total_flops=total_flops,
        flops_per_token=flops_per_token,
        layout=layout,
        memory=mem,
        hbm_gib=gpu.hbm_gib,
        peak_tflops=peak,
    )


def _explain_failure(
    work: Workload,
    spec: TrainingSpec,
    system: System,
    gpu: Gpu,
    search: _Search,
    total_flops: float,
    achieved: float,
    ideal_gpus: float | None,
    max_gpus: int,
) -> list[str]:
    """Name the limit that binds, with the closest achievable figure."""
    problems: list[str] = []
    pin = spec.parallelism
    if search.closest is None and search.min_memory is not None and search.min_memory[0] > gpu.hbm_gib:
        need, tp, pp = search.min_memory
        problems.append(
            f"memory: the model does not fit {gpu.name} ({gpu.hbm_gib:g} GiB HBM): the leanest layout tried "
            f"(tp={tp}, pp={pp}) needs {need:.1f} GiB per GPU for weights, gradients, optimizer state, "
            f"activations and reserve."
        )
        if pin.tp is not None or pin.pp is not None:
            problems.append("the pinned parallelism rules out larger layouts; unpin tp/pp or raise them.")
        if spec.gpus is not None and search.divisibility_misses:
            problems.append(
                f"only layouts whose tp x pp divides {spec.gpus} GPUs were tried; a GPU count that is "
                f"a multiple of larger tp x pp groups may fit."
            )
        return problems
    if search.closest is not None:
        days, usable, needed, limit = search.closest
        sequences = max(1, spec.global_batch_tokens // work.shape.seq_len)
        if spec.gpus is not None:
            problems.append(
                f"global batch: {spec.global_batch_tokens} tokens = {sequences} sequences cannot feed the data "
                f"parallelism {spec.gpus} GPUs need (at most {usable} GPUs with this layout); raise "
                f"training.global_batch_tokens or use fewer GPUs."
            )
        elif limit == "global batch":
            problems.append(
                f"global batch: the deadline needs about {needed} GPUs, but {spec.global_batch_tokens} tokens = "
                f"{sequences} sequences caps data parallelism at {usable} GPUs; the shortest achievable time is "
                f"{days:.1f} days (deadline {spec.deadline_days:g} days). Raise training.global_batch_tokens."
            )
        else:
            problems.append(
                f"cluster size: the deadline needs about {needed} GPUs, above max_cluster_gpus={max_gpus}; with "
                f"{usable} GPUs the shortest achievable time is {days:.1f} days (deadline {spec.deadline_days:g} "
                f"days)."
            )
    if not problems and spec.gpus is not None and search.divisibility_misses:
        problems.append(
            f"layout: no tensor x pipeline layout that fits memory divides {spec.gpus} GPUs; try a multiple of "
            f"{min(search.divisibility_misses)} GPUs."
        )
    if not problems and ideal_gpus is not None and pin.dp is not None:
        problems.append(f"pinned dp={pin.dp} gives no layout that fits memory on {system.id}.")
    if not problems:
        problems.append(f"no parallel layout satisfies the request on {system.id}.")
    return problems
