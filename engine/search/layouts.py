"""Parallelism search: every valid (tp, pp, micro_batch, interleave, recompute, ep, ZeRO, dp) for one system.

Why exhaustive and vectorised: the best layout depends on the model, the batch and the hardware in ways no
fixed rule captures (Megatron's takeaways are a good prior but not always right), and numpy lets us score
every layout in milliseconds. Layout costs are computed once per system (`step_time.layout_costs`), then:

- GPU-count mode: dp = gpus / (tp x pp) for each layout and ZeRO stage; the fastest feasible plan wins.
- Deadline mode: for each layout and ZeRO stage, a vectorised bisection over whole-system GPU counts finds the
  smallest count that fits memory and meets the deadline (time falls as GPUs rise); the smallest count wins,
  then the fastest. Every rejected candidate is counted under the first reason that rules it out.

Expert parallelism (ep) is searched only for mixture-of-experts models, over the divisors of the expert count;
ep groups are carved out of data parallelism (Megatron-Core / DeepSpeed-MoE layout), so a candidate needs ep to
divide dp. Dense models have the single option ep = 1, which leaves their grid exactly as before.

Pinned fields of `training.parallelism` restrict the grid to the given value.
"""

from __future__ import annotations

import itertools
import time
from typing import NamedTuple

import numpy as np

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Gpu, System
from engine.performance.goodput import MIN_GOODPUT, goodput_fraction
from engine.performance.memory import GIB, MemoryBreakdown
from engine.performance.step_time import (
    RECOMPUTE_CODES,
    RECOMPUTE_NAMES,
    Efficiency,
    Hardware,
    LayoutCosts,
    StepCosts,
    efficiency_for,
    hardware_for,
    layout_costs,
    step_costs,
)
from engine.request.spec import TrainingSpec
from engine.search.results import REASONS, Infeasibility, Plan, SearchStats
from engine.workload.model import Workload

# The result records are re-exported: callers import them with the search.
__all__ = ["REASONS", "Infeasibility", "Plan", "SearchStats", "TrainingSearch"]

SECONDS_PER_DAY = 86_400.0
MICRO_BATCH_OPTIONS = (1, 2, 4, 8)
INTERLEAVE_OPTIONS = (1, 2, 3, 4)
ZERO_OPTIONS = (0, 1, 2, 3)
TP_OPTIONS = (1, 2, 4, 8, 16, 32, 64)


class _DeadlineGrid(NamedTuple):
    """Deadline-mode candidates that have room to grow: layout index, ZeRO stage, dp step, largest multiple of
    it, GPUs per step, and the multiples the batch and the cluster cap allow."""

    idx: np.ndarray
    zero: np.ndarray
    q: np.ndarray
    k_hi: np.ndarray
    unit: np.ndarray
    k_cap_batch: np.ndarray
    k_cap_cluster: np.ndarray


class TrainingSearch:
    """Layout costs of one (model, system, training request), ready for GPU-count or deadline queries."""

    def __init__(self, work: Workload, spec: TrainingSpec, system: System, gpu: Gpu, a: Assumptions) -> None:
        self.work, self.spec, self.system, self.gpu = work, spec, system, gpu
        self.hw: Hardware = hardware_for(gpu, system, spec.precision)
        self.eff: Efficiency = efficiency_for(gpu, spec.precision, a)
        self.batch_sequences = max(1, spec.global_batch_tokens // work.shape.seq_len)
        self.min_m_per_stage = a["min_microbatches_per_stage"]
        self.max_gpus = a["max_cluster_gpus"]
        self.max_tp = a["max_tensor_parallel"]
        self.flops_per_token = work.training_flops_per_token()
        # Goodput inputs: the deadline is met on expected (not ideal) days, and goodput falls as systems rise.
        override = a["node_mtbf_hours"]
        self.node_mtbf_hours = override if override > 0 else system.node_mtbf_hours
        self.checkpoint_bytes = work.params * a["checkpoint_bytes_per_param"]
        self.write_bytes_s_per_gpu = a["storage_write_gbyte_s_per_gpu"] * 1e9
        self.restart_s = a["restart_minutes"] * 60.0
        t0 = time.perf_counter()
        self.layouts: LayoutCosts | None = self._layouts()
        self.layout_seconds = time.perf_counter() - t0

    # ------------------------------------------------------------------ grid
    def tp_options(self) -> list[int]:
        """TP degrees inside the NVLink domain (and max_tensor_parallel) that split heads and KV heads evenly."""
        s = self.work.shape
        limit = min(self.system.nvlink_domain_gpus, self.max_tp)
        return [t for t in TP_OPTIONS if t <= limit and s.heads % t == 0 and s.kv_heads % t == 0]

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

    def _layouts(self) -> LayoutCosts | None:
        pin = self.spec.parallelism
        layers = self.work.shape.layers
        tps = self.tp_options()
        if pin.tp is not None:
            tps = [pin.tp] if pin.tp in tps else []
        pps = [p for p in range(1, layers + 1) if layers % p == 0]
        if pin.pp is not None:
            pps = [pin.pp] if pin.pp in pps else []
        mbs = [b for b in MICRO_BATCH_OPTIONS if b <= self.batch_sequences] or [1]
        if pin.micro_batch is not None:
            mbs = [pin.micro_batch]
        rcs = [RECOMPUTE_CODES[pin.recompute]] if pin.recompute is not None else [0, 1, 2]
        eps = self.ep_options()
        rows = []
        for tp, pp, mb, rc in itertools.product(tps, pps, mbs, rcs):
            per_stage = layers // pp
            vs = [v for v in INTERLEAVE_OPTIONS if per_stage % v == 0] if pp > 1 else [1]
            if pin.interleave is not None:
                vs = [pin.interleave] if pin.interleave in vs or (pp > 1 and per_stage % pin.interleave == 0) else []
            rows.extend((tp, pp, mb, v, rc, ep) for v in vs for ep in eps)
        if not rows:
            return None
        arr = np.array(rows, dtype=np.int64)
        return layout_costs(
            self.work, self.hw, self.eff, arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3], arr[:, 4], arr[:, 5]
        )

    def _ep(self, idx: np.ndarray) -> np.ndarray:
        assert self.layouts is not None and self.layouts.ep is not None
        return self.layouts.ep[idx]

    def _zero_options(self) -> list[int]:
        z = self.spec.parallelism.zero_stage
        return [z] if z is not None else list(ZERO_OPTIONS)

    def _candidates(self) -> tuple[np.ndarray, np.ndarray]:
        """(layout index, zero stage) for every candidate, flattened."""
        assert self.layouts is not None
        n = len(self.layouts.tp)
        zeros = np.array(self._zero_options(), dtype=np.int64)
        idx = np.repeat(np.arange(n), len(zeros))
        zero = np.tile(zeros, n)
        return idx, zero

    def _need_m(self, idx: np.ndarray) -> np.ndarray:
        assert self.layouts is not None
        pp = self.layouts.pp[idx]
        return np.where(pp > 1, self.min_m_per_stage * pp, 1.0)

    def _days(self, costs: StepCosts) -> np.ndarray:
        steps = self.spec.tokens / np.maximum(costs.tokens_per_step, 1.0)
        return steps * costs.step_time_s / SECONDS_PER_DAY

    def goodput(self, gpus: np.ndarray) -> np.ndarray:
        """Vectorised goodput: goodput.py's one formula (`goodput_fraction`) on arrays."""
        gpus = np.maximum(np.asarray(gpus, dtype=float), 1.0)
        systems = np.maximum(np.ceil(gpus / self.system.gpus_per_system), 1.0)
        mtbf = self.node_mtbf_hours * 3600.0 / systems
        delta = self.checkpoint_bytes / (self.write_bytes_s_per_gpu * gpus)
        return np.maximum(goodput_fraction(delta, mtbf, self.restart_s), MIN_GOODPUT)

    def _plan(self, idx: np.ndarray, zero: np.ndarray, dp: np.ndarray, i: int) -> Plan:
        """Re-evaluate candidate i alone and package it."""
        lay = self.layouts
        assert lay is not None
        sl = slice(i, i + 1)
        c = step_costs(lay, idx[sl], dp[sl], zero[sl], self.batch_sequences, self.work.shape.seq_len, self.hw, self.eff)
        j = int(idx[i])
        tp, pp, d = int(lay.tp[j]), int(lay.pp[j]), int(dp[i])
        return Plan(
            tp=tp,
            pp=pp,
            dp=d,
            micro_batch=int(lay.micro_batch[j]),
            interleave=int(lay.interleave[j]),
            recompute=RECOMPUTE_NAMES[int(lay.recompute[j])],
            zero_stage=int(zero[i]),
            gpus=tp * pp * d,
            micro_batches=int(c.micro_batches[0]),
            step_time_s=float(c.step_time_s[0]),
            tokens_per_step=float(c.tokens_per_step[0]),
            days_ideal=float(self._days(c)[0]),
            stage_time_s=float(lay.stage_time_s[j]),
            pipeline_time_s=float(c.pipeline_time_s[0]),
            bubble_time_s=float(c.bubble_time_s[0]),
            tp_comm_time_s=float(lay.tp_comm_time_s[j]) * float(max(c.micro_batches[0], 1)),
            p2p_time_s=float(lay.p2p_time_s[j]) * float(max(c.micro_batches[0], 1)),
            dp_exposed_time_s=float(c.dp_exposed_time_s[0]),
            optimizer_time_s=float(c.optimizer_time_s[0]),
            memory=MemoryBreakdown(
                weights_gib=float(c.weights_bytes[0]) / GIB,
                gradients_gib=float(c.gradients_bytes[0]) / GIB,
                optimizer_gib=float(c.optimizer_bytes[0]) / GIB,
                activations_gib=float(c.activations_bytes[0]) / GIB,
                reserve_gib=float(c.reserve_bytes) / GIB,
            ),
            ep=int(self._ep(idx[sl])[0]),
            ep_comm_time_s=float(lay.ep_comm_time_s[j]) * float(max(c.micro_batches[0], 1)),
        )

    # ------------------------------------------------------------------ GPU-count mode
    def fastest(self, gpus: int) -> tuple[Plan | None, SearchStats, Infeasibility]:
        """The fastest feasible plan on exactly `gpus` GPUs."""
        t0, stats, miss = time.perf_counter(), SearchStats(), Infeasibility()
        if self.layouts is None:  # nothing fits this system at all
            stats.seconds = time.perf_counter() - t0
            return None, stats, miss
        lay, (idx, zero) = self.layouts, self._candidates()
        stats.candidates_evaluated = len(idx)
        group = (lay.tp * lay.pp)[idx]
        ok = (gpus % group) == 0
        stats.reject("gpus_not_divisible", np.count_nonzero(~ok))
        dp = np.where(ok, gpus // np.maximum(group, 1), 1).astype(float)
        pin_dp = self.spec.parallelism.dp
        if pin_dp is not None:
            bad = ok & (dp != pin_dp)
            stats.reject("pinned_dp", np.count_nonzero(bad))
            ok &= ~bad
        bad = ok & (dp % self._ep(idx) != 0)
        stats.reject("ep_not_dividing_dp", np.count_nonzero(bad))
        ok &= ~bad
        idx, zero, dp = idx[ok], zero[ok], dp[ok]
        if len(idx) == 0:
            stats.seconds = time.perf_counter() - t0
            return None, stats, miss
        c = step_costs(lay, idx, dp, zero, self.batch_sequences, self.work.shape.seq_len, self.hw, self.eff)
        stats.model_evaluations = len(idx)
        need_m = self._need_m(idx)
        batch_ok = c.micro_batches >= need_m
        stats.reject("global_batch", np.count_nonzero(~batch_ok))
        fits = c.memory_bytes <= self.hw.hbm_bytes
        stats.reject("memory", np.count_nonzero(batch_ok & ~fits))
        good = batch_ok & fits
        stats.feasible = int(np.count_nonzero(good))
        if not np.any(fits):
            k = int(np.argmin(c.memory_bytes))
            miss.min_memory_gib = float(c.memory_bytes[k]) / GIB
            miss.min_memory_layout = (int(lay.tp[idx[k]]), int(lay.pp[idx[k]]))
        if not np.any(good):
            if np.any(fits):
                miss.batch_cap_gpus = self._batch_cap_gpus(idx[fits])
            stats.seconds = time.perf_counter() - t0
            return None, stats, miss
        days = np.where(good, self._days(c), np.inf)
        best = int(np.argmin(days))
        plan = self._plan(idx, zero, dp, best)
        stats.seconds = time.perf_counter() - t0
        return plan, stats, miss

    def _batch_cap_gpus(self, idx: np.ndarray) -> int:
        """Most GPUs the global batch can feed with any of these layouts (dp x mb x need_m <= sequences)."""
        lay = self.layouts
        assert lay is not None
        group = lay.tp[idx] * lay.pp[idx]
        max_dp = np.floor(self.batch_sequences / (lay.micro_batch[idx] * self._need_m(idx)))
        return int(np.max(group * max_dp)) if len(idx) else 0

    # ------------------------------------------------------------------ deadline mode
    def _deadline_grid(self, idx: np.ndarray, zero: np.ndarray, stats: SearchStats) -> _DeadlineGrid:
        """Each candidate's dp step `q`, GPUs per step `unit` and largest multiple `k_hi` the batch and cluster
        allow; candidates with no room at all are counted as rejected and dropped."""
        lay = self.layouts
        assert lay is not None
        group = (lay.tp * lay.pp)[idx].astype(np.int64)
        gps = self.system.gpus_per_system
        pin_dp = self.spec.parallelism.dp
        ep = self._ep(idx).astype(np.int64)
        if pin_dp is not None:
            # A pinned dp fixes the size: one evaluation per candidate, whole systems not enforced.
            bad = pin_dp % ep != 0
            stats.reject("ep_not_dividing_dp", np.count_nonzero(bad))
            idx, zero, group = idx[~bad], zero[~bad], group[~bad]
            unit = group * pin_dp
            q = np.full_like(group, pin_dp)
            k_hi = np.ones_like(group)
            k_cap_batch = np.where(pin_dp * lay.micro_batch[idx] * self._need_m(idx) <= self.batch_sequences, 1, 0)
        else:
            # dp granularity: whole systems, and a multiple of ep (expert groups are carved out of dp).
            q = np.lcm(gps // np.gcd(gps, group), ep)
            unit = group * q
            k_cap_batch = np.floor(self.batch_sequences / (lay.micro_batch[idx] * self._need_m(idx) * q)).astype(
                np.int64
            )
            k_hi = np.minimum(k_cap_batch, self.max_gpus // unit)
        k_cap_cluster = self.max_gpus // unit
        no_room = k_hi < 1
        by_batch = no_room & (k_cap_batch < 1)
        stats.reject("global_batch", np.count_nonzero(by_batch))
        stats.reject("cluster_cap", np.count_nonzero(no_room & ~by_batch))
        keep = ~no_room
        return _DeadlineGrid(
            idx[keep], zero[keep], q[keep], k_hi[keep], unit[keep], k_cap_batch[keep], k_cap_cluster[keep]
        )

    def _deadline_miss(
        self, grid: _DeadlineGrid, fits_hi: np.ndarray, days_hi: np.ndarray, mem_hi: np.ndarray, miss: Infeasibility
    ) -> None:
        """Record the closest misses when no candidate meets the deadline at its largest size."""
        lay = self.layouts
        assert lay is not None
        if not np.any(fits_hi):
            k = int(np.argmin(mem_hi))
            miss.min_memory_gib = float(mem_hi[k]) / GIB
            miss.min_memory_layout = (int(lay.tp[grid.idx[k]]), int(lay.pp[grid.idx[k]]))
            return
        # If some layout already reaches the cluster cap, a bigger batch cannot help: name the cap.
        capped = fits_hi & (grid.k_cap_cluster <= grid.k_cap_batch)
        pool = capped if np.any(capped) else fits_hi
        d = np.where(pool, days_hi, np.inf)
        k = int(np.argmin(d))
        miss.best_days = float(d[k])
        miss.best_days_gpus = int(grid.k_hi[k] * grid.unit[k])
        miss.best_days_limit = "cluster size" if np.any(capped) else "global batch"
        miss.batch_cap_gpus = int(np.max(np.where(fits_hi, grid.k_cap_batch * grid.unit, 0)))

    def smallest_for_deadline(self, deadline_days: float) -> tuple[Plan | None, SearchStats, Infeasibility]:
        """The smallest whole-system GPU count that meets the deadline (then the fastest plan on it)."""
        t0, stats, miss = time.perf_counter(), SearchStats(), Infeasibility()
        if self.layouts is None:  # nothing fits this system at all
            stats.seconds = time.perf_counter() - t0
            return None, stats, miss
        lay, (idx, zero) = self.layouts, self._candidates()
        stats.candidates_evaluated = len(idx)
        grid = self._deadline_grid(idx, zero, stats)
        idx, zero, q = grid.idx, grid.zero, grid.q
        if len(idx) == 0:
            stats.seconds = time.perf_counter() - t0
            return None, stats, miss

        def evaluate(k: np.ndarray, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            dp = (q[sel] * k).astype(float)
            seq = self.work.shape.seq_len
            c = step_costs(lay, idx[sel], dp, zero[sel], self.batch_sequences, seq, self.hw, self.eff)
            stats.model_evaluations += len(dp)
            gpus = dp * (lay.tp * lay.pp)[idx[sel]]
            return c.memory_bytes <= self.hw.hbm_bytes, self._days(c) / self.goodput(gpus), c.memory_bytes

        fits_hi, days_hi, mem_hi = evaluate(grid.k_hi, np.arange(len(idx)))
        meets_hi = fits_hi & (days_hi <= deadline_days * (1 + 1e-9))
        stats.reject("memory", np.count_nonzero(~fits_hi))
        stats.reject("deadline", np.count_nonzero(fits_hi & ~meets_hi))
        if not np.any(meets_hi):  # (nothing meets it when nothing fits)
            self._deadline_miss(grid, fits_hi, days_hi, mem_hi, miss)
            stats.seconds = time.perf_counter() - t0
            return None, stats, miss

        # Vectorised bisection on k in (lo, hi]: hi always meets the deadline, lo never does (0 = sentinel).
        sel = np.nonzero(meets_hi)[0]
        stats.feasible = len(sel)
        lo = np.zeros(len(sel), dtype=np.int64)
        hi = grid.k_hi[sel].copy()
        while True:
            active = np.nonzero(hi - lo > 1)[0]
            if len(active) == 0:
                break
            mid = (lo[active] + hi[active]) // 2
            fits, days, _ = evaluate(mid, sel[active])
            good = fits & (days <= deadline_days * (1 + 1e-9))
            hi[active] = np.where(good, mid, hi[active])
            lo[active] = np.where(good, lo[active], mid)
        gpus = hi * grid.unit[sel]
        fewest = gpus == gpus.min()
        _, days_final, _ = evaluate(hi, sel)
        best = int(np.argmin(np.where(fewest, days_final, np.inf)))
        dp_all = np.ones(len(idx))
        dp_all[sel] = (q[sel] * hi).astype(float)
        plan = self._plan(idx, zero, dp_all, int(sel[best]))
        stats.seconds = time.perf_counter() - t0
        return plan, stats, miss
