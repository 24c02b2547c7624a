"""Expected whole run: what a real training run pays for beyond the steady-state step time, as a range.

Why: benchmarks report the speed of a tuned stack between failures; a purchase has to cover the calendar time of
the whole run, which also loses time to failures, restarts and checkpoint stalls (goodput.py), to evaluations and
data-loader stalls, to stragglers that slow every synchronous step as the job grows, to the batch ramp-up at the
start of training, and to the gap between a benchmark and a production run (logging, software of its time,
untuned kernels). Steady-state figures (tokens/s, MFU, step time) stay as the step model gives them; the whole
run's days are the steady-state days divided by the product of these efficiencies.

Each efficiency is a named assumption with a plausible range (its `low`/`high`). The range of the whole-run time
treats each efficiency's logarithm as normal with p10/p90 at the range ends and adds the variances, so the p10,
p50 and p90 days are exact for that model and cheap enough for the search; the drivers are the factors ranked by
their share of the variance. Failures take their range from the node MTBF (published cluster failure rates
differ about two-fold: `mtbf_range_factor`). The batch ramp is set by the model's published schedule and the
plan's own step breakdown, so it carries no range of its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from engine.assumptions.registry import ASSUMPTIONS, Assumptions
from engine.performance.batch_ramp import ramp_efficiency, ramp_excess
from engine.performance.goodput import MIN_GOODPUT, goodput_fraction
from engine.performance.mode_memo import FEW_COUNTS, modes_of, range_goodputs
from engine.performance.recovery import RecoveryMode, choose_modes, recovery_modes

__all__ = [
    "FACTOR_SOURCES",
    "Z90",
    "RunFactor",
    "WholeRun",
    "WholeRunInputs",
    "run_efficiency",
    "whole_run",
    "whole_run_days",
    "whole_runs",
]

Z90 = 1.2815515655446004  # standard normal quantile of 0.9: p10 and p90 are -/+ Z90 standard deviations

# The primary public sources behind each factor, as the plan shows them beside the factor.
FACTOR_SOURCES = {
    "failures and checkpoints": (
        "Failure rate: Meta, 'The Llama 3 Herd of Models' (arXiv 2407.21783, July 2024) section 3.3.4, 419 "
        "unexpected interruptions in 54 days on 16,384 H100; checkpoint interval: Daly, 'A higher order estimate "
        "of the optimum checkpoint interval for restart dumps' (FGCS 22, 2006); restart growing with scale: Jiang "
        "et al., 'MegaScale' (arXiv 2402.15627, Feb 2024); in-memory checkpoints: Wang et al., 'Gemini: Fast "
        "Failure Recovery in Distributed Training with In-Memory Checkpoints' (SOSP 2023) and Gemini Team, 'Gemini: A "
        "Family of Highly Capable Multimodal Models' (arXiv 2312.11805, Dec 2023); elastic recovery of a failed "
        "replica: PyTorch blog, 'Fault Tolerant Llama' (torchft, June 2025)"
    ),
    "production vs benchmark": (
        "Fitted on published whole runs: Touvron et al., 'LLaMA' (arXiv 2302.13971, Feb 2023) Table 15 and "
        "'Llama 2' (arXiv 2307.09288, July 2023) Tables 1-2; Biderman et al., 'Pythia' (arXiv 2304.01373, April "
        "2023); MosaicML, 'Introducing MPT-7B' (May 2023); Luccioni et al., 'Estimating the Carbon Footprint of "
        "BLOOM' (JMLR 2023); Li et al., 'StarCoder' (arXiv 2305.06161, May 2023); DeepSeek-AI, 'DeepSeek-V3 "
        "Technical Report' (arXiv 2412.19437, Dec 2024); Hugging Face, 'SmolLM3' (blog, July 2025: 24 days on 384 "
        "H100); Microsoft, microsoft/phi-4 model card (Dec 2024: 21 days on 1,920 H100); IBM, 'Granite 3.0 Language "
        "Models' (Oct 2024: 832,102 and 192,030 H100 GPU-hours for 8B and 2B); Meta, 'The Llama 3 Herd of "
        "Models' (arXiv 2407.21783, July 2024) and the Llama 3.1 model card "
        "(30.84M H100 GPU-hours for 405B)"
    ),
    "evaluations and data stalls": (
        "Jiang et al., 'MegaScale' (arXiv 2402.15627, Feb 2024): data loading and evaluation among the overheads "
        "removed at 12,288 GPUs; the range is a judgement"
    ),
    "stragglers": (
        "Jiang et al., 'MegaScale' (arXiv 2402.15627, Feb 2024) on stragglers at 10K+ GPUs; Meta, 'The Llama 3 "
        "Herd of Models' (arXiv 2407.21783, July 2024) section 3.3.4 on slow nodes"
    ),
    "batch ramp-up": (
        "The model's published batch schedule (e.g. Brown et al., 'GPT-3' (arXiv 2005.14165, 2020) section 2.3; "
        "Meta, 'The Llama 3 Herd of Models' (2024) section 3.4.1); fewer micro-batches per step leave the "
        "pipeline bubble and per-step collectives as they are (Narayanan et al., 'Megatron-LM' (SC 2021))"
    ),
}


@dataclass(frozen=True)
class WholeRunInputs:
    """The request- and system-dependent inputs of the whole-run model (resolved once per search)."""

    node_mtbf_hours: float
    gpus_per_system: int
    checkpoint_bytes: float
    modes: tuple[RecoveryMode, ...]  # the pinned checkpointing mode, or the candidates of `auto` (recovery.py)
    production_efficiency: float
    eval_stall_fraction: float
    straggler_per_doubling: float
    mtbf_range_factor: float
    ramp_excess: float = 0.0  # token-weighted mean of (1/x - 1) over the run, x = batch / plan's batch (0: no ramp)
    # The whole-run quantile a deadline must be met at, in standard deviations of log(days): 0 meets the p50
    # (expected) run, Z90 the p90 (a run this long or shorter nine times in ten).
    deadline_z: float = 0.0
    goodput_target: float = 0.9  # `auto` takes the least elaborate mode whose goodput reaches it

    @classmethod
    def resolve(
        cls, *, params: float, checkpointing: str, node_mtbf_hours: float, gpus_per_system: int, a: Assumptions
    ) -> WholeRunInputs:
        return cls(
            node_mtbf_hours=node_mtbf_hours,
            gpus_per_system=gpus_per_system,
            checkpoint_bytes=params * a["checkpoint_bytes_per_param"],
            modes=recovery_modes(params, checkpointing, a),
            production_efficiency=a["production_efficiency"],
            eval_stall_fraction=a["eval_and_stall_fraction"],
            straggler_per_doubling=a["straggler_slowdown_per_doubling"],
            mtbf_range_factor=a["mtbf_range_factor"],
            goodput_target=a["goodput_target"],
        )

    def with_ramp(self, ramp: Mapping[str, Any] | None, batch_tokens: float, tokens: float) -> WholeRunInputs:
        """These inputs with a preset's published batch schedule (see `ramp_excess`); unchanged without one."""
        if not ramp or batch_tokens <= 0 or tokens <= 0:
            return self
        return replace(self, ramp_excess=ramp_excess(ramp, batch_tokens, tokens))

    def systems(self, gpus):
        return np.maximum(np.ceil(np.maximum(np.asarray(gpus, dtype=float), 1.0) / self.gpus_per_system), 1.0)

    def mode_goodputs(self, gpus, mtbf_scale: float = 1.0):
        """Goodput (goodput.py's formula, unfloored) of every candidate mode: one row per mode."""
        gpus = np.maximum(np.asarray(gpus, dtype=float), 1.0)
        systems = self.systems(gpus)
        mtbf = self.node_mtbf_hours * mtbf_scale * 3600.0 / systems
        # Every mode in one numpy pass (a leading mode axis): element for element the expression of
        # RecoveryMode.restart_seconds and of one mode alone, at a third of the per-call cost.
        axis = (len(self.modes),) + (1,) * np.ndim(mtbf)
        stall = np.array([m.stall_bytes_s_per_gpu for m in self.modes]).reshape(axis)
        base = np.array([m.restart_s for m in self.modes]).reshape(axis)
        growth = np.array([m.restart_per_doubling_s for m in self.modes]).reshape(axis)
        restart = base + growth * np.log2(np.maximum(systems, 1.0))
        return goodput_fraction(self.checkpoint_bytes / (stall * gpus), mtbf, restart)

    def mode_index(self, gpus):
        """Which of `modes` a job on `gpus` GPUs uses (chosen on the expected failure rate, `choose_modes`)."""
        gpus = np.asarray(gpus, dtype=float)
        if len(self.modes) == 1:
            return np.zeros(gpus.shape, dtype=int)
        return choose_modes(self.mode_goodputs(gpus, 1.0), gpus, self.modes, self.goodput_target)

    def mode_at(self, gpus: int) -> RecoveryMode:
        """The mode a job on `gpus` GPUs uses (`mode_index`, remembered per inputs and count: `mode_memo.py`)."""
        return self.modes[modes_of(self, gpus)[0]]

    def mode_goodputs_at(self, gpus: int) -> tuple[float, ...]:
        """`mode_goodputs` of one GPU count as floats (remembered with `mode_at`)."""
        return modes_of(self, gpus)[1]

    def restart_seconds(self, gpus):
        """Per-failure loss of the mode used, growing with the job: base + growth per doubling x log2(systems)."""
        index = self.mode_index(gpus)
        systems = self.systems(gpus)
        return np.choose(index, [m.restart_seconds(systems) for m in self.modes])

    def goodput(self, gpus, mtbf_scale=1.0):
        """Failures and checkpoints (goodput.py's formula) in the mode used at each GPU count; the mode is chosen
        on the expected failure rate and kept when the p10/p90 range scales the MTBF. `mtbf_scale` may be a column
        of scales (shape (k, 1)): one row of goodputs per scale (`whole_runs` asks for three at once)."""
        gpus = np.asarray(gpus, dtype=float)
        fractions = self.mode_goodputs(gpus, mtbf_scale)
        if len(self.modes) == 1:
            index = np.zeros((1, *fractions.shape[1:]), dtype=int)
        elif np.ndim(mtbf_scale) == 0 and mtbf_scale == 1.0:  # the choice is made on these very goodputs
            index = choose_modes(fractions, gpus, self.modes, self.goodput_target)[None, ...]
        elif gpus.ndim == 1 and len(gpus) <= FEW_COUNTS:  # a plan's or a frontier's counts: each remembered
            index = np.array([modes_of(self, g)[0] for g in gpus.tolist()], dtype=int)
            index = np.broadcast_to(index, fractions.shape[1:])[None, ...]
        else:
            index = np.broadcast_to(self.mode_index(gpus), fractions.shape[1:])[None, ...]
        chosen = np.take_along_axis(fractions, index, axis=0)[0]
        return np.maximum(chosen, MIN_GOODPUT)

    def efficiency_ceiling(self, gpus):
        """An upper bound on `run_efficiency` at `gpus` GPUs and at every larger count, for any step breakdown.

        Why: the deadline search rules out GPU counts with it before running the step model (search/deadline.py).
        Each factor is bounded by one that does not rise with the job: goodput <= 1 - R / M (the interval's share
        tau / (tau + delta) and the lost half interval only lower it; R grows and M falls with systems), floored
        as `goodput` floors it; stragglers fall with systems; production and evaluation efficiencies are
        constants; the batch ramp and a p90 deadline only lower the efficiency (factors <= 1)."""
        systems = self.systems(gpus)
        doublings = np.log2(systems)  # the restart and stragglers formulas, with the systems counted once
        if self.node_mtbf_hours > 0:
            # The smallest per-failure loss of any candidate mode bounds whichever mode `auto` picks.
            restart = np.min([m.restart_s + m.restart_per_doubling_s * doublings for m in self.modes], axis=0)
            goodput = np.maximum(
                np.minimum(1.0 - restart * systems / (self.node_mtbf_hours * 3600.0), 1.0), MIN_GOODPUT
            )
        else:
            goodput = 1.0
        stragglers = 1.0 / (1.0 + self.straggler_per_doubling * doublings)
        return goodput * self.production_efficiency * (1.0 - self.eval_stall_fraction) * stragglers

    def stragglers(self, gpus, per_doubling=None):
        """Straggler efficiency 1 / (1 + rate x log2(systems)); `per_doubling` may be a column of rates (shape
        (k, 1)), one row per rate, as `goodput`'s scales."""
        rate = self.straggler_per_doubling if per_doubling is None else per_doubling
        return 1.0 / (1.0 + rate * np.log2(self.systems(gpus)))

    def log_sigma(self, gpus):
        """Standard deviation of log(days) on `gpus` GPUs (vectorised): the factors' p10-p90 ranges of `whole_run`,
        combined as independent log-normal spreads. The failure and straggler ranges depend on the job's size."""
        gpus = np.asarray(gpus, dtype=float)
        p_lo, p_hi = _scaled("production_efficiency", self.production_efficiency)
        e_lo, e_hi = _scaled("eval_and_stall_fraction", self.eval_stall_fraction)
        s_lo, s_hi = _bounds("straggler_slowdown_per_doubling")
        failures = np.log(self.goodput(gpus, self.mtbf_range_factor) / self.goodput(gpus, 1.0 / self.mtbf_range_factor))
        stragglers = np.log(self.stragglers(gpus, s_lo) / self.stragglers(gpus, s_hi))
        fixed = math.log(p_hi / p_lo) ** 2 + math.log((1.0 - e_lo) / (1.0 - e_hi)) ** 2
        return np.sqrt(failures**2 + stragglers**2 + fixed) / (2.0 * Z90)

    def ramp(self, share_fixed):
        """Batch ramp-up efficiency for steps whose fixed share is `share_fixed` (see `ramp_efficiency`)."""
        return ramp_efficiency(share_fixed, self.ramp_excess)


def run_efficiency(gpus, inputs: WholeRunInputs, share_fixed=0.0):
    """Share of wall-clock time that advances training at the p50 of every factor (vectorised over GPU counts,
    and over layouts through `share_fixed` when the model has a batch ramp); lowered to the deadline's quantile
    when the plan is sized at the p90 (`deadline_z`)."""
    efficiency = (
        inputs.goodput(gpus)
        * inputs.production_efficiency
        * (1.0 - inputs.eval_stall_fraction)
        * inputs.stragglers(gpus)
        * inputs.ramp(share_fixed)
    )
    if inputs.deadline_z > 0.0:
        # Planning at a higher quantile: the run is that many standard deviations (of log days) longer.
        efficiency = efficiency * np.exp(-inputs.deadline_z * inputs.log_sigma(gpus))
    return efficiency


@dataclass(frozen=True)
class RunFactor:
    """One efficiency of the whole run: its value and plausible range (fractions of wall-clock time)."""

    name: str
    efficiency: float
    low: float
    high: float
    description: str
    source: str = ""

    @property
    def sigma(self) -> float:
        """Standard deviation of log(efficiency) with p10/p90 at low/high."""
        return _log_spread(self.low, self.high)

    @property
    def days_multiplier(self) -> float:
        """How much this factor stretches the steady-state days (1 / efficiency)."""
        return 1.0 / max(self.efficiency, 1e-9)


@dataclass(frozen=True)
class WholeRun:
    efficiency: float
    days_p10: float
    days_p50: float
    days_p90: float
    factors: tuple[RunFactor, ...]
    drivers: tuple[str, ...]  # factor names by share of the spread, largest first (factors with no spread left out)

    def share_of_spread(self, name: str) -> float:
        """The factor's share of the variance of log(days) (0-1)."""
        total = sum(f.sigma**2 for f in self.factors)
        return next((f.sigma**2 / total for f in self.factors if f.name == name), 0.0) if total > 0 else 0.0


def _bounds(name: str) -> tuple[float, float]:
    a = ASSUMPTIONS[name]
    assert a.low is not None and a.high is not None, name
    return a.low, a.high


def whole_run(days_steady: float, gpus: int, inputs: WholeRunInputs, share_fixed: float = 0.0) -> WholeRun:
    """The expected whole run on `gpus` GPUs from the steady-state days: p50 and the p10-p90 range, with drivers.

    `share_fixed` is the plan's fixed share of a step (`fixed_share`), which the batch ramp needs. The ranges are
    the assumptions' own low/high, except where the user overrode a value (the range then moves with it, keeping
    its relative width) and for failures, whose range comes from the node MTBF range.
    """
    return whole_runs([days_steady], [gpus], inputs, [share_fixed])[0]


def whole_runs(
    days_steady: Sequence[float], gpus: Sequence[int], inputs: WholeRunInputs, share_fixed: Sequence[float]
) -> list[WholeRun]:
    """`whole_run` for several plans on the same inputs (the frontier's points): the size-dependent factors are
    computed over all of them at once (numpy's per-call cost dominates on one value), element by element as
    for one plan."""
    out = []
    for days_i, ranges in zip(days_steady, _factor_ranges(gpus, inputs, share_fixed), strict=True):
        factors = tuple(RunFactor(name, e, low, high, text, FACTOR_SOURCES[name])
                        for (name, text), (e, low, high) in zip(_FACTOR_TEXTS, ranges, strict=True))  # fmt: skip
        sigmas = [_log_spread(low, high) for _e, low, high in ranges]
        efficiency, p10, p50, p90 = _days_range(days_i, [e for e, _low, _high in ranges], sigmas)
        ranked = sorted((pair for pair in zip(sigmas, factors, strict=True) if pair[0] > 1e-6),
                        key=lambda pair: pair[0], reverse=True)  # fmt: skip
        drivers = tuple(f.name for _sigma, f in ranked)
        out.append(WholeRun(efficiency, p10, p50, p90, factors=factors, drivers=drivers))
    return out


def whole_run_days(
    days_steady: Sequence[float], gpus: Sequence[int], inputs: WholeRunInputs, share_fixed: Sequence[float]
) -> list[tuple[float, float, float]]:
    """The (p10, p50, p90) days of `whole_runs`, the same figures without the factor records: all the frontier's
    points show (a search packages about sixty of them per auto plan)."""
    out = []
    for days_i, ranges in zip(days_steady, _factor_ranges(gpus, inputs, share_fixed), strict=True):
        sigmas = [_log_spread(low, high) for _e, low, high in ranges]
        _efficiency, p10, p50, p90 = _days_range(days_i, [e for e, _low, _high in ranges], sigmas)
        out.append((p10, p50, p90))
    return out


# The whole run's factors in the order a plan lists them, each with the description it shows.
_FACTOR_TEXTS = (
    ("failures and checkpoints",
     "failures (job MTBF from the systems' MTBF), restarts that grow with the job, checkpoint stalls"),
    ("production vs benchmark",
     "how far a typical team's software and production run fall below the tuned benchmark the steady state is "
     "fitted on (fitted on published whole runs; a stack measured at the plan's steady state reads the fast end)"),
    ("evaluations and data stalls", "periodic evaluations, data-loader and logging stalls"),
    ("stragglers", "slow nodes that delay every synchronous step"),
    ("batch ramp-up", "smaller batches early in training: fewer micro-batches per step, a larger share of bubble"),
)  # fmt: skip


def _factor_ranges(gpus: Sequence[int], inputs: WholeRunInputs, share_fixed: Sequence[float]):
    """Per plan, each factor's (efficiency, low, high) in `_FACTOR_TEXTS`' order, the range widened to hold the
    efficiency. The p50, low and high rows of each size-dependent factor come from one numpy pass (numpy's
    per-call cost dominates on a few values); each element is the expression of that row's scale or rate alone."""
    counts = np.asarray(gpus, dtype=float)
    p_lo, p_hi = _scaled("production_efficiency", inputs.production_efficiency)
    e_lo, e_hi = _scaled("eval_and_stall_fraction", inputs.eval_stall_fraction)
    s_lo, s_hi = _bounds("straggler_slowdown_per_doubling")
    goodput = range_goodputs(inputs, counts.tolist())
    rates = np.array([[inputs.straggler_per_doubling], [s_hi], [s_lo]])
    stragglers = inputs.stragglers(counts, rates).tolist()
    ramps = np.broadcast_to(inputs.ramp(np.asarray(share_fixed, dtype=float)), counts.shape).tolist()
    evaluations = 1.0 - inputs.eval_stall_fraction
    out = []
    for i, ramp in enumerate(ramps):
        raw = (
            goodput[i],
            (inputs.production_efficiency, p_lo, p_hi),
            (evaluations, 1.0 - e_hi, 1.0 - e_lo),
            (stragglers[0][i], stragglers[1][i], stragglers[2][i]),
            (ramp, ramp, ramp),
        )
        out.append([(e, min(low, e), max(high, e)) for e, low, high in raw])
    return out


def _log_spread(low: float, high: float) -> float:
    """Standard deviation of log(efficiency) with p10/p90 at low/high."""
    return (math.log(max(high, 1e-9)) - math.log(max(low, 1e-9))) / (2.0 * Z90)


def _days_range(days_steady: float, efficiencies: list[float], sigmas: list[float]):
    """(efficiency, p10, p50, p90 days): the steady-state days over the factors' product, the range from their
    log-normal spreads added in quadrature."""
    efficiency = math.prod(efficiencies)
    sigma = math.sqrt(sum(x**2 for x in sigmas))
    days = days_steady / efficiency
    return efficiency, days * math.exp(-Z90 * sigma), days, days * math.exp(Z90 * sigma)


def _scaled(name: str, value: float) -> tuple[float, float]:
    """The assumption's range, moved with an overridden value (same relative width)."""
    low, high = _bounds(name)
    default = ASSUMPTIONS[name].default
    if default <= 0:
        return low, high
    return low * value / default, high * value / default
