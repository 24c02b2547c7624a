"""Serving physics for one replica shape: memory, decode step time, prefill time, throughput and latency.

Kept apart from the search (inference.py) so the calibration (inference_calibration.py) evaluates published
measurements with exactly the formulas that size clusters, and so each formula can be checked by hand.

The model, per replica of tp x pp GPUs (inference-calibration.md section 2):

- Memory per GPU, stage by stage: the stage's layers (and the embedding or head at the ends) / tp + an
  activation workspace for one prefill chunk; the rest of HBM x inference_memory_utilization holds the stage's
  KV cache, and the stage that fits the fewest sequences sets the batch (vLLM takes the fewest cache blocks over
  its workers). A sequence reserves its whole prompt + output in KV (TensorRT-LLM's guaranteed-no-evict scheduler
  and vLLM's admission control both do).
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
from functools import cached_property

from engine.assumptions.registry import Assumptions
from engine.catalog.hardware import Gpu
from engine.performance.memory import GIB, stage_params_per_gpu, tp_whole_params
from engine.workload.model import ServingStage, Workload

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

    @cached_property
    def stages(self) -> tuple[ServingStage, ...]:
        """The replica's pipeline stages (`Workload.serving_stages`)."""
        return self.work.serving_stages(self.pp)

    @cached_property
    def stage_weight_bytes(self) -> tuple[float, ...]:
        """Weights one GPU of each stage holds (`stage_params_per_gpu`)."""
        return tuple(stage_params_per_gpu(self.work, s, self.tp) * self.weight_bytes_per_param for s in self.stages)

    def weight_bytes_per_gpu(self) -> float:
        """The heaviest stage's weights per GPU."""
        return max(self.stage_weight_bytes)

    def stage_kv_bytes_per_gpu(self, stage: ServingStage, context: float) -> float:
        """KV bytes of one sequence at `context` tokens on a GPU of `stage`: one layer's bytes per token (split
        over the KV heads tensor parallelism shares out) x the cached tokens summed over the stage's layers
        (`Workload.stage_cached_tokens`; a windowed layer keeps at most its window)."""
        per_layer = self.kv_bytes_per_token / self.work.shape.layers / self.kv_tp_split
        return per_layer * self.work.stage_cached_tokens(stage, context)

    def _stage_sequences(self, index: int) -> float:
        """Whole sequences (prompt + output) the KV budget of one GPU of stage `index` holds."""
        budget = self.usable_bytes_per_gpu() - self.stage_weight_bytes[index] - self.activation_bytes_per_gpu()
        per_sequence = self.stage_kv_bytes_per_gpu(self.stages[index], self.prompt_tokens + self.output_tokens)
        return max(budget, 0.0) / per_sequence

    @cached_property
    def binding_stage(self) -> ServingStage:
        """The stage that fits the fewest sequences: its budget and cache set the replica's batch."""
        return min(self.stages, key=lambda s: (self._stage_sequences(s.index), -s.index))

    def activation_bytes_per_gpu(self) -> float:
        """Workspace for one prefill chunk: the widest per-token activations (FFN intermediate, sharded by TP)."""
        s = self.work.shape
        width = s.hidden + (2 * self.work.ffn_active_width + 2 * self.work.qk_width + self.work.v_width) / self.tp
        return ACTIVATION_BUFFERS * self.c.prefill_chunk_tokens * width * ACT_BYTES

    def usable_bytes_per_gpu(self) -> float:
        return self.gpu.hbm_gib * GIB * self.c.memory_utilization

    def kv_budget_bytes_per_gpu(self) -> float:
        """The binding stage's KV budget per GPU (usable HBM - its weights - the workspace)."""
        weights = self.stage_weight_bytes[self.binding_stage.index]
        return self.usable_bytes_per_gpu() - weights - self.activation_bytes_per_gpu()

    def kv_bytes_per_sequence_per_gpu(self) -> float:
        """The cache one sequence reserves at its full prompt + output on a GPU of the binding stage."""
        return self.stage_kv_bytes_per_gpu(self.binding_stage, self.prompt_tokens + self.output_tokens)

    @cached_property
    def _kv_read_bytes_per_sequence(self) -> float:
        """One sequence's cache at the mean context on a GPU of the stage that reads the most (constant per
        replica, so the decode-step bisection does not walk the stages on every call)."""
        return max(self.stage_kv_bytes_per_gpu(s, self.mean_context) for s in self.stages)

    def kv_read_bytes_per_gpu(self, batch: float) -> float:
        """Cache bytes one decode step reads per GPU of the stage that reads the most: `batch` sequences at the
        mean context."""
        return batch * self._kv_read_bytes_per_sequence

    def kv_used_bytes_per_replica(self, batch: float) -> float:
        """The cache `batch` whole sequences fill over the replica: every stage's, on each of its tp GPUs."""
        context = self.prompt_tokens + self.output_tokens
        return batch * self.tp * sum(self.stage_kv_bytes_per_gpu(s, context) for s in self.stages)

    def memory_bytes_per_gpu(self, batch: float) -> float:
        """The fullest GPU with `batch` whole sequences: its stage's weights + the workspace + their cache."""
        context = self.prompt_tokens + self.output_tokens
        act = self.activation_bytes_per_gpu()
        return max(
            w + act + batch * self.stage_kv_bytes_per_gpu(s, context)
            for s, w in zip(self.stages, self.stage_weight_bytes, strict=True)
        )

    def max_sequences_by_memory(self) -> int:
        """Sequences whose whole prompt + output fits every stage's KV budget (each reserves its full length)."""
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

    def weights_read_bytes_per_gpu(self, batch: float) -> float:
        """A decode step's weight reads on one GPU: 1/tp of the replica's (`weights_read_bytes`), plus the rest of
        what every tensor-parallel GPU keeps whole (routers, latent down-projections: `tp_whole_params`)."""
        return self.weights_read_bytes(batch) / self.tp + self._whole_read_bytes_beyond_share

    @cached_property
    def _whole_read_bytes_beyond_share(self) -> float:
        """What each GPU reads of the whole-kept weights beyond its 1/tp share (constant per replica)."""
        return tp_whole_params(self.work) * self.weight_bytes_per_param * (1.0 - 1.0 / self.tp)

    @property
    def mean_context(self) -> float:
        """Average tokens in a sequence's cache over its decode: prompt plus half the output."""
        return self.prompt_tokens + self.output_tokens / 2.0

    def decode_step_s(self, batch: float) -> float:
        """One decode iteration for `batch` sequences (roofline + all-reduce + overhead).

        Pipeline stages run in turn for a token, so the weights term is weights / tp whatever pp is; the batch
        is split into pp micro-batches, so the compute term spreads over all tp x pp GPUs and the KV term is the
        cache of the stage that reads the most (`kv_read_bytes_per_gpu`). The decode FLOPs count the average
        layer's cache (a windowed model's fuller stages do a little more attention work than that).
        """
        bandwidth = self.gpu.hbm_tbps * 1e12 * self.c.decode_mbu
        read = self.weights_read_bytes_per_gpu(batch) + self.kv_read_bytes_per_gpu(batch)
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
        weights_s = chunks * self.weights_read_bytes_per_gpu(n) / bandwidth / (self.pp if batched else 1)
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
        """Physical floor: one GPU's weight reads (`weights_read_bytes_per_gpu`) / HBM bandwidth, at 100 %
        bandwidth and no overhead."""
        return self.weights_read_bytes_per_gpu(1) / (self.gpu.hbm_tbps * 1e12)


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
