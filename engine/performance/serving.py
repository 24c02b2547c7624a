"""Serving physics for one replica shape: memory, decode step time, prefill time, throughput and latency.

Kept apart from the search (inference.py) so the calibration (inference_calibration.py) evaluates published
measurements with exactly the formulas that size clusters, and so each formula can be checked by hand.

The model, per replica of tp x pp GPUs (inference-calibration.md section 2):

- Memory per GPU: weights / (tp x pp) + an activation workspace for one prefill chunk; the rest of
  HBM x inference_memory_utilization holds the KV cache. A sequence reserves its whole prompt + output in KV
  (TensorRT-LLM's guaranteed-no-evict scheduler and vLLM's admission control both do).
- Decode step (roofline): max(bytes read / (HBM x decode_mbu), FLOPs / (peak x GEMM efficiency at B tokens))
  + two tensor-parallel all-reduces per layer on NVLink + a fixed per-step overhead. Fixed costs do not shrink
  with bandwidth, so the *effective* bandwidth utilisation falls as TP and GPU speed rise (section 5b).
- Prefill: the same roofline at n prompt tokens; GEMM efficiency rises with the tokens in flight as
  prefill_mfu x n / (n + prefill_half_mfu_tokens), the curve section 5c implies (about 10 % at 128 tokens,
  up to 45-67 % at 2K tokens).
- Continuous batching: with B sequences decoding and every request's prefill sharing the same GPUs, one
  output token costs TPOT_decode(B) / B + prefill_time / output_tokens of replica time, so the replica makes
  1 / (TPOT_decode(B)/B + prefill/out) tokens/s and the user sees TPOT = B / that (decode stretched by the
  prefill work interleaved with it). Little's law links B to the request rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Gpu
from engine.performance.memory import GIB, params_per_gpu
from engine.workload.model import Workload

__all__ = ["ACTIVATION_BUFFERS", "OperatingPoint", "ReplicaModel", "ServingConstants", "compute_precision_for"]

# Activation workspace: one live buffer of the widest layer activations per prefill-chunk token (engines reuse
# buffers between layers; inputs and outputs of the widest op are counted in the width below).
ACTIVATION_BUFFERS = 1
ACT_BYTES = 2.0  # 16-bit activations (FP8 serving still keeps activations between kernels in 16 bits)


def compute_precision_for(gpu: Gpu, precision: str) -> str:
    """Tensor-core precision the math runs in. INT8/INT4 are treated as weight-only (16-bit math), and a
    format the GPU lacks falls back the same way, so no speed is claimed for hardware that is not there."""
    if precision in ("fp8", "fp4") and gpu.dense_tflops(precision) is not None:
        return precision
    if precision == "fp4" and gpu.fp8_dense_tflops is not None:
        return "fp8"
    return "bf16"


@dataclass(frozen=True)
class ServingConstants:
    """The calibrated and judgement constants one evaluation uses (values of named assumptions)."""

    decode_mbu: float  # fraction of HBM bandwidth the decode kernels reach on the bytes they read
    step_overhead_s: float  # fixed CPU / launch / sync time per engine iteration
    allreduce_latency_s: float  # fixed latency of one tensor-parallel all-reduce
    nvlink_efficiency: float  # achieved all-reduce bus bandwidth / per-direction NVLink bandwidth
    prefill_mfu: float  # GEMM efficiency (fraction of dense peak) reached with many tokens in flight
    half_mfu_tokens: float  # tokens in flight at which GEMM efficiency is half of prefill_mfu
    memory_utilization: float  # share of HBM the engine may use for weights, activations and KV cache
    prefill_chunk_tokens: int  # tokens one prefill iteration processes (activation workspace, batched prefill)
    batch_cap: int  # largest number of sequences the engine decodes together
    steps_per_schedule: int = 1  # decode steps run per scheduling round (vLLM multi-step); new requests wait


@dataclass(frozen=True)
class OperatingPoint:
    """One replica at `batch` concurrent sequences."""

    batch: float
    tpot_decode_s: float  # one decode step for the batch, no prefill interleaved
    tpot_s: float  # what a user sees: decode stretched by the prefill work sharing the GPUs
    ttft_s: float
    tokens_per_s: float  # replica output tokens/s
    requests_per_s: float
    prefill_busy_fraction: float

    def e2e_s(self, output_tokens: int) -> float:
        """Time a request spends in the replica: first token, then the rest of its output."""
        return self.ttft_s + output_tokens * self.tpot_s


@dataclass(frozen=True)
class ReplicaModel:
    """Per-request constants of one replica shape (tp, pp) on one GPU type, so batches evaluate cheaply."""

    work: Workload
    gpu: Gpu
    tp: int
    pp: int
    prompt_tokens: int
    output_tokens: int
    weight_bytes_per_param: float
    kv_bytes_per_token: float  # whole model, one token
    peak_flops: float  # per GPU, at the compute precision
    c: ServingConstants

    # ------------------------------------------------------------------ memory
    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    @property
    def kv_tp_split(self) -> int:
        """Ways tensor parallelism splits the cache: over the KV heads until TP exceeds them, then replicated.
        Latent attention (MLA) caches one latent vector per token that every head reads, so each TP rank keeps
        all of it (LMSYS, 'SGLang v0.4', 2024-12-04: data-parallel attention for DeepSeek models exists because
        tensor parallelism duplicates that cache)."""
        if self.work.shape.mla is not None:
            return 1
        return min(self.tp, self.work.shape.kv_heads)

    @property
    def kv_shards(self) -> int:
        """The cache splits over `kv_tp_split` and PP splits layers."""
        return self.kv_tp_split * self.pp

    def weight_bytes_per_gpu(self) -> float:
        """Heaviest GPU's weights: its layers' share plus the embedding or head its pipeline stage holds."""
        return params_per_gpu(self.work, self.tp, self.pp) * self.weight_bytes_per_param

    def activation_bytes_per_gpu(self) -> float:
        """Workspace for one prefill chunk: the widest per-token activations (FFN intermediate, sharded by TP)."""
        s = self.work.shape
        width = s.hidden + (2 * self.work.ffn_active_width + 2 * self.work.qk_width + self.work.v_width) / self.tp
        return ACTIVATION_BUFFERS * self.c.prefill_chunk_tokens * width * ACT_BYTES

    def usable_bytes_per_gpu(self) -> float:
        return self.gpu.hbm_gib * GIB * self.c.memory_utilization

    def kv_budget_bytes_per_gpu(self) -> float:
        return self.usable_bytes_per_gpu() - self.weight_bytes_per_gpu() - self.activation_bytes_per_gpu()

    def kv_bytes_per_token_per_gpu(self) -> float:
        return self.kv_bytes_per_token / self.kv_shards

    def _stage_kv_bytes_per_gpu(self, context: float) -> float:
        """KV bytes of one sequence at `context` tokens on a GPU of the fullest pipeline stage: one layer's bytes
        per token (split over the KV heads tensor parallelism shares out) x the cached tokens summed over that
        stage's layers (`Workload.serving_stage_cached_tokens`; a windowed layer keeps at most its window)."""
        per_layer = self.kv_bytes_per_token / self.work.shape.layers / self.kv_tp_split
        return per_layer * self.work.serving_stage_cached_tokens(context, self.pp)

    def kv_bytes_per_sequence_per_gpu(self) -> float:
        """The cache one sequence reserves at its full prompt + output on the fullest stage's GPUs."""
        return self._stage_kv_bytes_per_gpu(self.prompt_tokens + self.output_tokens)

    def kv_read_bytes_per_gpu(self, batch: float) -> float:
        """Cache bytes one decode step reads per GPU of the fullest stage: `batch` sequences at the mean
        context."""
        return batch * self._stage_kv_bytes_per_gpu(self.mean_context)

    def max_sequences_by_memory(self) -> int:
        """Sequences whose whole prompt + output fits in the KV budget (each reserves its full length)."""
        budget = self.kv_budget_bytes_per_gpu()
        if budget <= 0:
            return 0
        return int(budget // self.kv_bytes_per_sequence_per_gpu())

    def max_batch(self) -> int:
        return min(self.max_sequences_by_memory(), self.c.batch_cap)

    # ------------------------------------------------------------------ time
    def gemm_efficiency(self, tokens: float) -> float:
        """Fraction of dense peak a GEMM with `tokens` rows reaches: rises with tokens, saturates at prefill_mfu."""
        return self.c.prefill_mfu * tokens / (tokens + self.c.half_mfu_tokens)

    def allreduce_s(self, tokens: float) -> float:
        """Two ring all-reduces per layer of tokens x hidden 16-bit values over the NVLink domain; 0 at TP 1.

        A ring moves 2 (tp - 1) / tp of the buffer through each GPU's link in each direction.
        """
        if self.tp == 1:
            return 0.0
        s = self.work.shape
        per_dir = self.gpu.scaleup_gbyte_s * 1e9 / 2.0 * self.c.nvlink_efficiency
        volume = 2.0 * (self.tp - 1) / self.tp * tokens * s.hidden * ACT_BYTES
        return 2.0 * s.layers * (self.c.allreduce_latency_s + volume / per_dir)

    def weights_read_bytes(self, batch: float) -> float:
        """Weight bytes a decode step reads over the replica. For MoE, the experts a batch touches:
        a fraction 1 - (1 - k/E)^B of them (tokens route independently)."""
        w = self.work
        if w.shape.moe is None:
            return w.params * self.weight_bytes_per_param
        touched = 1.0 - (1.0 - w.active_experts / w.experts) ** batch
        return (w.dense_params + w.expert_params * touched) * self.weight_bytes_per_param

    @property
    def mean_context(self) -> float:
        """Average tokens in a sequence's cache over its decode: prompt plus half the output."""
        return self.prompt_tokens + self.output_tokens / 2.0

    def decode_step_s(self, batch: float) -> float:
        """One decode iteration for `batch` sequences (roofline + all-reduce + overhead).

        Pipeline stages run in turn for a token, so the weights term is weights / tp whatever pp is; the batch
        is split into pp micro-batches, so the KV and compute terms spread over all tp x pp GPUs.
        """
        bandwidth = self.gpu.hbm_tbps * 1e12 * self.c.decode_mbu
        read = self.weights_read_bytes(batch) / self.tp + self.kv_read_bytes_per_gpu(batch)
        memory_s = read / bandwidth
        flops = batch * self.work.decode_flops_per_token(self.mean_context)
        per_stage_tokens = batch / self.pp
        compute_s = flops / (self.gpus * self.peak_flops * self.gemm_efficiency(per_stage_tokens))
        return max(memory_s, compute_s) + self.allreduce_s(per_stage_tokens) + self.c.step_overhead_s

    def prefill_s(self, tokens: int, batched: bool = False) -> float:
        """Time to process `tokens` prompt tokens of one request.

        Alone (batched=False, the TTFT case), chunks go through the pipeline stages in turn, so only tp GPUs
        work at a time. Batched with other requests' prompts (the throughput case), chunks of prefill_chunk_tokens
        keep all pp stages busy and reach the chunk's GEMM efficiency.
        """
        chunk = self.c.prefill_chunk_tokens
        n = chunk if batched else min(tokens, chunk)
        working = self.gpus if batched else self.tp
        flops = self.work.prefill_flops(tokens)
        compute_s = flops / (working * self.peak_flops * self.gemm_efficiency(n))
        chunks = tokens / n if batched else math.ceil(tokens / n)
        bandwidth = self.gpu.hbm_tbps * 1e12 * self.c.decode_mbu
        weights_s = chunks * self.weights_read_bytes(n) / self.tp / bandwidth / (self.pp if batched else 1)
        fixed = chunks * (self.allreduce_s(n) + self.c.step_overhead_s) / (self.pp if batched else 1)
        return max(compute_s, weights_s) + fixed

    def point(self, batch: float) -> OperatingPoint:
        """The replica at `batch` concurrent sequences under continuous batching (module docstring)."""
        step = self.decode_step_s(batch)
        prefill_batched = self.prefill_s(self.prompt_tokens, batched=True)
        tokens_per_s = 1.0 / (step / batch + prefill_batched / self.output_tokens)
        rate = tokens_per_s / self.output_tokens
        busy = min(rate * prefill_batched, 0.999)
        # A new request waits for the running scheduling round (half of it on average), then its own prefill;
        # prefill queueing (M/D/1 wait, busy x service / (2 (1 - busy))) adds the rest.
        single = self.prefill_s(self.prompt_tokens)
        ttft = single + step * self.c.steps_per_schedule / 2.0 + busy * single / (2.0 * (1.0 - busy))
        return OperatingPoint(batch, step, batch / tokens_per_s, ttft, tokens_per_s, rate, busy)

    def batch_for_rate(self, requests_per_s: float, upper: float) -> float:
        """Concurrency Little's law gives at a request rate: B = rate x (TTFT + out x TPOT(B)), by bisection.

        Returns `upper` when even `upper` sequences cannot carry the rate (the replica is saturated).
        """
        if self.point(upper).requests_per_s <= requests_per_s:
            return upper
        lo, hi = 1e-6, upper
        for _ in range(50):
            mid = (lo + hi) / 2.0
            if self.point(mid).requests_per_s < requests_per_s:
                lo = mid
            else:
                hi = mid
        return hi

    def compute_roofline_tokens_per_s_per_gpu(self) -> float:
        """Physical ceiling: peak FLOP/s / (2 x active params) output tokens per GPU, no prefill or attention."""
        return self.peak_flops / (2.0 * self.work.compute_params_active)

    def bandwidth_floor_tpot_s(self) -> float:
        """Physical floor: weight bytes / (tp x HBM bandwidth), at 100 % bandwidth and no overhead."""
        return self.weights_read_bytes(1) / (self.tp * self.gpu.hbm_tbps * 1e12)


def constants_from(a: Assumptions, batch_cap: int | None = None) -> ServingConstants:
    """The ServingConstants a plan (or a calibration row) uses, read from named assumptions."""
    return ServingConstants(
        decode_mbu=a["decode_mbu"],
        step_overhead_s=a["decode_step_overhead_ms"] / 1000.0,
        allreduce_latency_s=a["inference_allreduce_latency_us"] / 1e6,
        nvlink_efficiency=a["nvlink_efficiency"],
        prefill_mfu=a["prefill_mfu"],
        half_mfu_tokens=a["prefill_half_mfu_tokens"],
        memory_utilization=a["inference_memory_utilization"],
        prefill_chunk_tokens=a["prefill_chunk_tokens"],
        batch_cap=a["max_batch_per_replica"] if batch_cap is None else batch_cap,
    )
