"""Workload stage: parameter counts, FLOPs per token and bytes per parameter from a model shape.

Parameters are counted matrix by matrix (GQA attention, gated or plain FFN, MoE experts, embeddings) rather
than with a 12lh^2 shortcut, because Llama-style models (GQA, SwiGLU, 128K vocabularies) break the shortcut.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.request.spec import ModelSpec

__all__ = ["BYTES_PER_PARAM_FIXED", "Workload", "analyse_model", "bytes_per_param"]

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

    @property
    def experts(self) -> int:
        return self.shape.moe.experts if self.shape.moe else 1

    @property
    def active_experts(self) -> int:
        return self.shape.moe.active if self.shape.moe else 1

    def layer_params(self) -> float:
        """Parameters of one transformer layer (all experts), after any declared-params scaling."""
        raw = (
            self.attention_params_per_layer
            + self.ffn_params_per_expert_per_layer * self.experts
            + self.router_params_per_layer
            + self.norm_and_bias_params_per_layer
        )
        return raw * self.params / self.params_derived

    def moe_expert_params_per_layer(self) -> float:
        """Expert FFN parameters of one layer (all experts) that expert parallelism shards; 0 for a dense model.

        A dense FFN is replicated like attention (it is not split over an expert-parallel group), so only
        mixture-of-experts models have parameters here; expert biases, if any, stay with the dense part
        (a conservative simplification: they are a few thousand parameters per expert).
        """
        if self.shape.moe is None:
            return 0.0
        return self.ffn_params_per_expert_per_layer * self.experts * self.params / self.params_derived

    def training_flops_per_token(self) -> float:
        """6 x compute params (2 forward + 4 backward) + 12 l s h attention (QK^T and AV, x3 for backward)."""
        s = self.shape
        return 6.0 * self.compute_params_active + 12.0 * s.layers * s.seq_len * s.hidden

    def training_flops(self, tokens: float) -> float:
        """Total model FLOPs to train on `tokens` tokens (training-calibration.md section 2)."""
        return self.training_flops_per_token() * tokens

    def prefill_flops(self, prompt_tokens: int) -> float:
        """2 x compute params x ISL + 4 x layers x ISL^2 x hidden (inference-calibration.md section 2 item 5)."""
        s = self.shape
        return 2.0 * self.compute_params_active * prompt_tokens + 4.0 * s.layers * prompt_tokens**2 * s.hidden

    def decode_flops_per_token(self, context_tokens: float) -> float:
        """2 x compute params + 4 x layers x hidden x context (scores and weighted sum over the cache)."""
        s = self.shape
        return 2.0 * self.compute_params_active + 4.0 * s.layers * s.hidden * context_tokens

    def kv_bytes_per_token(self, bytes_per_element: float) -> float:
        """K and V for every layer: 2 x layers x kv_heads x head_dim x bytes (inference-calibration.md 2.1)."""
        s = self.shape
        return 2.0 * s.layers * s.kv_heads * self.head_dim * bytes_per_element


def bytes_per_param(precision: str, int4_bytes: float, fp4_bytes: float) -> float:
    """Weight storage bytes per parameter; the 4-bit sizes come from named assumptions (scale layouts vary)."""
    if precision in BYTES_PER_PARAM_FIXED:
        return BYTES_PER_PARAM_FIXED[precision]
    return {"int4": int4_bytes, "fp4": fp4_bytes}[precision]


def analyse_model(shape: ModelSpec) -> Workload:
    """Count parameters layer by layer and derive the compute-relevant totals."""
    h, f, v = shape.hidden, shape.ffn_hidden, shape.vocab
    head_dim = h // shape.heads
    kv_dim = shape.kv_heads * head_dim
    experts = shape.moe.experts if shape.moe else 1
    active = shape.moe.active if shape.moe else 1

    # Attention: Q and O are h x h; K and V are h x kv_dim (grouped-query attention shrinks them).
    attention = 2 * h * h + 2 * h * kv_dim
    # FFN per expert: gated (SwiGLU) has gate, up and down matrices; a plain FFN has up and down.
    ffn = (3 if shape.ffn_gated else 2) * h * f
    router = h * experts if shape.moe else 0
    # Two norms per layer with a weight each (LayerNorm adds a bias); linear-layer biases when present.
    norms = 2 * h * (2 if shape.biases else 1)
    biases = 0
    if shape.biases:
        biases = (h + 2 * kv_dim + h) + ((2 * f if shape.ffn_gated else f) + h) * experts
    per_layer_other = norms + biases

    input_embedding = v * h + (shape.seq_len * h if shape.learned_positions else 0)
    output_head = 0 if shape.tied_embeddings else v * h
    final_norm = h * (2 if shape.biases else 1)

    expert_total = ffn * experts * shape.layers
    dense = (attention + router + per_layer_other) * shape.layers + input_embedding + output_head + final_norm
    total = dense + expert_total
    active_total = dense + ffn * active * shape.layers

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
    )
