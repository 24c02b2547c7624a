"""Checkpointing and recovery modes: how a training job survives a failure, and which one a plan uses.

Why: at 16K GPUs a job fails every few hours and restarting it from storage costs ~10 % of the time (Llama 3); at
100K GPUs a failure comes every half hour and the same restart would cost more than half. Teams at that scale do
not restart from storage: they keep checkpoints in peers' host memory and restart onto hot spares (Gemini SOSP
2023; Google's Gemini 1.0 report, 2023), and above that they let a failed data-parallel replica drop out and
rejoin from a spare while the others continue (PyTorch torchft, 2025), so the job pays only a short global stall.

Each mode is a checkpoint stall bandwidth and a per-failure loss `restart_s + restart_per_doubling_s x
log2(systems)` (the restart keeps growing with the job). `auto` resolves per GPU count to the least elaborate mode
that keeps goodput at or above `goodput_target` (failing that, the mode with the highest goodput), among the modes
the hardware supports: in-memory copies (and elastic recovery, which rejoins from them) need host memory for
`in_memory_checkpoint_copies` shards of the checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.assumptions.registry import Assumptions

__all__ = ["AUTO_ORDER", "RecoveryMode", "choose_modes", "recovery_modes"]

# The modes `auto` considers, least elaborate first (synchronous checkpoints are dominated by asynchronous ones).
AUTO_ORDER = ("asynchronous", "in_memory", "elastic")


@dataclass(frozen=True)
class RecoveryMode:
    """One way of checkpointing and recovering, with what it costs (seconds, bytes/s per GPU)."""

    name: str
    stall_bytes_s_per_gpu: float  # storage write (synchronous) or device-to-host copy (the others)
    restart_s: float  # per-failure loss before its growth with scale
    restart_per_doubling_s: float
    min_gpus: float = 1.0  # fewest GPUs whose host memory holds the in-memory copies (1: no host memory needed)

    def restart_seconds(self, systems):
        """Per-failure loss on `systems` systems: restart_s + restart_per_doubling_s x log2(systems)."""
        return self.restart_s + self.restart_per_doubling_s * np.log2(np.maximum(systems, 1.0))


def recovery_modes(params: float, checkpointing: str, a: Assumptions) -> tuple[RecoveryMode, ...]:
    """The modes a plan may use: the pinned one, or every mode of `AUTO_ORDER` for `auto`."""
    per_doubling_s = a["restart_minutes_per_doubling"] * 60.0
    host_copy = a["host_copy_gbyte_s_per_gpu"] * 1e9
    in_memory_s = a["in_memory_restart_minutes"] * 60.0
    # In-memory copies need host memory: copies x checkpoint bytes spread over the job's GPUs.
    copies_bytes = a["in_memory_checkpoint_copies"] * params * a["checkpoint_bytes_per_param"]
    min_gpus = max(1.0, copies_bytes / (a["checkpoint_host_memory_gib_per_gpu"] * 2**30))
    # Elastic: most failures cost the survivors only a stall to re-form communicators; the rest (failures a replica
    # cannot absorb: switches, software bugs) restart from memory. The per-failure loss is the expected mix.
    whole_job = a["elastic_whole_job_failure_fraction"]
    elastic_s = (1.0 - whole_job) * a["elastic_stall_seconds"] + whole_job * in_memory_s
    elastic_per_doubling_s = (1.0 - whole_job) * a["elastic_stall_seconds_per_doubling"] + whole_job * per_doubling_s
    modes = {
        "synchronous": RecoveryMode("synchronous", a["storage_write_gbyte_s_per_gpu"] * 1e9,
                                    a["restart_minutes"] * 60.0, per_doubling_s),
        "asynchronous": RecoveryMode("asynchronous", host_copy, a["restart_minutes"] * 60.0, per_doubling_s),
        "in_memory": RecoveryMode("in_memory", host_copy, in_memory_s, per_doubling_s, min_gpus),
        "elastic": RecoveryMode("elastic", host_copy, elastic_s, elastic_per_doubling_s, min_gpus),
    }  # fmt: skip
    if checkpointing == "auto":
        return tuple(modes[name] for name in AUTO_ORDER)
    return (modes[checkpointing],)


def choose_modes(goodputs: np.ndarray, gpus: np.ndarray, modes: tuple[RecoveryMode, ...], target: float) -> np.ndarray:
    """Index of the mode used at each GPU count: the first supported mode whose goodput (row k of `goodputs`) reaches
    `target`, else the supported mode with the highest goodput. A single (pinned) mode is always index 0."""
    if len(modes) == 1:
        return np.zeros(np.shape(gpus), dtype=int)
    supported = np.stack([np.asarray(gpus, dtype=float) >= m.min_gpus for m in modes])
    usable = np.where(supported, goodputs, -np.inf)
    meets = usable >= target
    first_meeting = np.argmax(meets, axis=0)
    return np.where(meets.any(axis=0), first_meeting, np.argmax(usable, axis=0))
