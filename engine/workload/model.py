"""Workload stage: parameter counts, FLOPs per token and bytes per parameter from a model shape.

Parameters are counted matrix by matrix (GQA attention, gated or plain FFN, MoE experts, embeddings) rather
than with a 12lh^2 shortcut, because Llama-style models (GQA, SwiGLU, 128K vocabularies) break the shortcut.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from engine.request.spec import ModelSpec

__all__ = [
    "BYTES_PER_PARAM_FIXED",
    "ServingStage",
    "Workload",
    "analyse_model",
    "bytes_per_param",
    "serving_stage_layers",
    "serving_stages",
]


def serving_stage_layers(layers: int, pp: int) -> tuple[int, ...]:
    """Layers per serving pipeline stage, first to last: layers // pp each, and the remainder one more each to the
    stages before the last (vLLM's `get_pp_indices`, vllm/distributed/utils.py; the last stage also holds the LM
    head)."""
    sizes = [layers // pp] * pp
    for i in range(2, layers % pp + 2):
        sizes[-i] += 1
    return tuple(sizes)


@dataclass(frozen=True)
class ServingStage:
    """One serving pipeline stage: its layers by kind and which end of the model it holds."""

    index: int
    layers: int
    full: int  # full-attention layers (the rest attend through a sliding window)
    dense_ffn: int  # a mixture-of-experts model's leading dense-FFN layers on this stage
    first: bool  # holds the input embedding
    last: bool  # holds the LM head and final norm

    @property
    def windowed(self) -> int:
        return self.layers - self.full


@lru_cache(maxsize=256)
def serving_stages(layers: int, windowed: int, dense_layers: int, pp: int) -> tuple[ServingStage, ...]:
    """The `pp` serving stages of a model: vLLM's split (`serving_stage_layers`), the full-attention layers spread
    evenly over the model (the j-th at layer floor((j + 1/2) x layers / full): GPT-OSS alternates windowed and
    full layers, Gemma 3 puts one full layer after five windowed ones), a mixture-of-experts model's dense-FFN
    layers first (DeepSeek-V3's 3)."""
    full = layers - windowed
    is_full = [False] * layers
    for j in range(full):
        is_full[int((j + 0.5) * layers / full)] = True
    stages, start = [], 0
    for index, size in enumerate(serving_stage_layers(layers, pp)):
        stages.append(
            ServingStage(
                index=index,
                layers=size,
                full=sum(is_full[start : start + size]),
                dense_ffn=max(0, min(dense_layers, start + size) - start),
                first=index == 0,
                last=index == pp - 1,
            )
        )
        start += size
    return tuple(stages)


# Definitional storage sizes; the 4-bit formats depend on their scale layout and are assumptions instead.
BYTES_PER_PARAM_FIXED = {"bf16": 2.0, "fp8": 1.0, "int8": 1.0}


@dataclass(frozen=True)
class Workload:
    """Derived model quantities. `compute_params_active` are the parameters each token multiplies by.

    Input-embedding lookups and position embeddings cost no FLOPs, so they are excluded from the compute
    count; a tied embedding matrix is still counted once because it is the output head.
    """

    shape: ModelSpec
    head_dim: int
    attention_params_per_layer: int
    ffn_params_per_expert_per_layer: int
    router_params_per_layer: int
    norm_and_bias_params_per_layer: int
    input_embedding_params: int
    output_head_params: int
    final_norm_params: int
    params_derived: float
    active_params_derived: float
    params: float
    active_params: float
    dense_params: float
    expert_params: float
    compute_params_active: float
    dense_ffn_params_per_layer: int = 0  # a mixture-of-experts model's leading dense layers' FFN (with biases)

    @property
    def experts(self) -> int:
        return self.shape.moe.experts if self.shape.moe else 1

    @property
    def active_experts(self) -> int:
        return self.shape.moe.active if self.shape.moe else 1

    @property
    def shared_experts(self) -> int:
        return self.shape.moe.shared if self.shape.moe else 0

    @property
    def dense_layers(self) -> int:
        """Leading layers with a dense FFN in a mixture-of-experts model (every layer of a dense model is dense,
        but is modelled as one always-active expert of ffn_hidden, so this is 0 for it)."""
        return self.shape.moe.dense_layers if self.shape.moe else 0

    @property
    def moe_layers(self) -> int:
        return self.shape.layers - self.dense_layers

    @property
    def expert_ffn_hidden(self) -> int:
        moe = self.shape.moe
        return (moe.expert_ffn_hidden or self.shape.ffn_hidden) if moe else self.shape.ffn_hidden

    @property
    def ffn_active_width(self) -> float:
        """FFN inner width one token runs through in an average layer: (routed + shared) experts x expert width in
        MoE layers, ffn_hidden in dense ones. Sets FFN activation memory and element-wise traffic."""
        moe_width = (self.active_experts + self.shared_experts) * self.expert_ffn_hidden
        layers = self.shape.layers
        return (moe_width * self.moe_layers + self.shape.ffn_hidden * self.dense_layers) / layers

    @property
    def qk_width(self) -> int:
        """Query-key width summed over heads (the QK^T inner size x heads): heads x head_dim (hidden unless the
        model decouples the head size, as Qwen3 does), or heads x MLA's qk head."""
        mla = self.shape.mla
        if mla is None:
            return self.shape.heads * self.head_dim
        return self.shape.heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim)

    @property
    def v_width(self) -> int:
        """Value width summed over heads (the output projection's input): heads x head_dim, or heads x MLA's
        v_head_dim."""
        mla = self.shape.mla
        return self.shape.heads * self.head_dim if mla is None else self.shape.heads * mla.v_head_dim

    def layer_params(self) -> float:
        """Parameters of an average transformer layer (all experts; leading dense layers averaged in), after any
        declared-params scaling. Averaged because pipeline stages are sized by layer count."""
        raw = self.params_derived - self.input_embedding_params - self.output_head_params - self.final_norm_params
        return raw / self.shape.layers * self.params / self.params_derived

    def moe_expert_params_per_layer(self) -> float:
        """Routed-expert parameters of an average layer that expert parallelism shards; 0 for a dense model.

        A dense FFN and shared experts are replicated like attention (not split over an expert-parallel group),
        so only routed experts count here, each with its biases if the model has them.
        """
        if self.shape.moe is None:
            return 0.0
        routed = self.ffn_params_per_expert_per_layer * self.experts * self.moe_layers
        return routed / self.shape.layers * self.params / self.params_derived

    @property
    def windowed_layers(self) -> int:
        """Layers with sliding-window attention (0 without a window)."""
        window = self.shape.sliding_window
        if window is None:
            return 0
        return self.shape.layers if window.layers is None else window.layers

    def attention_span(self, seq: float, key_block: int = 0) -> float:
        """Positions per query an average layer's attention is counted over, in the FLOP count's full-square
        convention (a full layer: seq, though the causal mask halves the work actually done).

        A windowed layer's query i attends to min(i + 1, w) positions, on average w - w^2 / 2 seq over a sequence
        longer than the window; doubled into the same convention, 2w - w^2 / seq (seq once the window covers the
        sequence). With GPT-OSS's 128-token window on 4,096-token sequences that is 252 positions against 4,096.

        `key_block` > 0 gives what a tiled kernel computes instead: a block of queries reads whole blocks of keys,
        the w - 1 positions before it and its own block, so each query costs (ceil((w - 1) / block) + 1) x block
        positions (512 in the same convention for a 128-token window in 128-token blocks).
        """
        if not self.windowed_layers:
            return float(seq)
        w = float(self.shape.sliding_window.tokens)  # type: ignore[union-attr]
        if key_block:
            blocks = math.ceil((w - 1.0) / key_block) + 1.0
            local = min(float(seq), 2.0 * blocks * key_block)
        else:
            local = float(seq) if w >= seq else 2.0 * w - w * w / float(seq)
        return self._layer_average(float(seq), local)

    def cached_tokens(self, context: float) -> float:
        """Tokens an average layer keeps in its KV cache (and a decode step reads) at `context` tokens: all of
        them in a full-attention layer, at most the window in a windowed one."""
        if not self.windowed_layers:
            return float(context)
        w = float(self.shape.sliding_window.tokens)  # type: ignore[union-attr]
        return self._layer_average(float(context), min(float(context), w))

    def serving_stages(self, pp: int) -> tuple[ServingStage, ...]:
        """This model's `pp` serving pipeline stages (`serving_stages`)."""
        return serving_stages(self.shape.layers, self.windowed_layers, self.dense_layers, pp)

    def stage_cached_tokens(self, stage: ServingStage, context: float) -> float:
        """Cached tokens summed over a stage's layers at `context` tokens: each full-attention layer keeps the
        context, each windowed one at most its window.

        Why per stage, not layers / pp x the average layer: stages hold whole layers, and a stage with more
        layers, or more full-attention layers among windowed ones, fills first."""
        window = float(self.shape.sliding_window.tokens) if self.windowed_layers else math.inf  # type: ignore[union-attr]
        return stage.full * float(context) + stage.windowed * min(float(context), window)

    def _layer_average(self, full: float, windowed: float) -> float:
        """A per-layer figure averaged over the layers: `full` for full-attention layers, `windowed` for the rest
        (training's FLOP count and a whole model's figures; serving's memory goes stage by stage instead)."""
        layers, local = self.shape.layers, self.windowed_layers
        return ((layers - local) * full + local * windowed) / layers

    def training_flops_per_token(self) -> float:
        """6 x compute params (2 forward + 4 backward) + 12 l s h attention (QK^T and AV, x3 for backward); with
        MLA the attention term uses its own query-key and value widths (6 l s (qk + v), the same at qk = v = h),
        and with sliding windows the positions an average layer attends to (`attention_span`) replace s."""
        s = self.shape
        span = self.attention_span(s.seq_len)
        return 6.0 * self.compute_params_active + 6.0 * s.layers * span * (self.qk_width + self.v_width)

    def training_flops(self, tokens: float) -> float:
        """Total model FLOPs to train on `tokens` tokens (training-calibration.md section 2)."""
        return self.training_flops_per_token() * tokens

    def prefill_flops(self, prompt_tokens: int) -> float:
        """2 x compute params x ISL + 2 x layers x ISL x span x (qk + v widths) (= 4 l ISL^2 h when the head size
        is hidden / heads and no layer has a window; `attention_span`)."""
        s = self.shape
        span = self.attention_span(prompt_tokens)
        attention = 2.0 * s.layers * prompt_tokens * span * (self.qk_width + self.v_width)
        return 2.0 * self.compute_params_active * prompt_tokens + attention

    def decode_flops_per_token(self, context_tokens: float) -> float:
        """2 x compute params + 2 x layers x (qk + v widths) x cached tokens (scores and weighted sum over the
        cache; a windowed layer's cache stops at its window).

        Latent attention decodes against the cached latent itself: the key and value up-projections are absorbed
        into the query and output projections (DeepSeek-V2, arXiv 2405.04434, section 2.1.2; vLLM's and FlashMLA's
        decode path), so each head scores the latent plus the rotary key and sums the latent: widths heads x
        (latent + rotary) and heads x latent per cached token instead of the expanded keys and values."""
        s = self.shape
        cached = self.cached_tokens(context_tokens)
        widths = float(self.qk_width + self.v_width)
        if s.mla is not None:
            widths = float(s.heads * (2 * s.mla.kv_lora_rank + s.mla.qk_rope_head_dim))
        return 2.0 * self.compute_params_active + 2.0 * s.layers * widths * cached

    def kv_bytes_per_token(self, bytes_per_element: float) -> float:
        """K and V for every layer: 2 x layers x kv_heads x head_dim x bytes; with MLA only the latent and the
        shared rotary key are cached: layers x (kv_lora_rank + qk_rope_head_dim) x bytes (DeepSeek-V2, 2.1).

        Per token of a context that every layer still holds: with sliding windows a sequence of c tokens keeps
        this x `cached_tokens(c)`, not x c."""
        s = self.shape
        if s.mla is not None:
            return float(s.layers * (s.mla.kv_lora_rank + s.mla.qk_rope_head_dim)) * bytes_per_element
        return 2.0 * s.layers * s.kv_heads * self.head_dim * bytes_per_element


def bytes_per_param(precision: str, int4_bytes: float, fp4_bytes: float) -> float:
    """Weight storage bytes per parameter; the 4-bit sizes come from named assumptions (scale layouts vary)."""
    if precision in BYTES_PER_PARAM_FIXED:
        return BYTES_PER_PARAM_FIXED[precision]
    return {"int4": int4_bytes, "fp4": fp4_bytes}[precision]


def _attention_params(shape: ModelSpec, head_dim: int) -> int:
    """One layer's attention projections.

    Grouped-query attention: Q is h x (heads x head_dim), O its transpose, K and V h x kv_dim (Q and O are h x h
    when head_dim = h / heads, as in most models). Multi-head latent attention (DeepSeek-V2,
    arXiv 2405.04434, section 2.1): queries through an optional rank-q_lora latent, keys and values through one
    rank-kv_lora latent plus a shared rotary key, the latents' norms, and the output from heads x v_head_dim.
    """
    h, heads = shape.hidden, shape.heads
    mla = shape.mla
    if mla is None:
        return 2 * h * heads * head_dim + 2 * h * shape.kv_heads * head_dim
    qk_head = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    if mla.q_lora_rank:
        query = h * mla.q_lora_rank + mla.q_lora_rank + mla.q_lora_rank * heads * qk_head
    else:
        query = h * heads * qk_head
    key_value = h * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank
    key_value += mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim)
    return query + key_value + heads * mla.v_head_dim * h


def analyse_model(shape: ModelSpec) -> Workload:
    """Count parameters layer by layer and derive the compute-relevant totals.

    A mixture-of-experts model (DeepSeek-V3 style) may have leading dense layers with a model.ffn_hidden FFN,
    shared experts every token runs, and routed experts of their own (narrower) width; only the routed experts
    are `expert_params` (what expert parallelism shards), the shared ones are replicated like attention.
    """
    h, f, v = shape.hidden, shape.ffn_hidden, shape.vocab
    head_dim = shape.head_dim or h // shape.heads
    kv_dim = shape.kv_heads * head_dim
    moe = shape.moe
    experts = moe.experts if moe else 1
    active = moe.active if moe else 1
    shared = moe.shared if moe else 0
    expert_width = (moe.expert_ffn_hidden or f) if moe else f
    dense_layers = moe.dense_layers if moe else 0
    moe_layers = shape.layers - dense_layers

    attention = _attention_params(shape, head_dim)
    # FFN per expert: gated (SwiGLU) has gate, up and down matrices; a plain FFN has up and down.
    matrices = 3 if shape.ffn_gated else 2
    ffn = matrices * h * expert_width
    dense_ffn = matrices * h * f
    router = h * experts if moe else 0
    # Two norms per layer with a weight each (LayerNorm adds a bias); linear-layer biases when present.
    norms = 2 * h * (2 if shape.biases else 1)
    biases = 0
    if shape.biases:

        def ffn_biases(width: int) -> int:  # gate and up (or up alone) of `width`, down of h
            return (2 * width if shape.ffn_gated else width) + h

        biases = shape.heads * head_dim + 2 * kv_dim + h
        if moe:
            # An expert's biases travel and run with its matrices (GPT-OSS: 40M of them, 0.7 % of its active
            # parameters if every expert's were counted as active); a leading dense layer's with its FFN.
            ffn += ffn_biases(expert_width)
            dense_ffn += ffn_biases(f)
        else:
            biases += ffn_biases(f)
    per_layer_other = norms + biases

    input_embedding = v * h + (shape.seq_len * h if shape.learned_positions else 0)
    output_head = 0 if shape.tied_embeddings else v * h
    final_norm = h * (2 if shape.biases else 1)

    expert_total = ffn * experts * moe_layers
    replicated_ffn = ffn * shared * moe_layers + dense_ffn * dense_layers
    dense = (
        (attention + per_layer_other) * shape.layers
        + router * moe_layers
        + replicated_ffn
        + input_embedding
        + output_head
        + final_norm
    )
    total = dense + expert_total
    active_total = dense + ffn * active * moe_layers

    # Lookup-only parameters do no matrix multiplies; a tied matrix is the head, so it stays in the count.
    lookup_only = shape.seq_len * h if shape.learned_positions else 0
    if not shape.tied_embeddings:
        lookup_only += v * h
    compute_active = active_total - lookup_only

    # A declared total overrides the derived one; the other totals scale with it so ratios stay consistent.
    scale = shape.params / total if shape.params else 1.0
    return Workload(
        shape=shape,
        head_dim=head_dim,
        attention_params_per_layer=attention,
        ffn_params_per_expert_per_layer=ffn,
        router_params_per_layer=router,
        norm_and_bias_params_per_layer=per_layer_other,
        input_embedding_params=input_embedding,
        output_head_params=output_head,
        final_norm_params=final_norm,
        params_derived=float(total),
        active_params_derived=float(active_total),
        params=float(total) * scale,
        active_params=float(active_total) * scale,
        dense_params=float(dense) * scale,
        expert_params=float(expert_total) * scale,
        compute_params_active=float(compute_active) * scale,
        dense_ffn_params_per_layer=dense_ffn if moe else 0,
    )
