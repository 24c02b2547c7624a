"""The request's model section: a preset or an explicit shape (`ModelSpec`), with its MoE (`MoeSpec`),
multi-head latent attention (`MlaSpec`) and sliding-window attention (`SlidingWindowSpec`) parts; the preset is
resolved from the catalog in the validation context and the resolved section is put there for the rules that read
the shape. Split from `engine/request/spec.py`, which still exports these names."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import ConfigDict, Field, StrictBool, StrictInt, StrictStr

from engine.request.fields import (
    WHOLE,
    JsonFloat,
    Problem,
    Section,
    catalog_of,
    did_you_mean,
)

if TYPE_CHECKING:
    from pydantic import ValidationInfo


__all__ = ["MlaSpec", "ModelSpec", "MoeSpec", "SlidingWindowSpec"]

_SHAPE_KEYS = ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len")
_FLAG_KEYS = ("ffn_gated", "tied_embeddings", "learned_positions", "biases")
_EXPLICIT_REQUIRED = ("layers", "hidden", "heads", "ffn_hidden", "vocab", "seq_len")


class MoeSpec(Section):
    """Mixture-of-experts routing: `active` of `experts` FFNs run per token."""

    experts: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] = Field(description="Expert FFNs per MoE layer.")
    active: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] = Field(
        description="Routed experts each token is sent to (top-k)."
    )

    shared: Annotated[StrictInt, Field(ge=0, le=64), WHOLE] = Field(
        0, description="Shared experts every token also runs (DeepSeek-style), each expert_ffn_hidden wide."
    )
    expert_ffn_hidden: Annotated[StrictInt, Field(gt=0, le=16_777_216), WHOLE] | None = Field(
        None,
        description="Inner size of one expert's FFN (fine-grained experts are narrower than the dense FFN); "
        "default: model.ffn_hidden.",
    )
    dense_layers: Annotated[StrictInt, Field(ge=0, le=1_000), WHOLE] = Field(
        0, description="Leading layers with a dense FFN of model.ffn_hidden instead of experts (DeepSeek-V3: 3)."
    )
    node_limit: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] | None = Field(
        None,
        description="Node-limited routing: each token reaches experts on at most this many nodes, and is sent "
        "once per node (DeepSeek-V3: 4); default: no limit, one copy per routed expert.",
    )

    def check(self, info: ValidationInfo) -> list[Problem]:
        if self.active > self.experts:
            return [(("active",), f"({self.active}) must be <= model.moe.experts ({self.experts})", self.active)]
        return []


class MlaSpec(Section):
    """Multi-head latent attention (DeepSeek-V2/V3): keys and values pass through a low-rank latent that is all the
    KV cache keeps; queries optionally too. Head sizes are its own, not hidden / heads."""

    q_lora_rank: Annotated[StrictInt, Field(ge=0, le=65_536), WHOLE] = Field(
        description="Rank of the query down-projection (0: queries projected directly)."
    )
    kv_lora_rank: Annotated[StrictInt, Field(gt=0, le=65_536), WHOLE] = Field(
        description="Rank of the joint key-value latent (the cached part)."
    )
    qk_rope_head_dim: Annotated[StrictInt, Field(ge=0, le=4096), WHOLE] = Field(
        description="Per-head query/key size that carries rotary positions (its key part is shared and cached)."
    )
    qk_nope_head_dim: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] = Field(
        description="Per-head query/key size without positions."
    )
    v_head_dim: Annotated[StrictInt, Field(gt=0, le=4096), WHOLE] = Field(description="Per-head value size.")


class SlidingWindowSpec(Section):
    """Sliding-window (local) attention: some layers attend only to the last `tokens` positions (GPT-OSS: every
    other layer, 128 tokens; Gemma 3: five layers in six, 1,024 tokens). Such a layer's attention work and KV cache
    stop growing with the context once it passes the window, which is what makes long contexts cheap on them."""

    tokens: Annotated[StrictInt, Field(gt=0, le=10_000_000), WHOLE] = Field(
        description="Window: how many of the most recent positions a windowed layer attends to."
    )
    layers: Annotated[StrictInt, Field(ge=0, le=1_000), WHOLE] | None = Field(
        None,
        description="How many of the model's layers use the window (the rest attend to the whole context); "
        "default: all of them; 0 turns a preset's window off.",
    )


def _shape_optional(schema: dict[str, Any]) -> None:
    # A preset supplies the shape, so no shape field is required on input (the resolved model has them all).
    schema.pop("required", None)


class ModelSpec(Section):
    """A model shape: a catalog preset, explicit shape fields, or a preset with some fields overridden.

    Validated, it is fully resolved (the preset merged with the explicit fields).
    """

    model_config = ConfigDict(json_schema_extra=_shape_optional)
    replaced_errors = frozenset({"missing"})  # reported by check_input in its own words

    layers: Annotated[StrictInt, Field(gt=0, le=1_000), WHOLE] = Field(
        description="Transformer layers. Required without a preset."
    )
    hidden: Annotated[StrictInt, Field(gt=0, le=1_048_576), WHOLE] = Field(
        description="Hidden size (d_model). Required without a preset."
    )
    heads: Annotated[StrictInt, Field(gt=0, le=16_384), WHOLE] = Field(
        description="Attention heads; must divide hidden unless head_dim is given."
    )
    kv_heads: Annotated[StrictInt, Field(gt=0, le=16_384), WHOLE] = Field(
        description="Key/value heads (grouped-query attention); default: heads (multi-head)."
    )
    head_dim: Annotated[StrictInt, Field(gt=0, le=16_384), WHOLE] | None = Field(
        None,
        description="Per-head query/key/value size; default hidden / heads. Set it where a model decouples the "
        "two (Qwen3: 32 heads of 128 on a hidden size of 2,048).",
    )
    ffn_hidden: Annotated[StrictInt, Field(gt=0, le=16_777_216), WHOLE] = Field(
        description="FFN inner size. Required without a preset."
    )
    vocab: Annotated[StrictInt, Field(gt=0, le=10_000_000), WHOLE] = Field(
        description="Vocabulary size. Required without a preset."
    )
    seq_len: Annotated[StrictInt, Field(gt=0, le=10_000_000), WHOLE] = Field(
        description="Training / context sequence length in tokens."
    )
    preset: StrictStr | None = Field(
        None, description="Catalog preset id, e.g. llama-3-70b (GET /api/catalog/); explicit fields override it."
    )
    ffn_gated: StrictBool = Field(True, description="Gated (SwiGLU, 3-matrix) FFN as in Llama; false: GPT's 2.")
    tied_embeddings: StrictBool = Field(False, description="Output head shares the input embedding matrix.")
    learned_positions: StrictBool = Field(False, description="Learned position embeddings (GPT); false: RoPE.")
    biases: StrictBool = Field(False, description="Linear layers carry biases (GPT); false: Llama-style.")
    dropout: StrictBool = Field(
        False,
        description="Trained with dropout (Megatron-LM's GPT defaults of 2021-2022): every layer keeps two "
        "1-byte masks per hidden unit, and unfused attention one per score. False for runs that set the rates to "
        "0, as Llama, MPT, Pythia and NVIDIA's current recipes do (PyTorch then makes no mask).",
    )
    moe: MoeSpec | None = Field(None, description="Mixture of experts; default: the preset's, else dense.")
    mla: MlaSpec | None = Field(
        None, description="Multi-head latent attention; default: the preset's, else grouped-query attention."
    )
    sliding_window: SlidingWindowSpec | None = Field(
        None, description="Sliding-window attention on some layers; default: the preset's, else none."
    )
    params: JsonFloat | None = Field(
        None, ge=1e6, le=1e14, description="Declared total parameters; the count derived from the shape is reported."
    )

    @classmethod
    def check_input(cls, data: dict[str, Any], info: ValidationInfo) -> tuple[dict[str, Any], list[Problem]]:
        problems: list[Problem] = []
        preset_id = data.get("preset")
        if isinstance(preset_id, str):
            models = catalog_of(info).models
            preset = models.get(preset_id)
            if preset is None:
                known = ", ".join(sorted(models))
                message = f"'{preset_id}' is not a known preset{did_you_mean(preset_id, models)} (known: {known})"
                problems.append((("preset",), message, preset_id))
            else:
                defaults: dict[str, Any] = {key: getattr(preset, key) for key in (*_SHAPE_KEYS, *_FLAG_KEYS)}
                extra = preset.extra or {}
                if preset.moe_experts:
                    defaults["moe"] = {**(extra.get("moe") or {}), "experts": preset.moe_experts,
                                       "active": preset.moe_active or 1}  # fmt: skip
                if extra.get("mla"):
                    defaults["mla"] = dict(extra["mla"])
                if extra.get("sliding_window"):
                    defaults["sliding_window"] = dict(extra["sliding_window"])
                    given = data.get("sliding_window")
                    if isinstance(given, dict):  # a partial window overrides the preset's field by field
                        data = {**data, "sliding_window": {**defaults["sliding_window"], **given}}
                if extra.get("head_dim"):
                    defaults["head_dim"] = int(extra["head_dim"])
                data = {**defaults, **data}
        elif preset_id is None:
            for key in _EXPLICIT_REQUIRED:
                if key not in data:
                    problems.append(((key,), "is required when model.preset is not given", None))
        heads = data.get("heads")
        if "kv_heads" not in data and isinstance(heads, int) and not isinstance(heads, bool):
            data = {**data, "kv_heads": heads}  # explicit shapes without kv_heads are multi-head attention
        return data, problems

    def check(self, info: ValidationInfo) -> list[Problem]:
        problems: list[Problem] = []
        if self.head_dim is None and self.hidden % self.heads:
            message = f"({self.heads}) must divide model.hidden ({self.hidden}) unless model.head_dim is given"
            problems.append((("heads",), message, self.heads))
        if self.head_dim is not None and self.mla is not None:
            message = "cannot be set with model.mla: latent attention sets its own head sizes (qk_nope_head_dim ...)"
            problems.append((("head_dim",), message, self.head_dim))
        window = self.sliding_window
        if window is not None and window.layers is not None and window.layers > self.layers:
            message = (
                f"({window.layers}) must be at most model.layers ({self.layers}); a preset's window counts the "
                "preset's layers, so give model.sliding_window.layers with model.layers"
            )
            problems.append((("sliding_window", "layers"), message, window.layers))
        if self.heads % self.kv_heads:
            message = f"({self.kv_heads}) must divide model.heads ({self.heads})"
            problems.append((("kv_heads",), message, self.kv_heads))
        if self.moe is not None and self.moe.dense_layers >= self.layers:
            message = f"({self.moe.dense_layers}) must be below model.layers ({self.layers}): some layer needs experts"
            problems.append((("moe", "dense_layers"), message, self.moe.dense_layers))
        if not problems and isinstance(info.context, MutableMapping):
            info.context["model"] = self  # the workload sections' rules read the resolved shape
        return problems
