"""Parallelism search: every valid (tp, pp, micro_batch, interleave, recompute, ep, cp, stage split, ZeRO, dp) for
one system.

Why exhaustive and vectorised: the best layout depends on the model, the batch and the hardware in ways no
fixed rule captures (Megatron's takeaways are a good prior but not always right), and numpy lets us score
every layout in milliseconds. Layout costs are computed once per system (`step_time.layout_costs`, over the grid
`layout_build.py` assembles), then:

- GPU-count mode: dp = gpus / (tp x cp x pp) for each layout and ZeRO stage; the fastest feasible plan wins.
- Deadline mode (`deadline.py`): for each layout and ZeRO stage, a vectorised bisection over whole-system GPU
  counts finds the smallest count that fits memory and meets the deadline; the smallest count wins, then the
  fastest. Every rejected candidate is counted under the first reason that rules it out.

The global batch is honoured exactly (dp x micro_batch x m = sequences, as Megatron requires); only when no
layout can do so does the search fall back to the nearest batch, and the plan says so (`Plan.batch_exact`).
Offload of optimizer state to host memory is searched only when nothing fits without it.

Expert parallelism (ep) is searched only for mixture-of-experts models, over the divisors of the expert count;
ep groups are carved out of data parallelism (Megatron-Core / DeepSpeed-MoE layout), so a candidate needs ep to
divide dp, or, with the experts folded over the tensor-parallel ranks (expert tensor parallelism 1, searched beside
the split layout), to divide a stage's tp x cp x dp ranks (`grid.expert_dp_factor`). Context parallelism (cp) is
searched over the degrees that keep `context_parallel_min_chunk_tokens` per GPU and split each sequence into
2 x cp chunks. ZeRO-0 is searched only when pinned: ZeRO-1 has the same collectives, a faster optimizer step and
less memory, so it never loses. Pinned fields of `training.parallelism` restrict the grid to the given value.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Gpu, System
from engine.performance.batch_ramp import fixed_share
from engine.performance.memory import OFFLOAD_CODES, memory_options_for
from engine.performance.step_time import (
    Efficiency,
    Hardware,
    LayoutCosts,
    StepCosts,
    efficiency_for,
    hardware_for,
    step_costs,
)
from engine.performance.whole_run import Z90, WholeRunInputs, run_efficiency
from engine.request.spec import TrainingSpec
from engine.search import deadline, fixed
from engine.search.count_efficiency import CountEfficiency, count_efficiency
from engine.search.grid import (
    CP_OPTIONS,
    PP_POWERS,
    LayoutKeys,
    layout_keys,
)
from engine.search.layout_build import grid_layouts
from engine.search.package import Scored, package_plan
from engine.search.results import REASONS, Infeasibility, Plan, SearchStats
from engine.workload.model import Workload

# The result records are re-exported: callers import them with the search.
__all__ = ["REASONS", "Infeasibility", "Plan", "SearchStats", "TrainingSearch"]

# Whole-system counts the batch-tolerance scan of deadline mode tries at most (speed: each is a GPU-count search).
SCAN_COUNTS = 8
SECONDS_PER_DAY = 86_400.0
ZERO_OPTIONS = (1, 2, 3)  # ZeRO-0 only when pinned (module note)
TP_OPTIONS = (1, 2, 4, 8, 16, 32, 64)
# Uneven pipeline degrees are searched down to this many layers per stage on average (a pinned pp is always
# honoured). Judgement: below ~3 layers a stage's send/receive and bubble outweigh what pipelining saves, and no
# published layout goes there (DeepSeek-V3: 61 layers on 16 stages, 3.8); the divisors of the layer count are
# all searched as before.
MIN_LAYERS_PER_UNEVEN_STAGE = 3


Attempt = Callable[[LayoutCosts, bool], tuple[Plan | None, SearchStats, Infeasibility]]


class TrainingSearch:
    """Layout costs of one (model, system, training request), ready for GPU-count or deadline queries."""

    def __init__(self, work: Workload, spec: TrainingSpec, system: System, gpu: Gpu, a: Assumptions) -> None:
        self.work, self.spec, self.system, self.gpu = work, spec, system, gpu
        self.hw: Hardware = hardware_for(gpu, system, spec.precision)
        self.eff: Efficiency = efficiency_for(gpu, spec.precision, a, system.network)
        self.memory = memory_options_for(system, self.hw.hbm_bytes, spec.memory.fp8_activations, a)
        self.batch_sequences = max(1, spec.global_batch_tokens // work.shape.seq_len)
        self.min_m_per_stage = a["min_microbatches_per_stage"]
        self.batch_tolerance = a["global_batch_tolerance"]
        self.max_gpus = a["max_cluster_gpus"]
        self.max_tp = a["max_tensor_parallel"]
        self.min_cp_chunk = a["context_parallel_min_chunk_tokens"]
        self.flops_per_token = work.training_flops_per_token()
        # Whole-run inputs: the deadline is met on the expected whole run (p50), whose efficiency falls as the
        # job grows (failures, restarts, stragglers).
        override = a["node_mtbf_hours"]
        self.node_mtbf_hours = override if override > 0 else system.node_mtbf_hours
        self.run = WholeRunInputs.resolve(params=work.params, checkpointing=spec.checkpointing,
                                          node_mtbf_hours=self.node_mtbf_hours,
                                          gpus_per_system=system.gpus_per_system, a=a)  # fmt: skip
        if spec.deadline_percentile == "p90":
            self.run = dataclasses.replace(self.run, deadline_z=Z90)
        t0 = time.perf_counter()
        pinned = spec.memory.offload
        self.layouts: LayoutCosts | None = grid_layouts(self, [OFFLOAD_CODES[pinned or "none"]])
        self._offload_layouts: LayoutCosts | None = None
        self.layout_seconds = time.perf_counter() - t0
        self._efficiency: tuple[WholeRunInputs | None, CountEfficiency | None] = (None, None)

    def inputs_key(self) -> tuple[object, ...]:
        """Everything the search's answers depend on (`search/shared.py`): two searches with equal keys give the
        same plans, statistics and misses. Read when queried, as the chain may set a batch ramp on `run` first."""
        return (self.work, self.spec, self.hw, self.eff, self.memory, self.run, self.system.gpus_per_system,
                self.system.nvlink_domain_gpus, self.max_gpus, self.max_tp, self.min_cp_chunk, self.min_m_per_stage,
                self.batch_tolerance)  # fmt: skip

    # ------------------------------------------------------------------ grid
    def tp_options(self) -> list[int]:
        """TP degrees inside the NVLink domain (and max_tensor_parallel) that split the heads evenly and either
        split the KV heads evenly or are a multiple of them (each KV head then replicated on tp / kv_heads GPUs)."""
        s = self.work.shape
        limit = min(self.system.nvlink_domain_gpus, self.max_tp)
        return [
            t for t in TP_OPTIONS if t <= limit and s.heads % t == 0 and (s.kv_heads % t == 0 or t % s.kv_heads == 0)
        ]

    def ep_options(self) -> list[int]:
        """Expert-parallel degrees: every divisor of the expert count for a MoE model (each GPU then holds whole
        experts), only 1 for a dense model. Crossing the NVLink domain is allowed and costed in the step time."""
        pin = self.spec.parallelism.ep
        moe = self.work.shape.moe
        if moe is None:
            return [1] if pin in (None, 1) else []
        options = [e for e in range(1, moe.experts + 1) if moe.experts % e == 0]
        if pin is not None:
            return [pin] if pin in options else []
        return options

    def fold_options(self) -> tuple[int, ...]:
        """Whether the experts are folded over the tensor-parallel ranks (1) or split by them (0): both for a MoE
        model unless `parallelism.etp` pins one (1 folds, `GridOptions.fold_only`; tp splits), only split for a
        dense model. Folding is searched only with sequence parallelism, which Megatron-Core requires for it."""
        if self.work.shape.moe is None:
            return (0,)
        etp = self.spec.parallelism.etp
        if etp == 1 or (etp is None and self.eff.sequence_parallel):
            return (0, 1)  # a pinned etp 1 keeps split layouts only where tp is 1, the same thing
        return (0,)

    def ep_overlap_options(self) -> tuple[int, ...]:
        """Whether the expert all-to-alls overlap the other micro-batch's computation (1, Megatron-Core's EP
        overlap) or run on the critical path (0): both for a MoE model unless `parallelism.ep_overlap` pins one;
        never for a dense model (the grid keeps overlap only where the layout can run it)."""
        pin = self.spec.parallelism.ep_overlap
        if self.work.shape.moe is None:
            return (0,)
        return (0, 1) if pin is None else (int(pin),)

    def cp_options(self) -> list[int]:
        """Context-parallel degrees: the pinned one, else those that split each sequence into 2 x cp equal chunks
        (Megatron-Core's load-balanced causal split) and keep `context_parallel_min_chunk_tokens` per GPU."""
        seq = self.work.shape.seq_len
        if self.spec.parallelism.cp is not None:
            return [self.spec.parallelism.cp] if seq % self.spec.parallelism.cp == 0 else []
        return [c for c in CP_OPTIONS if c == 1 or (seq % (2 * c) == 0 and seq // c >= self.min_cp_chunk)]

    def pp_options(self) -> list[int]:
        """Pipeline degrees: the divisors of the layer count, and the powers of two that leave at least
        MIN_LAYERS_PER_UNEVEN_STAGE layers per stage on average (uneven stages: 126 layers on 8 or 16 stages,
        61 on 8 or 16)."""
        layers = self.work.shape.layers
        if self.spec.parallelism.pp is not None:
            return [self.spec.parallelism.pp] if self.spec.parallelism.pp <= layers else []
        powers = {p for p in PP_POWERS if p * MIN_LAYERS_PER_UNEVEN_STAGE <= layers}
        return sorted({p for p in range(1, layers + 1) if layers % p == 0} | powers)

    def _offloaded(self) -> LayoutCosts | None:
        """The grid with optimizer (and gradient) offload, built the first time nothing fits without it."""
        if self._offload_layouts is None:
            self._offload_layouts = grid_layouts(
                self, [OFFLOAD_CODES["optimizer"], OFFLOAD_CODES["optimizer_and_params"]]
            )
        return self._offload_layouts

    def _zero_options(self) -> list[int]:
        z = self.spec.parallelism.zero_stage
        return [z] if z is not None else list(ZERO_OPTIONS)

    def group(self, lay: LayoutCosts, idx: np.ndarray | slice) -> np.ndarray:
        """GPUs per data-parallel rank: tp x cp x pp."""
        assert lay.cp is not None
        if lay.group is None:
            lay.group = (lay.tp * lay.cp * lay.pp).astype(np.int64)
        return lay.group[idx]

    def layout_keys(self, lay: LayoutCosts) -> LayoutKeys:
        """The per-layout figures every query filters and bounds on (`grid.LayoutKeys`), once per grid (kept with
        the layout costs, so a search sharing them reuses them)."""
        key = ("layout_keys", self.min_m_per_stage)
        keys = lay.derived.get(key)
        if keys is None:
            keys = layout_keys(lay, self.group(lay, slice(None)), self.min_m_per_stage)
            lay.derived[key] = keys
        return keys

    def step(self, lay: LayoutCosts, idx: np.ndarray, dp: np.ndarray, zero: np.ndarray, nearest: bool) -> StepCosts:
        seq = self.work.shape.seq_len
        return step_costs(lay, idx, dp, zero, self.batch_sequences, seq, self.hw, self.eff, nearest_batch=nearest)

    def days(self, costs: StepCosts) -> np.ndarray:
        steps = self.spec.tokens / np.maximum(costs.tokens_per_step, 1.0)
        return steps * costs.step_time_s / SECONDS_PER_DAY

    def goodput(self, gpus: np.ndarray, costs: StepCosts | None = None) -> np.ndarray:
        """Vectorised whole-run efficiency (whole_run.run_efficiency): expected days = ideal days / this. With the
        layouts' step costs it also counts the model's batch ramp-up; without a ramp it depends on the GPU count
        alone (`_count_efficiency`)."""
        if costs is None or self.run.ramp_excess <= 0:
            return self._count_efficiency(np.asarray(gpus, dtype=float))
        work = costs.pipeline_time_s - costs.ep_unpaired_time_s  # the unpaired passes are fixed per step too
        share = fixed_share(costs.step_time_s, work, costs.bubble_time_s)
        return run_efficiency(gpus, self.run, share)

    def _count_efficiency(self, gpus: np.ndarray) -> np.ndarray:
        """`run_efficiency` per GPU count: a search's thousands of candidates share a few dozen counts, each worked
        out once into a table shared by every search with equal whole-run inputs (`count_efficiency.py`; looked up
        again when the chain replaces `run`)."""
        run, table = self._efficiency
        if run is not self.run or table is None:
            table = count_efficiency(self.run)
            self._efficiency = (self.run, table)
        return table(gpus)

    def plan(self, lay: LayoutCosts, idx: np.ndarray, zero: np.ndarray, dp: np.ndarray, i: int, nearest: bool,
             scored: Scored | None = None) -> Plan:  # fmt: skip
        """Package candidate i as a `Plan` (`package.package_plan`)."""
        return package_plan(self, lay, idx, zero, dp, i, nearest, scored)

    # ------------------------------------------------------------------ retries
    def _search(self, attempt: Attempt) -> tuple[Plan | None, SearchStats, Infeasibility]:
        """Run `attempt` on the grid; when nothing fits, again with offload (unless pinned); when no layout can
        take the global batch exactly, again with the nearest batch. Statistics add up over the attempts."""
        t0 = time.perf_counter()
        total = SearchStats()
        lay = self.layouts
        if lay is None:  # nothing fits this system at all
            total.seconds = time.perf_counter() - t0
            return None, total, Infeasibility()
        plan, stats, miss = attempt(lay, False)
        total.add(stats)
        if plan is None and miss.min_memory_gib is not None and self.spec.memory.offload is None:
            offloaded = self._offloaded()
            if offloaded is not None:
                plan, stats, miss = attempt(offloaded, False)
                total.add(stats)
                lay = offloaded
        if plan is None and miss.no_exact_batch:
            plan, stats, miss = attempt(lay, True)
            total.add(stats)
            miss.no_exact_batch = True
        total.seconds = time.perf_counter() - t0
        return plan, total, miss

    # ------------------------------------------------------------------ GPU-count mode
    def fastest(self, gpus: int) -> tuple[Plan | None, SearchStats, Infeasibility]:
        """The fastest feasible plan on exactly `gpus` GPUs."""
        return self._search(lambda lay, nearest: fixed.fastest_many(self, lay, [gpus], nearest)[0])

    def fastest_many(
        self, gpu_counts: list[int], fold_nearest: bool = False
    ) -> list[tuple[Plan | None, SearchStats, Infeasibility]]:
        """`fastest` for several GPU counts (the frontier), sharing every pass; a count the first pass leaves
        without a plan is searched again alone, with the offload and nearest-batch retries. `fold_nearest` runs
        the nearest-batch retry inside the first pass (`fixed.fastest_many`): the same plans, statistics that may
        differ, for the frontier, which shows the plans alone."""
        t0 = time.perf_counter()
        if self.layouts is None or not gpu_counts:
            return [self.fastest(n) for n in gpu_counts]
        out = fixed.fastest_many(self, self.layouts, list(gpu_counts), False, fold_nearest)
        inexact = [
            i for i, (plan, _stats, miss) in enumerate(out) if plan is None and miss.no_exact_batch and not fold_nearest
        ]
        if inexact:  # no layout takes the batch exactly on these counts: the nearest batch, again together
            nearest = fixed.fastest_many(self, self.layouts, [gpu_counts[i] for i in inexact], True)
            for i, (plan, stats, miss) in zip(inexact, nearest, strict=True):
                stats.add(out[i][1])
                miss.no_exact_batch = True
                out[i] = (plan, stats, miss)
        seconds = (time.perf_counter() - t0) / len(gpu_counts)
        for _plan, stats, _miss in out:
            stats.seconds = seconds
        retry = [i for i, (plan, _s, miss) in enumerate(out) if plan is None and miss.min_memory_gib is not None]
        for i in retry:  # nothing fits: alone, with the offload retry
            out[i] = self.fastest(gpu_counts[i])
        return out

    def bound(self, lay: LayoutCosts, idx: np.ndarray, dp: np.ndarray, nearest: bool) -> tuple[np.ndarray, np.ndarray]:
        """(micro-batches per step, a lower bound on the ideal days): the pipeline time alone, m x (t_stage +
        p2p) + bubble, which `step_costs` only adds to (DP collectives, optimizer, offload are >= 0)."""
        keys = self.layout_keys(lay)
        mb = keys.micro_batch_f[idx]
        ratio = self.batch_sequences / (dp * mb)
        m = np.maximum(np.rint(ratio), 1.0) if nearest else np.floor(ratio)
        m_eff = np.maximum(m, 1.0)
        pipeline = m_eff * keys.per_micro_batch_s[idx] + keys.bubble_s[idx]
        tokens_per_step = np.maximum(dp * mb * m * self.work.shape.seq_len, 1.0)
        return m, self.spec.tokens / tokens_per_step * pipeline / SECONDS_PER_DAY

    def _batch_cap_gpus(self, lay: LayoutCosts, idx: np.ndarray) -> int:
        """Most GPUs the global batch can feed with any of these layouts (dp x mb x need_m <= sequences)."""
        max_dp = np.floor(self.batch_sequences / (lay.micro_batch[idx] * self.layout_keys(lay).need_m[idx]))
        return int(np.max(self.group(lay, idx) * max_dp)) if len(idx) else 0

    # ------------------------------------------------------------------ deadline mode
    def smallest_for_deadline(self, deadline_days: float) -> tuple[Plan | None, SearchStats, Infeasibility]:
        """The smallest whole-system GPU count that meets the deadline (then the fastest plan on it).

        Why the second search: an exact batch can force a large jump in GPUs (512 sequences on 8-GPU systems
        allow dp = 128 or 256, nothing between), while the training recipe is indifferent to a batch a few per
        cent off. So the nearest-batch search runs too, and its plan wins when it needs fewer GPUs and its batch
        is within `global_batch_tolerance` of the request; the plan then says which batch it used and why.
        """
        exact = self._search(lambda lay, nearest: deadline.smallest(self, lay, deadline_days, nearest))
        plan = exact[0]
        if self.batch_tolerance <= 0 or plan is None or not plan.batch_exact:
            return exact
        near = self._search(lambda lay, _nearest: deadline.smallest(self, lay, deadline_days, True))
        alt = near[0]
        if alt is None or alt.gpus >= plan.gpus:
            return exact
        if self._batch_ok(alt):
            near[1].add(exact[1])
            return near
        # The nearest batch at the smallest count is too far off: scan the whole-system counts between.
        for found, stats, miss in self._scan_counts(alt.gpus, plan.gpus, deadline_days):
            if found is not None:
                stats.add(exact[1])
                return found, stats, miss
        return exact

    def _batch_ok(self, plan: Plan) -> bool:
        return abs(plan.global_batch_sequences / self.batch_sequences - 1.0) <= self.batch_tolerance

    def _scan_counts(self, low: int, high: int, deadline_days: float):
        """Whole-system counts in (low, high), smallest first (at most SCAN_COUNTS, evenly spaced), each with its
        fastest plan if that plan meets the deadline (expected days) on a batch within the tolerance."""
        gps = self.system.gpus_per_system
        counts = list(range((low // gps + 1) * gps, high, gps))
        if len(counts) > SCAN_COUNTS:
            counts = sorted({counts[round(i * (len(counts) - 1) / (SCAN_COUNTS - 1))] for i in range(SCAN_COUNTS)})
        for n, (found, stats, miss) in zip(counts, self.fastest_many(counts), strict=True):
            if found is None or not self._batch_ok(found):
                continue
            work = found.pipeline_time_s - found.ep_unpaired_time_s
            share = fixed_share(found.step_time_s, work, found.bubble_time_s)
            if found.days_ideal / float(run_efficiency(np.array([n]), self.run, share)[0]) <= deadline_days:
                yield found, stats, miss
