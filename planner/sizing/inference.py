"""Inference stage (first version): replica shape, batch, latency and replica count for a serving target.

Decode is modelled as HBM-bandwidth bound (with a compute ceiling), prefill as compute bound, the batch as
what KV memory and the TPOT target allow, and the replica count by Little's law with a utilisation target.
Prefill/decode interference inside a replica and network all-reduce time are not modelled yet.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from planner.sizing.assumptions import Assumptions
from planner.sizing.catalog import Gpu, System
from planner.sizing.memory import GIB
from planner.sizing.request import InferenceSpec
from planner.sizing.workload import Workload, bytes_per_param

__all__ = [
    "InferenceResult",
    "ReplicaShape",
    "compute_precision_for",
    "little_law_concurrency",
    "max_batch_for_tpot",
    "replicas_for_rate",
    "size_inference",
]


@dataclass(frozen=True)
class ReplicaShape:
    """One replica's figures at a given (tp, pp)."""

    tp: int
    pp: int
    weights_gib_per_gpu: float
    kv_budget_gib_per_gpu: float
    kv_bytes_per_token_per_gpu: float
    max_sequences_by_memory: int
    ttft_s: float
    tpot_batch1_s: float
    max_batch: int  # largest batch meeting TPOT and memory (0 when none)
    capacity_requests_per_s: float  # at max_batch, before the utilisation target

    @property
    def gpus(self) -> int:
        return self.tp * self.pp


@dataclass
class InferenceResult:
    """Outcome for one system: figures when feasible, otherwise the binding limit in `problems`."""

    feasible: bool
    problems: list[str] = field(default_factory=list)
    shape: ReplicaShape | None = None
    replicas: int = 0
    ttft_ms: float = 0.0
    tpot_ms: float = 0.0
    concurrency_per_replica: float = 0.0
    tokens_per_s: float = 0.0
    e2e_s: float = 0.0
    weight_bytes_per_param: float = 0.0
    kv_bytes_per_element: float = 0.0
    kv_bytes_per_token: float = 0.0
    compute_precision: str = ""
    peak_tflops: float = 0.0
    hbm_tbps: float = 0.0

    @property
    def gpus(self) -> int:
        return self.replicas * self.shape.gpus if self.shape else 0

    def as_dict(self) -> dict[str, object]:
        """The plan's `inference` section."""
        assert self.shape is not None
        sh = self.shape
        return {
            "gpus": self.gpus,
            "replicas": self.replicas,
            "gpus_per_replica": sh.gpus,
            "ttft_ms": self.ttft_ms,
            "tpot_ms": self.tpot_ms,
            "tokens_per_s": self.tokens_per_s,
            "parallelism": {"tp": sh.tp, "pp": sh.pp},
            "batch_per_replica": math.ceil(self.concurrency_per_replica - 1e-9),
            "concurrency_per_replica": self.concurrency_per_replica,
            "max_batch_per_replica": sh.max_batch,
            "kv_cache_gib_per_replica": sh.kv_budget_gib_per_gpu * sh.gpus,
            "weights_gib_per_gpu": sh.weights_gib_per_gpu,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "end_to_end_s": self.e2e_s,
            "capacity_requests_per_s_per_replica": sh.capacity_requests_per_s,
            "compute_precision": self.compute_precision,
        }


def compute_precision_for(gpu: Gpu, precision: str) -> str:
    """Tensor-core precision the math runs in. INT8/INT4 are treated as weight-only (16-bit math), and a
    format the GPU lacks falls back the same way, so no speed is claimed for hardware that is not there."""
    if precision in ("fp8", "fp4") and gpu.dense_tflops(precision) is not None:
        return precision
    if precision == "fp4" and gpu.fp8_dense_tflops is not None:
        return "fp8"
    return "bf16"


def little_law_concurrency(requests_per_s: float, latency_s: float) -> float:
    """Little's law: requests in the system = arrival rate x time each spends in it."""
    return requests_per_s * latency_s


def replicas_for_rate(requests_per_s: float, max_batch: int, e2e_s: float, utilization: float) -> int:
    """Replicas so each carries at most `utilization` of what `max_batch` concurrent sequences sustain.

    By Little's law a replica holding `max_batch` sequences for `e2e_s` each serves max_batch / e2e_s req/s.
    """
    capacity = max_batch / e2e_s
    return max(1, math.ceil(requests_per_s / (utilization * capacity) - 1e-9))


def max_batch_for_tpot(tpot_s: Callable[[int], float], target_s: float, limit: int) -> int:
    """Largest batch in [1, limit] whose TPOT meets the target (TPOT grows with batch), 0 if none does."""
    if limit < 1 or tpot_s(1) > target_s:
        return 0
    lo, hi = 1, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if tpot_s(mid) <= target_s:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass(frozen=True)
class _Model:
    """Per-request constants for the latency formulas, so layouts evaluate cheaply."""

    work: Workload
    spec: InferenceSpec
    gpu: Gpu
    weight_bytes_per_param: float
    kv_bytes_per_token: float
    peak_flops: float
    bandwidth_bytes_s: float
    mbu: float
    overhead_s: float
    prefill_mfu: float
    memory_utilization: float
    batch_cap: int

    @property
    def mean_context(self) -> float:
        """Average tokens in a sequence's cache over its decode: prompt plus half the output."""
        return self.spec.prompt_tokens + self.spec.output_tokens / 2.0

    def weights_read_bytes(self, batch: float) -> float:
        """Weight bytes one decode step reads. For MoE, the experts a batch touches: 1 - (1 - k/E)^B of them."""
        w = self.work
        if w.shape.moe is None:
            return w.params * self.weight_bytes_per_param
        touched = 1.0 - (1.0 - w.active_experts / w.experts) ** batch
        return (w.dense_params + w.expert_params * touched) * self.weight_bytes_per_param

    def tpot_s(self, batch: float, tp: int) -> float:
        """max(bandwidth time, compute time) + overhead. PP stages run in turn, so they do not shorten it."""
        kv_shards = min(tp, self.work.shape.kv_heads)
        bytes_per_gpu = (
            self.weights_read_bytes(batch) / tp + batch * self.mean_context * self.kv_bytes_per_token / kv_shards
        )
        memory_s = bytes_per_gpu / (self.bandwidth_bytes_s * self.mbu)
        compute_s = (
            batch * self.work.decode_flops_per_token(self.mean_context) / (tp * self.peak_flops * self.prefill_mfu)
        )
        return max(memory_s, compute_s) + self.overhead_s

    def ttft_s(self, tp: int) -> float:
        """Prefill FLOPs over the replica's tensor-parallel compute (pipeline stages run in turn)."""
        return self.work.prefill_flops(self.spec.prompt_tokens) / (tp * self.peak_flops * self.prefill_mfu)

    def replica(self, tp: int, pp: int) -> ReplicaShape:
        hbm = self.gpu.hbm_gib * GIB * self.memory_utilization
        weights = self.work.params * self.weight_bytes_per_param / (tp * pp)
        kv_budget = hbm - weights
        kv_per_gpu = self.kv_bytes_per_token / min(tp, self.work.shape.kv_heads) / pp
        seq_tokens = self.spec.prompt_tokens + self.spec.output_tokens
        max_seqs = max(0, math.floor(kv_budget / (kv_per_gpu * seq_tokens))) if kv_budget > 0 else 0
        ttft = self.ttft_s(tp)
        target = self.spec.tpot_ms / 1000.0
        max_batch = max_batch_for_tpot(lambda b: self.tpot_s(b, tp), target, min(max_seqs, self.batch_cap))
        capacity = 0.0
        if max_batch:
            capacity = max_batch / (ttft + self.spec.output_tokens * self.tpot_s(max_batch, tp))
        return ReplicaShape(
            tp,
            pp,
            weights / GIB,
            max(0.0, kv_budget) / GIB,
            kv_per_gpu,
            max_seqs,
            ttft,
            self.tpot_s(1, tp),
            max_batch,
            capacity,
        )


def _shapes(work: Workload, system: System, spec: InferenceSpec, max_tp: int) -> list[tuple[int, int]]:
    limit = min(system.nvlink_domain_gpus, max_tp)
    tps = [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= limit and work.shape.heads % t == 0]
    pps = [p for p in (1, 2, 4, 8, 16) if p <= work.shape.layers]
    pin = spec.parallelism
    if pin.tp is not None:
        tps = [pin.tp] if pin.tp in tps else []
    if pin.pp is not None:
        pps = [pin.pp] if pin.pp <= work.shape.layers else []
    return [(tp, pp) for pp in pps for tp in tps]


def _operating_concurrency(
    rate: float, ttft_s: float, output_tokens: int, tpot: Callable[[float], float], upper: float
) -> float:
    """Solve B = rate x (TTFT + out x TPOT(B)) by bisection: the concurrency Little's law gives at this load."""
    lo, hi = 0.0, upper
    for _ in range(60):
        mid = (lo + hi) / 2
        if rate * (ttft_s + output_tokens * tpot(mid)) > mid:
            lo = mid
        else:
            hi = mid
    return hi


def size_inference(
    work: Workload, spec: InferenceSpec, system: System, gpu: Gpu, assumptions: Assumptions
) -> InferenceResult:
    """Pick the replica shape needing the fewest GPUs (then the smallest) that meets TTFT, TPOT and memory."""
    compute_precision = compute_precision_for(gpu, spec.precision)
    peak = gpu.dense_tflops(compute_precision) or gpu.bf16_dense_tflops
    wbpp = bytes_per_param(spec.precision, assumptions["int4_bytes_per_param"], assumptions["fp4_bytes_per_param"])
    kv_elem = assumptions["kv_cache_bytes_per_element"]
    model = _Model(
        work=work,
        spec=spec,
        gpu=gpu,
        weight_bytes_per_param=wbpp,
        kv_bytes_per_token=work.kv_bytes_per_token(kv_elem),
        peak_flops=peak * 1e12,
        bandwidth_bytes_s=gpu.hbm_tbps * 1e12,
        mbu=assumptions["decode_mbu"],
        overhead_s=assumptions["decode_step_overhead_ms"] / 1000.0,
        prefill_mfu=assumptions["prefill_mfu"],
        memory_utilization=assumptions["inference_memory_utilization"],
        batch_cap=assumptions["max_batch_per_replica"],
    )
    utilization = assumptions["serving_utilization_target"]
    max_gpus = assumptions["max_cluster_gpus"]
    max_tp = assumptions["max_tensor_parallel"]
    base = InferenceResult(
        False,
        weight_bytes_per_param=wbpp,
        kv_bytes_per_element=kv_elem,
        kv_bytes_per_token=model.kv_bytes_per_token,
        compute_precision=compute_precision,
        peak_tflops=peak,
        hbm_tbps=gpu.hbm_tbps,
    )

    layouts = _shapes(work, system, spec, max_tp)
    if not layouts:
        base.problems.append(
            f"pinned parallelism is not allowed on {system.id}: TP must divide heads={work.shape.heads} and stay "
            f"within min(NVLink domain {system.nvlink_domain_gpus}, max_tensor_parallel {max_tp}); PP must not "
            f"exceed {work.shape.layers} layers."
        )
        return base

    shapes = [model.replica(tp, pp) for tp, pp in layouts]
    best: tuple[int, int, int, ReplicaShape] | None = None
    ttft_target = spec.ttft_ms / 1000.0
    for sh in shapes:
        if sh.max_batch < 1 or sh.ttft_s > ttft_target:
            continue
        replicas = replicas_for_rate(
            spec.requests_per_s, sh.max_batch, sh.max_batch / sh.capacity_requests_per_s, utilization
        )
        key = (replicas * sh.gpus, sh.gpus, sh.pp, sh)
        if best is None or key[:3] < best[:3]:
            best = key
    if best is None:
        base.problems.extend(_explain_failure(shapes, spec, gpu, model))
        return base
    total_gpus, _, _, sh = best
    if total_gpus > max_gpus:
        base.problems.append(f"cluster size: the target needs {total_gpus} GPUs, above max_cluster_gpus={max_gpus}.")
        return base

    replicas = total_gpus // sh.gpus
    rate = spec.requests_per_s / replicas
    tp = sh.tp
    concurrency = _operating_concurrency(
        rate, sh.ttft_s, spec.output_tokens, lambda b: model.tpot_s(b, tp), float(sh.max_batch)
    )
    tpot = model.tpot_s(concurrency, tp)
    base.feasible = True
    base.shape = sh
    base.replicas = replicas
    base.ttft_ms = sh.ttft_s * 1000.0
    base.tpot_ms = tpot * 1000.0
    base.concurrency_per_replica = concurrency
    base.tokens_per_s = spec.requests_per_s * spec.output_tokens
    base.e2e_s = sh.ttft_s + spec.output_tokens * tpot
    return base


def _explain_failure(shapes: list[ReplicaShape], spec: InferenceSpec, gpu: Gpu, model: _Model) -> list[str]:
    """Name each binding limit with the best figure any replica shape reached."""
    problems: list[str] = []
    largest = max(shapes, key=lambda s: (s.gpus, s.tp))
    fits = [s for s in shapes if s.max_sequences_by_memory >= 1]
    if not fits:
        seq = spec.prompt_tokens + spec.output_tokens
        if largest.kv_budget_gib_per_gpu <= 0:
            problems.append(
                f"memory: weights need {largest.weights_gib_per_gpu:.1f} GiB per GPU even at tp={largest.tp} "
                f"pp={largest.pp}, more than the usable {gpu.hbm_gib * model.memory_utilization:.1f} GiB of "
                f"{gpu.name}."
            )
        else:
            problems.append(
                f"memory: after weights, tp={largest.tp} pp={largest.pp} leaves "
                f"{largest.kv_budget_gib_per_gpu:.2f} GiB per GPU for KV cache, too little for one "
                f"{seq}-token sequence."
            )
        return problems
    best_ttft = min(fits, key=lambda s: s.ttft_s)
    if best_ttft.ttft_s > spec.ttft_ms / 1000.0:
        problems.append(
            f"TTFT: the {spec.ttft_ms:g} ms target cannot be met; prefill is compute bound and the best is "
            f"{best_ttft.ttft_s * 1000:.1f} ms at tp={best_ttft.tp} on {gpu.name}."
        )
    best_tpot = min(fits, key=lambda s: s.tpot_batch1_s)
    if best_tpot.tpot_batch1_s > spec.tpot_ms / 1000.0:
        problems.append(
            f"TPOT: the {spec.tpot_ms:g} ms target cannot be met even at batch 1; decode is HBM-bandwidth bound "
            f"and the best is {best_tpot.tpot_batch1_s * 1000:.2f} ms at tp={best_tpot.tp} on {gpu.name}."
        )
    if not problems:
        problems.append("no replica shape meets TTFT, TPOT and memory at the same time on " + gpu.name + ".")
    return problems
