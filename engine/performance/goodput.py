"""Goodput: the share of wall-clock time that advances training once failures and checkpoints are counted.

Why: a 2,000-GPU job fails every few hours (Llama 3: 419 unexpected interruptions in 54 days on 16,384 GPUs), so
ideal days understate the calendar time a purchase must cover. Model:

- job MTBF M = node MTBF / systems in the job (failures are independent and scale with the hardware);
- checkpoint write time delta = checkpoint bytes / (storage write bandwidth per GPU x GPUs);
- checkpoint interval tau by Daly (2006), higher order: `daly_interval` below, the one interval model of the
  project (costing's spot model uses it too, in hours);
- each interval of useful work tau costs tau + delta; each failure loses on average half an interval plus the
  restart time R, so goodput = tau / (tau + delta) x (1 - ((tau + delta) / 2 + R) / M).

The stall delta depends on `training.checkpointing` (resolved in whole_run.py): synchronous checkpoints stall for
the storage write; asynchronous ones (Megatron-Core dist_checkpointing, PyTorch DCP async_save) only for the
device-to-host copy, the storage write proceeding in the background; in-memory ones (Gemini, SOSP 2023) also copy
to host memory and restart from peers' memory, so the restart R is shorter; elastic ones (torchft) let a failed
replica drop out while the others continue, so R is mostly a short stall (recovery.py, which also picks the mode
for `auto`). R grows with the job's systems.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TypeVar

import numpy as np

__all__ = ["MIN_GOODPUT", "Goodput", "daly_interval", "expected_goodput", "goodput_fraction"]

# Floor that keeps days finite when failures outpace progress; the plan flags it.
MIN_GOODPUT = 0.01

Number = TypeVar("Number", float, np.ndarray)


def daly_interval(checkpoint: Number, mtbf: Number) -> Number:
    """Daly (2006) optimum checkpoint interval, in the unit of its inputs (seconds or hours alike).

    tau = sqrt(2 C M) [1 + (1/3) sqrt(C / 2M) + (1/9) (C / 2M)] - C for C < 2M, else M. Why the higher-order form
    rather than Young's sqrt(2 C M) or the first-order sqrt(2 C M) - C: it stays accurate when the checkpoint
    write is not small against the MTBF (large spot fleets, big models on slow storage), and it is one model for
    both the training goodput and the spot overhead. Works on floats and on numpy arrays (the layout search).
    """
    c = np.asarray(checkpoint, dtype=float)
    m = np.asarray(mtbf, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.where(m > 0, c / (2.0 * m), np.inf)
        series = np.sqrt(2.0 * c * m) * (1.0 + np.sqrt(x) / 3.0 + x / 9.0) - c
    tau = np.where(c >= 2.0 * m, m, series)
    return float(tau) if tau.ndim == 0 else tau  # type: ignore[return-value]


def goodput_fraction(checkpoint_s: Number, mtbf_s: Number, restart_s: float) -> Number:
    """Unfloored goodput with the Daly interval: tau / (tau + delta) x (1 - ((tau + delta) / 2 + R) / M)."""
    tau = daly_interval(checkpoint_s, mtbf_s)
    return tau / (tau + checkpoint_s) * (1.0 - ((tau + checkpoint_s) / 2.0 + restart_s) / mtbf_s)


@dataclass(frozen=True)
class Goodput:
    """Goodput and the figures it came from (seconds unless named otherwise)."""

    fraction: float
    systems: int
    node_mtbf_hours: float
    job_mtbf_s: float
    checkpoint_bytes: float
    checkpoint_write_s: float
    checkpoint_interval_s: float
    restart_s: float
    mtbf_source: str
    floored: bool
    checkpointing: str = ""  # the recovery mode used (recovery.py), resolved from `auto` when not pinned
    checkpointing_reason: str = ""  # why that mode, for the plan

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def expected_goodput(
    *,
    params: float,
    gpus: int,
    systems: int,
    node_mtbf_hours: float,
    write_gbyte_s_per_gpu: float,
    checkpoint_bytes_per_param: float,
    restart_s: float,
    mtbf_source: str = "",
    checkpointing: str = "",
    checkpointing_reason: str = "",
) -> Goodput:
    """Goodput of a job on `systems` systems with `gpus` GPUs training a `params`-parameter model."""
    systems = max(1, systems)
    mtbf = node_mtbf_hours * 3600.0 / systems
    ckpt_bytes = params * checkpoint_bytes_per_param
    delta = ckpt_bytes / (write_gbyte_s_per_gpu * 1e9 * max(gpus, 1))
    fraction = float(goodput_fraction(delta, mtbf, restart_s))
    floored = fraction < MIN_GOODPUT
    return Goodput(
        fraction=max(MIN_GOODPUT, fraction),
        systems=systems,
        node_mtbf_hours=node_mtbf_hours,
        job_mtbf_s=mtbf,
        checkpoint_bytes=ckpt_bytes,
        checkpoint_write_s=delta,
        checkpoint_interval_s=daly_interval(delta, mtbf),
        restart_s=restart_s,
        mtbf_source=mtbf_source,
        floored=floored,
        checkpointing=checkpointing,
        checkpointing_reason=checkpointing_reason,
    )
