"""Inference stage: pick a replica shape and batch per system, then the replicas a request rate needs.

The physics (memory, decode and prefill time, continuous batching) lives in inference_model.py and is calibrated
in inference_calibration.py; this module searches it. For each replica shape (TP inside the NVLink domain, PP only
when no TP-only shape fits memory, or when pinned) the largest batch meeting both latency targets and memory sets
the replica's capacity; replicas = rate / (utilisation target x capacity); the shape needing the fewest GPUs in
total wins. The reported latencies are at the load each replica actually carries (Little's law), below capacity.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Gpu, System
from engine.performance.memory import GIB
from engine.performance.serving import OperatingPoint, ReplicaModel, compute_precision_for, constants_from
from engine.request.spec import InferenceSpec
from engine.workload.model import Workload, bytes_per_param

__all__ = [
    "InferenceResult",
    "ReplicaShape",
    "compute_precision_for",
    "effective_mbu",
    "little_law_concurrency",
    "max_batch_for_tpot",
    "replicas_for_rate",
    "size_inference",
]

_TP_CHOICES = (1, 2, 4, 8, 16, 32, 64, 72)
_PP_CHOICES = (2, 4, 8, 16)


def little_law_concurrency(requests_per_s: float, latency_s: float) -> float:
    """Little's law: requests in the system = arrival rate x time each spends in it."""
    return requests_per_s * latency_s


def replicas_for_rate(requests_per_s: float, capacity_requests_per_s: float, utilization: float) -> int:
    """Replicas so each carries at most `utilization` of the request rate it sustains within the targets."""
    return max(1, math.ceil(requests_per_s / (utilization * capacity_requests_per_s) - 1e-9))


def max_batch_for_tpot(meets: Callable[[int], bool], limit: int) -> int:
    """Largest batch in [1, limit] for which `meets` holds (latency grows with batch), 0 if none does."""
    if limit < 1 or not meets(1):
        return 0
    lo, hi = 1, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if meets(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass(frozen=True)
class ReplicaShape:
    """One replica shape's figures at its capacity batch (the largest meeting memory, TTFT and TPOT)."""

    model: ReplicaModel
    max_sequences_by_memory: int
    capacity_batch: int  # 0 when no batch meets the targets
    capacity: OperatingPoint | None
    batch1: OperatingPoint | None  # latency floor of this shape (None when not even one sequence fits)
    limit: str  # what stops the batch growing: "memory", "batch_cap", "TPOT", "TTFT"

    @property
    def tp(self) -> int:
        return self.model.tp

    @property
    def pp(self) -> int:
        return self.model.pp

    @property
    def gpus(self) -> int:
        return self.model.gpus


@dataclass
class InferenceResult:
    """Outcome for one system: figures when feasible, otherwise the binding limit and the closest figures."""

    feasible: bool
    problems: list[str] = field(default_factory=list)
    shape: ReplicaShape | None = None
    replicas: int = 0
    point: OperatingPoint | None = None  # at the load each replica carries
    limit: str = ""  # binding limit: of the capacity batch when feasible, of the target when not
    closest: dict[str, float] = field(default_factory=dict)
    curve: list[dict[str, float | bool]] = field(default_factory=list)
    gpus_per_system: int = 8
    weight_bytes_per_param: float = 0.0
    kv_bytes_per_element: float = 0.0
    kv_bytes_per_token: float = 0.0
    compute_precision: str = ""
    peak_tflops: float = 0.0
    hbm_tbps: float = 0.0
    utilization_target: float = 0.0
    requests_per_s: float = 0.0
    output_tokens: int = 0

    @property
    def gpus(self) -> int:
        return self.replicas * self.shape.gpus if self.shape else 0

    @property
    def batch(self) -> int:
        """Whole sequences in flight on one replica at the planned load (its concurrency, rounded up)."""
        assert self.point is not None
        return math.ceil(self.point.batch - 1e-9)

    @property
    def batch_fleet(self) -> int:
        """Whole sequences in flight over the fleet: every replica carries the same share of the load."""
        return self.replicas * self.batch

    @property
    def spans_systems(self) -> bool:
        """A replica larger than one system needs the scale-out fabric (pipeline hops between systems)."""
        return self.shape is not None and self.shape.gpus > self.gpus_per_system

    @property
    def capacity_tokens_per_s_per_replica(self) -> float:
        assert self.shape is not None and self.shape.capacity is not None
        return self.shape.capacity.tokens_per_s

    def memory_breakdown_gib(self) -> dict[str, float]:
        """Per GPU: weights, activation workspace, KV cache budget, and the HBM they come out of."""
        assert self.shape is not None
        m = self.shape.model
        return {
            "weights": m.weight_bytes_per_gpu() / GIB,
            "activations": m.activation_bytes_per_gpu() / GIB,
            "kv_cache": max(0.0, m.kv_budget_bytes_per_gpu()) / GIB,
            "reserve": (m.gpu.hbm_gib * GIB - m.usable_bytes_per_gpu()) / GIB,
        }

    def as_dict(self) -> dict[str, object]:
        """The plan's `inference` section."""
        assert self.shape is not None and self.point is not None and self.shape.capacity is not None
        sh, pt, cap = self.shape, self.point, self.shape.capacity
        mem = self.memory_breakdown_gib()
        allocated_gib = sum(mem.values())  # the breakdown's total: what a GPU holds, the cache as allocated
        return {
            "gpus": self.gpus,
            "replicas": self.replicas,
            "gpus_per_replica": sh.gpus,
            "parallelism": {"tp": sh.tp, "pp": sh.pp},
            "batch": self.batch,
            "batch_per_replica": self.batch,  # earlier name of `batch`, kept for readers of v0.1
            "concurrency_per_replica": pt.batch,
            # the whole fleet: every replica carries the same share of the load (Little's law over the fleet:
            # replicas x concurrency per replica = requests_per_s x output_tokens x TPOT, the decode batch's time)
            "batch_fleet": self.batch_fleet,
            "concurrency_fleet": self.replicas * pt.batch,
            "ttft_ms": pt.ttft_s * 1000.0,
            "tpot_ms": pt.tpot_s * 1000.0,
            "end_to_end_s": pt.e2e_s(self.output_tokens),
            "tokens_per_s": self.replicas * cap.tokens_per_s,
            "tokens_per_s_per_gpu": cap.tokens_per_s / sh.gpus,
            "demand_tokens_per_s": self.requests_per_s * self.output_tokens,
            "capacity_requests_per_s_per_replica": cap.requests_per_s,
            "capacity_batch_per_replica": sh.capacity_batch,
            "capacity_tpot_ms": cap.tpot_s * 1000.0,
            "capacity_ttft_ms": cap.ttft_s * 1000.0,
            "utilization": self.requests_per_s / (self.replicas * cap.requests_per_s),
            "utilization_target": self.utilization_target,
            "max_sequences_by_memory": sh.max_sequences_by_memory,
            "kv_cache_gib_per_replica": mem["kv_cache"] * sh.gpus,
            "kv_cache_used_gib_per_replica": sh.model.kv_used_bytes_per_replica(pt.batch) / GIB,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "weights_gib_per_gpu": mem["weights"],
            # what a GPU holds at the planned load (weights, workspace and the KV cache the load fills: the field's
            # meaning since v0.1, kept for API readers) and what it allocates (the breakdown's total, the cache
            # as allocated), which the page shows with the breakdown
            "memory_per_gpu_gib": sh.model.memory_bytes_per_gpu(pt.batch) / GIB,
            "memory_allocated_gib_per_gpu": allocated_gib,
            "memory_breakdown_gib": mem,
            # what the planned load fills of that cache, on a GPU of the same (binding) stage
            "kv_cache_in_use_gib_per_gpu": pt.batch * sh.model.kv_bytes_per_sequence_per_gpu() / GIB,
            "hbm_gib": sh.model.gpu.hbm_gib,
            "effective_mbu": effective_mbu(sh.model, pt),
            "compute_precision": self.compute_precision,
            "limit": self.limit,
            "spans_systems": self.spans_systems,
            "needs_scaleout_fabric": self.spans_systems,
            "curve": self.curve,
        }


def effective_mbu(m: ReplicaModel, pt: OperatingPoint) -> float:
    """Bytes a decode step reads per GPU / (step time x HBM bandwidth): the MBU a benchmark would report."""
    read = m.weights_read_bytes_per_gpu(pt.batch) + m.kv_read_bytes_per_gpu(pt.batch)
    return read / (pt.tpot_decode_s * m.gpu.hbm_tbps * 1e12)


def _layouts(work: Workload, system: System, spec: InferenceSpec, max_tp: int) -> tuple[list[int], list[int]]:
    """TP degrees inside the NVLink domain that divide the heads; PP stage counts that the layers allow."""
    limit = min(system.nvlink_domain_gpus, max_tp)
    tps = [t for t in _TP_CHOICES if t <= limit and work.shape.heads % t == 0]
    pps = [p for p in _PP_CHOICES if p <= work.shape.layers]
    pin = spec.parallelism
    if pin.tp is not None:
        tps = [pin.tp] if pin.tp in tps else []
    if pin.pp is not None:
        pps = [pin.pp] if pin.pp <= work.shape.layers else []
    return tps, pps


def _evaluate(m: ReplicaModel, spec: InferenceSpec) -> ReplicaShape:
    """The largest batch meeting memory and both latency targets, and which of them stops it growing."""
    by_memory = m.max_sequences_by_memory()
    top = min(by_memory, m.c.batch_cap)
    if top < 1:
        return ReplicaShape(m, by_memory, 0, None, None, "memory")
    ttft_target, tpot_target = spec.ttft_ms / 1000.0, spec.tpot_ms / 1000.0

    def meets(batch: int) -> bool:
        p = m.point(batch)
        return p.tpot_s <= tpot_target and p.ttft_s <= ttft_target

    batch1 = m.point(1)
    best = max_batch_for_tpot(meets, top)
    if best == 0:
        limit = "TTFT" if batch1.ttft_s > ttft_target else "TPOT"
        return ReplicaShape(m, by_memory, 0, None, batch1, limit)
    if best == top:
        limit = "memory" if top == by_memory else "batch_cap"
    else:
        limit = "TPOT" if m.point(best + 1).tpot_s > tpot_target else "TTFT"
    return ReplicaShape(m, by_memory, best, m.point(best), batch1, limit)


def _curve(m: ReplicaModel, spec: InferenceSpec, top: int) -> list[dict[str, float | bool]]:
    """Tokens/s per GPU against TPOT for batches 1, 2, 4, ... up to what memory allows (and the top itself)."""
    batches = [b for b in (2**i for i in range(20)) if b < top] + ([top] if top >= 1 else [])
    out: list[dict[str, float | bool]] = []
    for b in batches:
        p = m.point(b)
        out.append(
            {
                "batch": b,
                "tpot_ms": p.tpot_s * 1000.0,
                "ttft_ms": p.ttft_s * 1000.0,
                "tokens_per_s_per_gpu": p.tokens_per_s / m.gpus,
                "requests_per_s_per_replica": p.requests_per_s,
                "meets_targets": p.tpot_s * 1000.0 <= spec.tpot_ms and p.ttft_s * 1000.0 <= spec.ttft_ms,
            }
        )
    return out


def size_inference(
    work: Workload, spec: InferenceSpec, system: System, gpu: Gpu, assumptions: Assumptions
) -> InferenceResult:
    """Pick the replica shape needing the fewest GPUs in total (then no PP, then the smallest replica): the
    replica shapes the request allows (`_replica_shapes`), the fewest GPUs for the rate (`_fewest_gpus`), then
    the cluster cap and the chosen shape's operating point and curve."""
    a = assumptions
    compute_precision = compute_precision_for(gpu, spec.precision)
    peak = gpu.dense_tflops(compute_precision) or gpu.bf16_dense_tflops
    wbpp = bytes_per_param(spec.precision, a["int4_bytes_per_param"], a["fp4_bytes_per_param"])
    kv_elem = a["kv_cache_bytes_per_element"]
    constants = constants_from(a)
    utilization = a["serving_utilization_target"]
    max_gpus = a["max_cluster_gpus"]
    result = InferenceResult(
        False,
        gpus_per_system=system.gpus_per_system,
        weight_bytes_per_param=wbpp,
        kv_bytes_per_element=kv_elem,
        kv_bytes_per_token=work.kv_bytes_per_token(kv_elem),
        compute_precision=compute_precision,
        peak_tflops=peak,
        hbm_tbps=gpu.hbm_tbps,
        utilization_target=utilization,
        requests_per_s=spec.requests_per_s,
        output_tokens=spec.output_tokens,
    )
    tps, pps = _layouts(work, system, spec, a["max_tensor_parallel"])
    if not tps or (spec.parallelism.pp is not None and not pps):
        result.problems.append(
            f"pinned parallelism is not allowed on {system.id}: TP must divide heads={work.shape.heads} and stay "
            f"within min(NVLink domain {system.nvlink_domain_gpus}, max_tensor_parallel {a['max_tensor_parallel']}); "
            f"PP must not exceed {work.shape.layers} layers."
        )
        result.limit = "parallelism"
        return result

    def model(tp: int, pp: int) -> ReplicaModel:
        return ReplicaModel(work, gpu, tp, pp, spec.prompt_tokens, spec.output_tokens, wbpp,
                            result.kv_bytes_per_token, peak * 1e12, constants)  # fmt: skip

    shapes = _replica_shapes(model, spec, tps, pps)
    chosen, total_gpus = _fewest_gpus(shapes, spec.requests_per_s, utilization)
    if chosen is None:
        _explain_failure(result, shapes, spec, gpu)
        return result
    replicas = total_gpus // chosen.gpus
    if total_gpus > max_gpus:
        result.problems.append(
            f"cluster size: the target needs {total_gpus:,} GPUs, more than the largest cluster the planner builds "
            f"({max_gpus:,} GPUs, the max cluster GPUs assumption a request may raise)."
        )
        result.limit = "cluster size"
        result.closest = {"gpus": float(total_gpus)}
        return result
    m = chosen.model
    batch = m.batch_for_rate(spec.requests_per_s / replicas, float(chosen.capacity_batch))
    result.feasible = True
    result.shape = chosen
    result.replicas = replicas
    result.point = m.point(batch)
    result.limit = chosen.limit
    result.curve = _curve(m, spec, min(chosen.max_sequences_by_memory, m.c.batch_cap))
    return result


def _replica_shapes(
    model: Callable[[int, int], ReplicaModel], spec: InferenceSpec, tps: list[int], pps: list[int]
) -> list[ReplicaShape]:
    """Every replica shape the request allows, evaluated: the pinned PP with each TP, else TP alone; pipeline
    stages only for models no NVLink-domain replica can hold (issue 4), as they add latency."""
    if spec.parallelism.pp is not None:
        return [_evaluate(model(tp, spec.parallelism.pp), spec) for tp in tps]
    shapes = [_evaluate(model(tp, 1), spec) for tp in tps]
    if all(s.max_sequences_by_memory < 1 for s in shapes):
        shapes += [_evaluate(model(tp, pp), spec) for pp in pps for tp in tps]
    return shapes


def _fewest_gpus(
    shapes: list[ReplicaShape], requests_per_s: float, utilization: float
) -> tuple[ReplicaShape | None, int]:
    """(the shape needing the fewest GPUs in total for the rate, then no PP, then the smallest replica; those
    GPUs), or (None, 0) when no shape serves a request within the SLOs."""
    best: tuple[int, int, int] | None = None
    chosen: ReplicaShape | None = None
    for sh in shapes:
        if sh.capacity is None:
            continue
        replicas = replicas_for_rate(requests_per_s, sh.capacity.requests_per_s, utilization)
        key = (replicas * sh.gpus, sh.pp, sh.gpus)
        if best is None or key < best:
            best, chosen = key, sh
    return (None, 0) if chosen is None or best is None else (chosen, best[0])


def _explain_failure(result: InferenceResult, shapes: list[ReplicaShape], spec: InferenceSpec, gpu: Gpu) -> None:
    """Name the binding limit (memory, TTFT or TPOT) and the closest figures any replica shape reaches."""
    fits = [s for s in shapes if s.batch1 is not None]
    if not fits:
        largest = max(shapes, key=lambda s: (s.gpus, s.tp))
        m = largest.model
        seq = spec.prompt_tokens + spec.output_tokens
        need = m.memory_bytes_per_gpu(1)
        result.limit = "memory"
        result.closest = {
            "memory_needed_gib_per_gpu": need / GIB,
            "memory_usable_gib_per_gpu": m.usable_bytes_per_gpu() / GIB,
            "tp": float(largest.tp),
            "pp": float(largest.pp),
        }
        result.problems.append(
            f"memory: even at tp={largest.tp} pp={largest.pp} one GPU needs {need / GIB:.1f} GiB (weights "
            f"{m.weight_bytes_per_gpu() / GIB:.1f}, workspace {m.activation_bytes_per_gpu() / GIB:.1f}, one "
            f"{seq}-token sequence of KV cache), more than the usable {m.usable_bytes_per_gpu() / GIB:.1f} GiB of "
            f"{gpu.name}."
        )
        return
    fastest_ttft = min(fits, key=lambda s: s.batch1.ttft_s if s.batch1 else math.inf)
    fastest_tpot = min(fits, key=lambda s: s.batch1.tpot_s if s.batch1 else math.inf)
    assert fastest_ttft.batch1 is not None and fastest_tpot.batch1 is not None
    best_ttft_ms = fastest_ttft.batch1.ttft_s * 1000.0
    best_tpot_ms = fastest_tpot.batch1.tpot_s * 1000.0
    result.closest = {
        "ttft_ms": best_ttft_ms,
        "tpot_ms": best_tpot_ms,
        "ttft_tp": float(fastest_ttft.tp),
        "tpot_tp": float(fastest_tpot.tp),
    }
    limits: list[str] = []
    if best_ttft_ms > spec.ttft_ms:
        limits.append("TTFT")
        result.problems.append(
            f"TTFT: the {spec.ttft_ms:g} ms target cannot be met; prefill is compute bound and the best is "
            f"{best_ttft_ms:.1f} ms (one request alone, tp={fastest_ttft.tp}) on {gpu.name}."
        )
    if best_tpot_ms > spec.tpot_ms:
        limits.append("TPOT")
        result.problems.append(
            f"TPOT: the {spec.tpot_ms:g} ms target cannot be met even at batch 1; decode is HBM-bandwidth bound "
            f"and the best is {best_tpot_ms:.2f} ms at tp={fastest_tpot.tp} pp={fastest_tpot.pp} on {gpu.name}."
        )
    if not limits:
        # Each target alone is reachable, but not both in one shape at once.
        limits.append("TTFT and TPOT")
        result.problems.append(
            f"TTFT and TPOT: no single replica shape on {gpu.name} meets both targets at once (best TTFT "
            f"{best_ttft_ms:.1f} ms at tp={fastest_ttft.tp}, best TPOT {best_tpot_ms:.2f} ms at tp={fastest_tpot.tp})."
        )
    result.limit = " and ".join(limits)
