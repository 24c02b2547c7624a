"""Why a training search found no plan: the limit that binds (memory, global batch, cluster size, layout pins),
in words with the closest achievable figure, for the plan's `problems`.

Apart from `training.py` (which sizes the job) because it only reads the search's statistics and closest misses.
"""

from __future__ import annotations

import math

from engine.catalog.hardware import Gpu, System
from engine.request.spec import TrainingSpec
from engine.search.results import Infeasibility, SearchStats
from engine.workload.model import Workload

__all__ = ["explain_failure"]


def explain_failure(
    work: Workload, spec: TrainingSpec, system: System, gpu: Gpu, miss: Infeasibility, stats: SearchStats, max_gpus: int
) -> list[str]:
    """Name the limit that binds, with the closest achievable figure."""
    pin = spec.parallelism
    rejected = {k: v for k, v in stats.rejected_by_reason.items() if v}
    problems: list[str] = []
    if miss.min_memory_gib is not None and miss.best_days is None:
        tp, pp = miss.min_memory_layout or (0, 0)
        problems.append(
            f"memory: the model does not fit {gpu.name} ({gpu.hbm_gib:g} GiB HBM): the leanest layout tried "
            f"(tp={tp}, pp={pp}) needs {miss.min_memory_gib:.1f} GiB per GPU for weights, gradients, optimizer state, "
            f"activations and reserve (with any offloaded state the host memory cannot hold)."
        )
        if any(v is not None for v in (pin.tp, pin.pp, pin.zero_stage, pin.recompute)):
            problems.append("the pinned parallelism rules out leaner layouts; unpin tp/pp/zero_stage/recompute.")
        if spec.memory.activation_offload_layers is not None:
            problems.append(
                "the pinned training.memory.activation_offload_layers rules out recompute and pipelining; leave it "
                "to the search."
            )
        if spec.gpus is not None:
            problems.append(
                f"only layouts whose tp x pp divides {spec.gpus:,} GPUs were tried; more GPUs shard the state further."
            )
        return problems
    sequences = max(1, spec.global_batch_tokens // work.shape.seq_len)
    if miss.best_days is not None and spec.deadline_days is not None:
        needed = math.ceil((miss.best_days_gpus or 0) * miss.best_days / spec.deadline_days)
        if miss.best_days_limit == "global batch":
            problems.append(
                f"global batch: the deadline needs about {needed:,} GPUs, but {spec.global_batch_tokens:,} tokens = "
                f"{sequences:,} sequences caps data parallelism at {miss.batch_cap_gpus:,} GPUs; the shortest "
                f"achievable time is {miss.best_days:.1f} days (deadline {_days(spec.deadline_days)}). Raise "
                f"the global batch (tokens per step)."
            )
        else:
            problems.append(
                f"cluster size: the deadline needs about {needed:,} GPUs, more than the largest cluster the planner "
                f"builds ({max_gpus:,} GPUs, the max cluster GPUs assumption a request may raise); with "
                f"{miss.best_days_gpus:,} GPUs the shortest achievable time is {miss.best_days:.1f} days (deadline "
                f"{_days(spec.deadline_days)})."
            )
        return problems
    if rejected.get("global_batch") and spec.gpus is not None:
        cap = f" (at most {miss.batch_cap_gpus:,} GPUs with a layout that fits)" if miss.batch_cap_gpus else ""
        problems.append(
            f"global batch: {spec.global_batch_tokens:,} tokens = {sequences:,} sequences cannot feed the data "
            f"parallelism {spec.gpus:,} GPUs need{cap}; raise the global batch (tokens per step) or use fewer GPUs."
        )
    elif rejected.get("global_batch"):
        problems.append(
            f"global batch: {sequences:,} sequences per step cannot fill any layout's pipeline; raise "
            f"the global batch (tokens per step)."
        )
    if not problems and pin.ep_overlap:
        where = f"{spec.gpus:,} GPUs of {system.id}" if spec.gpus is not None else system.id
        problems.append(
            f"expert all-to-all overlap: the pinned overlap (training.parallelism.ep_overlap true) needs expert "
            f"parallelism (ep > 1) and, with pipeline parallelism, virtual stages (interleave > 1); no layout on "
            f"{where} that meets the other pins, the batch and memory has them. Leave the overlap to the search, or "
            f"plan on a GPU count an expert-parallel layout divides."
        )
    if not problems and rejected.get("gpus_not_divisible") and spec.gpus is not None:
        problems.append(f"layout: no tensor x pipeline layout that fits memory divides {spec.gpus:,} GPUs.")
    if not problems and rejected.get("ep_not_dividing_dp") and not stats.feasible and pin.ep is not None:
        problems.append(
            f"layout: pinned ep={pin.ep} must divide the data-parallel degree dp = GPUs / (tp x cp x pp), or with "
            f"the experts folded over the tensor-parallel ranks (etp 1) the tp x cp x dp ranks of a stage; no layout "
            f"that fits gives such a dp."
        )
    if not problems and pin.dp is not None:
        problems.append(f"pinned dp={pin.dp} gives no layout that fits memory and the batch on {system.id}.")
    offloaded = spec.memory.activation_offload_layers
    if not problems and offloaded:
        problems.append(
            f"activation offload: no layout on {system.id} keeps the pinned {offloaded} layers' activations within "
            f"the host memory a GPU may give them (a share of its {system.host_memory_gib_per_gpu:,.0f} GiB) while "
            f"the rest fit {gpu.hbm_gib:g} GiB of HBM; offload "
            f"fewer layers (training.memory.activation_offload_layers) or leave it to the search."
        )
    if not problems and pin.cp_comm is not None:
        method = pin.cp_comm.replace("_", "-")
        split = (
            f", whose all-to-all needs a group of context-parallel GPUs that divides the KV heads of a "
            f"tensor-parallel rank ({work.shape.kv_heads} KV heads / tp)"
            + (" inside one NVLink domain" if pin.cp_comm == "hierarchical" else "")
            if pin.cp_comm in ("all_to_all", "hierarchical")
            else ""
        )
        problems.append(
            f"context parallelism: the pinned exchange (training.parallelism.cp_comm, {method}) needs cp > 1"
            f"{split}; no layout on {system.id} that meets the other pins, the batch and memory has one. Leave "
            f"the exchange to the search, or pin a smaller tp or a cp that divides the sequence."
        )
    if not problems:
        problems.append(f"no parallel layout satisfies the request on {system.id} (rejected: {rejected}).")
    return problems


def _days(days: float) -> str:
    """A day count with its noun in the right number ("1 day", "2.5 days")."""
    return f"{days:g} day" + ("" if days == 1 else "s")
