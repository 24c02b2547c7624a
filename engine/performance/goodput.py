"""Goodput: the share of wall-clock time that advances training once failures and checkpoints are counted.

Why: a 2,000-GPU job fails every few hours (Llama 3: 419 unexpected interruptions in 54 days on 16,384 GPUs), so
ideal days understate the calendar time a purchase must cover. Model (first order, Young 1974 / Daly 2006):

- job MTBF M = node MTBF / systems in the job (failures are independent and scale with the hardware);
- checkpoint write time delta = checkpoint bytes / (storage write bandwidth per GPU x GPUs);
- checkpoint interval tau = sqrt(2 delta M) - delta (Daly's first-order optimum; Young's sqrt(2 delta M) when
  delta << M), clamped to at least delta;
- each interval of useful work tau costs tau + delta; each failure loses on average half an interval plus the
  restart time R, so goodput = tau / (tau + delta) x (1 - ((tau + delta) / 2 + R) / M).

Synchronous checkpoints are assumed (the write stalls training); asynchronous multi-tier checkpointing would shrink
delta to the GPU-to-host copy and is not modelled.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

__all__ = ["MIN_GOODPUT", "Goodput", "expected_goodput"]

# Floor that keeps days finite when failures outpace progress; the plan flags it.
MIN_GOODPUT = 0.01


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
) -> Goodput:
    """Goodput of a job on `systems` systems with `gpus` GPUs training a `params`-parameter model."""
    systems = max(1, systems)
    mtbf = node_mtbf_hours * 3600.0 / systems
    ckpt_bytes = params * checkpoint_bytes_per_param
    delta = ckpt_bytes / (write_gbyte_s_per_gpu * 1e9 * max(gpus, 1))
    tau = max(delta, math.sqrt(2.0 * delta * mtbf) - delta)
    fraction = tau / (tau + delta) * (1.0 - ((tau + delta) / 2.0 + restart_s) / mtbf)
    floored = fraction < MIN_GOODPUT
    return Goodput(
        fraction=max(MIN_GOODPUT, fraction),
        systems=systems,
        node_mtbf_hours=node_mtbf_hours,
        job_mtbf_s=mtbf,
        checkpoint_bytes=ckpt_bytes,
        checkpoint_write_s=delta,
        checkpoint_interval_s=tau,
        restart_s=restart_s,
        mtbf_source=mtbf_source,
        floored=floored,
    )
