"""Expected whole run: what a real training run pays for beyond the steady-state step time, as a range.

Why: benchmarks report the speed of a tuned stack between failures; a purchase has to cover the calendar time of
the whole run, which also loses time to failures and checkpoints (goodput.py), to evaluations and data-loader
stalls, to stragglers that slow every synchronous step as the job grows, and to the gap between a benchmark and a
production run (logging, software of its time, untuned kernels). Steady-state figures (tokens/s, MFU, step time)
stay as the step model gives them; `days` is the steady-state days divided by the product of these efficiencies.

Each efficiency is a named assumption with a plausible range (its `low`/`high`). The range of the whole-run time
treats each efficiency's logarithm as normal with p10/p90 at the range ends and adds the variances, so the p10,
p50 and p90 days are exact for that model and cheap enough for the search; the drivers are the factors ranked by
their share of the variance. Failures take their range from the node MTBF (published cluster failure rates
differ about two-fold: `mtbf_range_factor`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.assumptions.registry import ASSUMPTIONS, Assumptions
from engine.performance.goodput import MIN_GOODPUT, goodput_fraction

__all__ = ["Z90", "RunFactor", "WholeRun", "WholeRunInputs", "run_efficiency", "whole_run"]

Z90 = 1.2815515655446004  # standard normal quantile of 0.9: p10 and p90 are -/+ Z90 standard deviations


@dataclass(frozen=True)
class WholeRunInputs:
    """The request- and system-dependent inputs of the whole-run model (resolved once per search)."""

    node_mtbf_hours: float
    gpus_per_system: int
    checkpoint_bytes: float
    stall_bytes_s_per_gpu: float  # storage write (synchronous) or device-to-host copy (asynchronous, in memory)
    restart_s: float
    restart_per_doubling_s: float
    production_efficiency: float
    eval_stall_fraction: float
    straggler_per_doubling: float
    mtbf_range_factor: float

    @classmethod
    def resolve(cls, *, params: float, checkpointing: str, node_mtbf_hours: float, gpus_per_system: int,
                a: Assumptions) -> WholeRunInputs:
        stall_gbyte_s = (
            a["storage_write_gbyte_s_per_gpu"] if checkpointing == "synchronous" else a["host_copy_gbyte_s_per_gpu"]
        )
        # In-memory checkpoints (copies in peers' host memory) restart from memory, not storage, onto hot spares.
        restart_minutes = a["in_memory_restart_minutes"] if checkpointing == "in_memory" else a["restart_minutes"]
        return cls(
            node_mtbf_hours=node_mtbf_hours,
            gpus_per_system=gpus_per_system,
            checkpoint_bytes=params * a["checkpoint_bytes_per_param"],
            stall_bytes_s_per_gpu=stall_gbyte_s * 1e9,
            restart_s=restart_minutes * 60.0,
            restart_per_doubling_s=a["restart_minutes_per_doubling"] * 60.0,
            production_efficiency=a["production_efficiency"],
            eval_stall_fraction=a["eval_and_stall_fraction"],
            straggler_per_doubling=a["straggler_slowdown_per_doubling"],
            mtbf_range_factor=a["mtbf_range_factor"],
        )

    def systems(self, gpus):
        return np.maximum(np.ceil(np.maximum(np.asarray(gpus, dtype=float), 1.0) / self.gpus_per_system), 1.0)

    def goodput(self, gpus, mtbf_scale: float = 1.0):
        """Failures and checkpoints (goodput.py's formula) with the restart time growing with log2(systems)."""
        gpus = np.maximum(np.asarray(gpus, dtype=float), 1.0)
        systems = self.systems(gpus)
        mtbf = self.node_mtbf_hours * mtbf_scale * 3600.0 / systems
        delta = self.checkpoint_bytes / (self.stall_bytes_s_per_gpu * gpus)
        restart = self.restart_s + self.restart_per_doubling_s * np.log2(systems)
        return np.maximum(goodput_fraction(delta, mtbf, restart), MIN_GOODPUT)

    def stragglers(self, gpus, per_doubling: float | None = None):
        rate = self.straggler_per_doubling if per_doubling is None else per_doubling
        return 1.0 / (1.0 + rate * np.log2(self.systems(gpus)))


def run_efficiency(gpus, inputs: WholeRunInputs):
    """Share of wall-clock time that advances training at the p50 of every factor (vectorised over GPU counts)."""
    return (
        inputs.goodput(gpus)
        * inputs.production_efficiency
        * (1.0 - inputs.eval_stall_fraction)
        * inputs.stragglers(gpus)
    )


@dataclass(frozen=True)
class RunFactor:
    """One efficiency of the whole run: its value and plausible range (fractions of wall-clock time)."""

    name: str
    efficiency: float
    low: float
    high: float
    description: str

    @property
    def sigma(self) -> float:
        """Standard deviation of log(efficiency) with p10/p90 at low/high."""
        return (math.log(max(self.high, 1e-9)) - math.log(max(self.low, 1e-9))) / (2.0 * Z90)


@dataclass(frozen=True)
class WholeRun:
    efficiency: float
    days_p10: float
    days_p50: float
    days_p90: float
    factors: tuple[RunFactor, ...]
    drivers: tuple[str, ...]  # factor names by share of the spread, largest first (factors with no spread left out)


def _bounds(name: str) -> tuple[float, float]:
    a = ASSUMPTIONS[name]
    assert a.low is not None and a.high is not None, name
    return a.low, a.high


def whole_run(days_steady: float, gpus: int, inputs: WholeRunInputs) -> WholeRun:
    """The expected whole run on `gpus` GPUs from the steady-state days: p50 and the p10-p90 range, with drivers.

    The ranges are the assumptions' own low/high, except where the user overrode a value (the range then moves
    with it, keeping its relative width) and for failures, whose range comes from the node MTBF range.
    """
    g = float(inputs.goodput(gpus))
    g_lo = float(inputs.goodput(gpus, 1.0 / inputs.mtbf_range_factor))
    g_hi = float(inputs.goodput(gpus, inputs.mtbf_range_factor))
    p_lo, p_hi = _scaled("production_efficiency", inputs.production_efficiency)
    e_lo, e_hi = _scaled("eval_and_stall_fraction", inputs.eval_stall_fraction)
    s_lo, s_hi = _bounds("straggler_slowdown_per_doubling")
    factors = (
        RunFactor("failures and checkpoints", g, min(g_lo, g), max(g_hi, g),
                  "failures (job MTBF from the systems' MTBF), restarts and checkpoint stalls"),
        RunFactor("production vs benchmark", inputs.production_efficiency, p_lo, p_hi,
                  "the gap between a tuned benchmark and a production run, fitted on published whole runs"),
        RunFactor("evaluations and data stalls", 1.0 - inputs.eval_stall_fraction, 1.0 - e_hi, 1.0 - e_lo,
                  "periodic evaluations, data-loader and logging stalls"),
        RunFactor("stragglers", float(inputs.stragglers(gpus)), float(inputs.stragglers(gpus, s_hi)),
                  float(inputs.stragglers(gpus, s_lo)), "slow nodes that delay every synchronous step"),
    )
    efficiency = math.prod(f.efficiency for f in factors)
    sigma = math.sqrt(sum(f.sigma**2 for f in factors))
    days = days_steady / efficiency
    spread = sorted((f for f in factors if f.sigma > 1e-6), key=lambda f: f.sigma, reverse=True)
    return WholeRun(
        efficiency=efficiency,
        days_p10=days * math.exp(-Z90 * sigma),
        days_p50=days,
        days_p90=days * math.exp(Z90 * sigma),
        factors=factors,
        drivers=tuple(f.name for f in spread),
    )


def _scaled(name: str, value: float) -> tuple[float, float]:
    """The assumption's range, moved with an overridden value (same relative width)."""
    low, high = _bounds(name)
    default = ASSUMPTIONS[name].default
    if default <= 0:
        return low, high
    return low * value / default, high * value / default
