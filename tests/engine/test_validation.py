"""Request validation: every nasty input is rejected with a message on its dotted path, all at once."""

from __future__ import annotations

import json

import pytest

from engine import RequestInvalid, validate_request

GOOD_TRAINING = {
    "workload": "training",
    "model": {"preset": "llama-3-70b"},
    "training": {"tokens": 15e12, "deadline_days": 90},
    "hardware": {"system": "auto"},
    "pricing": {"years": 3, "regions": ["us-east-1", "us-west-2"]},
}
GOOD_INFERENCE = {
    "workload": "inference",
    "model": {"preset": "llama-3-8b"},
    "inference": {"requests_per_s": 5, "prompt_tokens": 1000, "output_tokens": 200},
}


def errors_for(catalog, data) -> dict[str, list[str]]:
    with pytest.raises(RequestInvalid) as info:
        validate_request(data, catalog)
    return info.value.errors


def with_training(**fields):
    return {**GOOD_TRAINING, "training": {**GOOD_TRAINING["training"], **fields}}


def test_good_requests_validate_with_defaults(catalog):
    req = validate_request(GOOD_TRAINING, catalog)
    assert req.training.global_batch_tokens == 4 * 1024 * 1024 and req.training.precision == "bf16"
    assert req.model.layers == 80 and req.model.kv_heads == 8 and req.model.preset == "llama-3-70b"
    assert req.pricing.regions == ("us-east-1", "us-west-2")
    inf = validate_request(GOOD_INFERENCE, catalog)
    assert inf.inference.ttft_ms == 1000 and inf.inference.tpot_ms == 50 and inf.hardware.system == "auto"
    json.dumps(inf.to_dict())


@pytest.mark.parametrize("body", [[], ["workload"], "training", 42, None, True])
def test_non_object_body(catalog, body):
    errs = errors_for(catalog, body)
    assert list(errs) == ["__all__"]
    assert "JSON object" in errs["__all__"][0]


@pytest.mark.parametrize(
    ("value", "phrase"),
    [
        ("15e12", "must be a number, not a string"),
        (True, "must be a number, not a boolean"),
        (float("nan"), "finite"),
        (float("inf"), "finite"),
        (-1, "must be > 0"),
        (0, "must be > 0"),
        (1e30, "must be <="),
        ([1], "must be a number, not a list"),
        ({"v": 1}, "must be a number, not an object"),
    ],
)
def test_bad_tokens(catalog, value, phrase):
    errs = errors_for(catalog, with_training(tokens=value))
    assert list(errs) == ["training.tokens"]
    assert phrase in errs["training.tokens"][0]
    assert errs["training.tokens"][0].startswith("training.tokens ")


def test_exact_message_for_zero_tokens(catalog):
    assert errors_for(catalog, with_training(tokens=0)) == {"training.tokens": ["training.tokens must be > 0"]}


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"deadline_days": 4000}, "training.deadline_days"),
        ({"deadline_days": None, "gpus": 2_000_000}, "training.gpus"),
        ({"deadline_days": None, "gpus": 8.5}, "training.gpus"),
        ({"global_batch_tokens": 1024}, "training.global_batch_tokens"),  # below seq_len 8192
        ({"precision": "fp16"}, "training.precision"),
        ({"deadline_percentile": "p99"}, "training.deadline_percentile"),
        ({"deadline_days": None, "gpus": 64, "deadline_percentile": "p90"}, "training.deadline_percentile"),
        ({"parallelism": {"tp": 0}}, "training.parallelism.tp"),
        ({"parallelism": {"tp": 3}}, "training.parallelism.tp"),  # does not divide 64 heads / 8 kv heads
        ({"parallelism": {"pp": 81}}, "training.parallelism.pp"),
        ({"parallelism": {"recompute": "some"}}, "training.parallelism.recompute"),
        ({"parallelism": [8, 1]}, "training.parallelism"),
        ({"parallelism": {"tpp": 8}}, "training.parallelism.tpp"),
    ],
)
def test_bad_training_fields(catalog, fields, path):
    assert path in errors_for(catalog, with_training(**fields))


def test_the_default_batch_must_hold_a_sequence_too(catalog):
    """A sequence longer than the default batch (4,194,304 tokens) is refused at once, naming the batch, not accepted
    and then failed when the stored request is validated again; a batch of two such sequences is accepted and
    survives the round trip through its stored form."""
    long = {**GOOD_TRAINING, "model": {"preset": "llama-3-8b", "seq_len": 8_388_608}}
    assert errors_for(catalog, long) == {
        "training.global_batch_tokens": ["training.global_batch_tokens (4194304) must be >= model.seq_len (8388608)"]
    }
    fixed = {**long, "training": {**long["training"], "global_batch_tokens": 16_777_216}}
    request = validate_request(fixed, catalog)
    assert validate_request(request.to_dict(), catalog).training.global_batch_tokens == 16_777_216


def test_both_or_neither_deadline_and_gpus(catalog):
    both = errors_for(catalog, with_training(gpus=64))
    assert both == {"training": ["training must give exactly one of deadline_days or gpus (got both)"]}
    neither = errors_for(catalog, with_training(deadline_days=None))
    assert "got neither" in neither["training"][0]


def test_pinned_degrees_must_match_gpus(catalog):
    pins = {"tp": 8, "pp": 2, "dp": 2, "cp": 1}
    errs = errors_for(catalog, with_training(deadline_days=None, gpus=64, parallelism=pins))
    assert errs == {
        "training.parallelism": ["training.parallelism: tp x cp x pp x dp (32) must equal training.gpus (64)"]
    }
    # Unpinned, context parallelism (cp = 2) can fill the rest.
    validate_request(with_training(deadline_days=None, gpus=64, parallelism={"tp": 8, "pp": 2, "dp": 2}), catalog)
    errs = errors_for(catalog, with_training(deadline_days=None, gpus=60, parallelism={"tp": 8}))
    assert "must divide training.gpus (60)" in errs["training.parallelism"][0]


def test_unknown_preset_system_and_enums(catalog):
    errs = errors_for(
        catalog,
        {
            **GOOD_TRAINING,
            "model": {"preset": "llama-9-1t"},
            "hardware": {"system": "dgx-z900", "fabric": "token-ring", "cooling": "ice"},
        },
    )
    assert "model.preset 'llama-9-1t' is not a known preset" in errs["model.preset"][0]
    assert "hardware.system 'dgx-z900' is not a catalog system" in errs["hardware.system"][0]
    assert "hardware.fabric" in errs and "hardware.cooling" in errs


def test_unknown_keys_at_every_level(catalog):
    body = {
        **GOOD_TRAINING,
        "wokload": "x",
        "model": {"preset": "llama-3-8b", "layer": 2},
        "training": {**GOOD_TRAINING["training"], "tokenz": 1},
        "hardware": {"sytem": "auto"},
        "site": {"pue": 1.2, "power": 3},
        "pricing": {"year": 3},
        "assumptions": {"mfu": 0.5},
    }
    errs = errors_for(catalog, body)
    for path in (
        "wokload",
        "model.layer",
        "training.tokenz",
        "hardware.sytem",
        "site.power",
        "pricing.year",
        "assumptions.mfu",
    ):
        assert path in errs, path
    assert "did you mean 'tokens'" in errs["training.tokenz"][0]


def test_workload_and_sections(catalog):
    assert "workload" in errors_for(catalog, {**GOOD_TRAINING, "workload": "finetune"})
    assert "workload" in errors_for(catalog, {k: v for k, v in GOOD_TRAINING.items() if k != "workload"})
    assert errors_for(catalog, {"workload": "inference", "model": {"preset": "llama-3-8b"}}) == {
        "inference": ["inference is required"]
    }
    assert "model" in errors_for(catalog, {"workload": "training", "training": GOOD_TRAINING["training"]})
    # The other workload's section is ignored (forms may send both), but it must still be an object.
    req = validate_request({**GOOD_INFERENCE, "training": {"tokens": 1}}, catalog)
    assert req.training is None


def test_model_shape_rules(catalog):
    base = {"workload": "training", "training": {"tokens": 1e9, "gpus": 8}}
    partial = errors_for(catalog, {**base, "model": {"layers": 2, "hidden": 64}})
    for key in ("heads", "ffn_hidden", "vocab", "seq_len"):
        assert f"model.{key}" in partial
    shape = {"layers": 2, "hidden": 100, "heads": 8, "kv_heads": 3, "ffn_hidden": 256, "vocab": 1000, "seq_len": 128}
    errs = errors_for(catalog, {**base, "model": shape})
    assert "model.heads (8) must divide model.hidden (100)" in errs["model.heads"][0]
    assert "model.kv_heads (3) must divide model.heads (8)" in errs["model.kv_heads"][0]
    moe = errors_for(catalog, {**base, "model": {"preset": "mixtral-8x7b", "moe": {"experts": 4, "active": 8}}})
    assert moe == {"model.moe.active": ["model.moe.active (8) must be <= model.moe.experts (4)"]}
    assert "model.ffn_gated" in errors_for(catalog, {**base, "model": {"preset": "llama-3-8b", "ffn_gated": "yes"}})
    assert "model.seq_len" in errors_for(catalog, {**base, "model": {"preset": "llama-3-8b", "seq_len": 10**8}})


def test_preset_with_override(catalog):
    req = validate_request({**GOOD_TRAINING, "model": {"preset": "llama-3-8b", "seq_len": 4096}}, catalog)
    assert req.model.seq_len == 4096 and req.model.hidden == 4096 and req.model.preset == "llama-3-8b"


def test_inference_fields(catalog):
    body = {
        **GOOD_INFERENCE,
        "inference": {
            "requests_per_s": "5",
            "prompt_tokens": 0,
            "output_tokens": -3,
            "ttft_ms": float("inf"),
            "tpot_ms": False,
            "precision": "int2",
            "parallelism": {"tp": 5},
        },
    }
    errs = errors_for(catalog, body)
    for path in (
        "inference.requests_per_s",
        "inference.prompt_tokens",
        "inference.output_tokens",
        "inference.ttft_ms",
        "inference.tpot_ms",
        "inference.precision",
        "inference.parallelism.tp",
    ):
        assert path in errs, path


def test_site_pricing_assumptions_name(catalog):
    body = {
        **GOOD_TRAINING,
        "site": {"pue": 0.9, "electricity_usd_per_kwh": -1},
        "pricing": {"years": 0, "regions": ["us-east-1", "moon-base"]},
        "assumptions": {"gemm_efficiency_hopper": 1.5, "max_tensor_parallel": 2.5},
        "name": "x" * 201,
    }
    errs = errors_for(catalog, body)
    for path in (
        "site.pue",
        "site.electricity_usd_per_kwh",
        "pricing.years",
        "pricing.regions.1",
        "assumptions.gemm_efficiency_hopper",
        "assumptions.max_tensor_parallel",
        "name",
    ):
        assert path in errs, path
    assert "pricing.regions" in errors_for(catalog, {**GOOD_TRAINING, "pricing": {"regions": []}})
    assert "hardware.rack_kw" in errors_for(catalog, {**GOOD_TRAINING, "hardware": {"rack_kw": 0}})


def test_every_problem_reported_at_once(catalog):
    body = {
        "workload": "training",
        "model": {"preset": "nope"},
        "training": {"tokens": -5, "deadline_days": "soon", "gpus": 8},
        "hardware": {"system": "dgx-h900", "rack_kw": True},
        "bogus": 1,
    }
    errs = errors_for(catalog, body)
    assert set(errs) == {
        "model.preset",
        "training.tokens",
        "training.deadline_days",
        "training",
        "hardware.system",
        "hardware.rack_kw",
        "bogus",
    }
    text = str(RequestInvalid(errs))
    assert "training.tokens must be > 0" in text and "bogus is not a known field" in text


# ------------------------------------------------------------------------------ the schema (pydantic models)


def test_whole_numbers_may_be_written_as_floats_and_are_stored_as_int(catalog):
    req = validate_request(with_training(deadline_days=None, gpus=64.0, parallelism={"tp": 8.0}), catalog)
    assert req.training.gpus == 64 and isinstance(req.training.gpus, int)
    assert req.training.parallelism.tp == 8 and isinstance(req.training.parallelism.tp, int)
    assert isinstance(req.training.tokens, float)


def test_null_is_not_given_but_an_unknown_key_is_refused_even_when_null(catalog):
    req = validate_request({**GOOD_TRAINING, "site": None, "hardware": {"system": None, "cooling": None}}, catalog)
    assert req.hardware.system == "auto" and req.hardware.cooling == "auto" and req.site.pue is None
    assert (
        validate_request({**GOOD_TRAINING, "assumptions": {"gemm_efficiency_hopper": None}}, catalog).assumptions == {}
    )
    errs = errors_for(catalog, {**GOOD_TRAINING, "tokenz": None, "model": {"preset": "llama-3-8b", "layer": None}})
    assert set(errs) == {"tokenz", "model.layer"}
    assert errs["model.layer"][0].startswith("model.layer is not a known field; did you mean 'layers'?")


def test_exact_bound_messages(catalog):
    """Bounds read as written: whole numbers with separators, huge ones in e-notation."""
    assert errors_for(catalog, with_training(deadline_days=4000)) == {
        "training.deadline_days": ["training.deadline_days must be <= 3,650"]
    }
    assert errors_for(catalog, with_training(tokens=1e17)) == {"training.tokens": ["training.tokens must be <= 1e+16"]}
    assert errors_for(catalog, {**GOOD_TRAINING, "site": {"pue": 0.5}}) == {"site.pue": ["site.pue must be >= 1"]}
    assert errors_for(catalog, with_training(parallelism={"zero_stage": 4})) == {
        "training.parallelism.zero_stage": ["training.parallelism.zero_stage must be <= 3"]
    }
    assert errors_for(catalog, with_training(deadline_days=None, gpus=8.5)) == {
        "training.gpus": ["training.gpus must be a whole number"]
    }


def test_unknown_preset_and_system_suggest_the_closest(catalog):
    errs = errors_for(catalog, {**GOOD_TRAINING, "model": {"preset": "llama-3-7b"}, "hardware": {"system": "dgx-h10"}})
    assert "model.preset 'llama-3-7b' is not a known preset; did you mean 'llama-3-70b'?" in errs["model.preset"][0]
    assert "did you mean 'dgx-h100'?" in errs["hardware.system"][0]
    # An unknown preset is the one problem: the shape fields it would have filled are not reported missing.
    assert set(errs) == {"model.preset", "hardware.system"}


def test_interleave_rules(catalog):
    # Virtual stages hold whole layers, so each stage needs at least `interleave` of them (80 layers / 8 = 10); the
    # end stages count the embedding or the loss as one (11), the middle ones do not.
    assert errors_for(catalog, with_training(parallelism={"pp": 8, "interleave": 11})) == {
        "training.parallelism.interleave": [
            "training.parallelism.interleave (11) must be at most the layers of every stage, the end stages "
            "counting the embedding or the loss as one (fewest: 10)"
        ]
    }
    validate_request(with_training(parallelism={"pp": 8, "interleave": 3}), catalog)  # 10 layers: 4 + 3 + 3
    assert errors_for(catalog, with_training(parallelism={"pp": 1, "interleave": 2})) == {
        "training.parallelism.interleave": ["training.parallelism.interleave (2) needs pipeline parallelism (pp > 1)"]
    }
    req = validate_request(with_training(parallelism={"pp": 8, "interleave": 5, "zero_stage": 1}), catalog)
    assert (req.training.parallelism.interleave, req.training.parallelism.zero_stage) == (5, 1)


def test_workload_rules_wait_for_a_valid_model_but_not_for_the_other_fields(catalog):
    """tp is checked against the resolved model even when another training field is bad; with a bad model,
    the rules relative to it are skipped (the model's own error says what to fix first)."""
    errs = errors_for(catalog, with_training(tokens=-1, parallelism={"tp": 3}))
    assert set(errs) == {"training.tokens", "training.parallelism.tp"}
    errs = errors_for(catalog, {**with_training(parallelism={"tp": 3}), "model": {"preset": "nope"}})
    assert set(errs) == {"model.preset"}


def test_normalised_request_validates_to_itself(catalog):
    """The stored, normalised request (to_dict) is itself a valid request that means the same."""
    for body in (GOOD_TRAINING, GOOD_INFERENCE, with_training(deadline_days=None, gpus=64, parallelism={"tp": 8})):
        once = validate_request(body, catalog)
        assert validate_request(once.to_dict(), catalog) == once
    assert "inference" not in validate_request(GOOD_TRAINING, catalog).to_dict()


def test_recompute_choices_are_the_engines():
    from engine.performance.memory import RECOMPUTE_MODES
    from engine.request.schema_lookup import choices_of

    assert tuple(choices_of(("training", "parallelism", "recompute"))) == RECOMPUTE_MODES


def test_sections_are_frozen_and_build_without_a_context():
    """Engine tests and calibration build sections directly: presets resolve against the default catalog."""
    from pydantic import ValidationError

    from engine.request.spec import ModelSpec

    model = ModelSpec(preset="llama-3-8b")
    assert (model.layers, model.kv_heads, model.ffn_gated) == (32, 8, True)
    assert ModelSpec(layers=2, hidden=64, heads=4, ffn_hidden=256, vocab=1000, seq_len=128).kv_heads == 4
    with pytest.raises(ValidationError):
        model.layers = 3  # type: ignore[misc]


def test_minimal_request_validates_back_to_the_same_request():
    """Duplicate-and-edit shows a stored (normalised) request without its defaults and preset-derived shape; that
    shorter request must be the same request once validated, for every golden request."""
    from engine import load_catalog, validate_request
    from tests.golden.requests import GOLDEN_REQUESTS

    catalog = load_catalog()
    for name, body in GOLDEN_REQUESTS.items():
        request = validate_request(body, catalog)
        minimal = request.to_minimal_dict()
        assert validate_request(minimal, catalog) == request, name
        if request.model is not None and request.model.preset is not None:  # capacity plans have no model
            assert "layers" not in minimal["model"], name  # the preset's own layer count is not repeated
    dense = validate_request(GOLDEN_REQUESTS["train-70b-auto-90d"], catalog).to_minimal_dict()
    assert dense == {
        "workload": "training",
        "model": {"preset": "llama-3-70b"},
        "training": {"tokens": 15e12, "deadline_days": 90.0},
        "pricing": {"regions": ["us-east-1", "us-west-2"]},
    }


# ---- Layouts practitioners run (issue 13): uneven stages, context parallelism, TP beyond the KV heads --------


def test_pp_need_not_divide_the_layers_but_every_stage_needs_one(catalog):
    req = validate_request(with_training(parallelism={"pp": 7}), catalog)  # 80 layers on 7 stages
    assert req.training.parallelism.pp == 7
    assert errors_for(catalog, with_training(parallelism={"pp": 81})) == {
        "training.parallelism.pp": [
            "training.parallelism.pp (81) must be <= model.layers (80): every stage needs a layer"
        ]
    }


def test_pinned_end_stages_need_pipeline_and_leave_every_stage_a_layer(catalog):
    errs = errors_for(catalog, with_training(parallelism={"first_stage_layers": 9}))
    assert errs == {
        "training.parallelism.first_stage_layers": [
            "training.parallelism.first_stage_layers (9) needs pipeline parallelism: pin training.parallelism.pp > 1"
        ]
    }
    errs = errors_for(catalog, with_training(parallelism={"pp": 4, "first_stage_layers": 0}))
    assert "leaves a pipeline stage with no layer" in errs["training.parallelism.first_stage_layers"][0]
    # 40 + 39 leaves one layer for two middle stages of an 80-layer model on pp = 4.
    errs = errors_for(catalog, with_training(parallelism={"pp": 4, "first_stage_layers": 40, "last_stage_layers": 39}))
    assert errs == {
        "training.parallelism.last_stage_layers": [
            "training.parallelism.last_stage_layers: first_stage_layers + last_stage_layers (40 + 39) must leave at "
            "least one layer for each of the 2 middle stages of model.layers (80)"
        ]
    }
    errs = errors_for(catalog, with_training(parallelism={"pp": 2, "first_stage_layers": 30, "last_stage_layers": 30}))
    assert "must equal model.layers (80) with pp = 2" in errs["training.parallelism.last_stage_layers"][0]
    errs = errors_for(catalog, with_training(parallelism={"pp": 8, "first_stage_layers": 2, "interleave": 4}))
    assert errs == {
        "training.parallelism.interleave": [
            "training.parallelism.interleave (4) must be at most the layers of every stage, the end stages counting "
            "the embedding or the loss as one (fewest: 3)"
        ]
    }
    # 3 layers and the embedding fill the first stage's 4 virtual stages (Megatron-Core's
    # account_for_embedding_in_pipeline_split)
    validate_request(with_training(parallelism={"pp": 8, "first_stage_layers": 3, "interleave": 4}), catalog)
    req = validate_request(
        with_training(parallelism={"pp": 8, "first_stage_layers": 9, "last_stage_layers": 9}), catalog
    )
    assert req.training.parallelism.first_stage_layers == 9


def test_cp_must_split_the_sequence_into_2cp_chunks(catalog):
    # llama-3-70b: seq_len 8192 = 2^13; 2 x 3 = 6 and 2 x 6 = 12 do not divide it.
    errs = errors_for(catalog, with_training(parallelism={"cp": 3}))
    assert errs == {
        "training.parallelism.cp": [
            "training.parallelism.cp (3) must split model.seq_len (8192) into 2 x cp = 6 equal chunks (2 x cp must "
            "divide it)"
        ]
    }
    assert "training.parallelism.cp" in errors_for(catalog, with_training(parallelism={"cp": 6}))
    assert validate_request(with_training(parallelism={"cp": 4}), catalog).training.parallelism.cp == 4


def test_tp_beyond_kv_heads_must_be_a_multiple_of_them(catalog):
    # llama-3-70b: 64 heads, 8 KV heads. tp = 16 replicates each KV head on 2 GPUs; tp = 12 splits neither.
    assert validate_request(with_training(parallelism={"tp": 16}), catalog).training.parallelism.tp == 16
    errs = errors_for(catalog, with_training(parallelism={"tp": 12}))
    assert errs == {"training.parallelism.tp": ["training.parallelism.tp (12) must divide model.heads (64)"]}
    model = {"preset": "llama-3-70b", "hidden": 6144, "heads": 48, "kv_heads": 12}
    body = {**with_training(parallelism={"tp": 16}), "model": model}
    errs = errors_for(catalog, body)
    assert "above model.kv_heads (12), so it must be a multiple of it" in errs["training.parallelism.tp"][0]


def test_ep_larger_than_the_experts(catalog):
    body = {**with_training(parallelism={"ep": 16}), "model": {"preset": "mixtral-8x7b"}}
    assert errors_for(catalog, body) == {
        "training.parallelism.ep": [
            "training.parallelism.ep (16) must be at most model.moe.experts (8): each GPU holds whole experts"
        ]
    }
    body = {**with_training(parallelism={"ep": 3}), "model": {"preset": "mixtral-8x7b"}}
    assert errors_for(catalog, body) == {
        "training.parallelism.ep": ["training.parallelism.ep (3) must divide model.moe.experts (8)"]
    }


def test_fp8_activations_need_fp8_precision(catalog):
    errs = errors_for(catalog, with_training(memory={"fp8_activations": True}))
    assert errs == {
        "training.memory.fp8_activations": [
            "training.memory.fp8_activations needs training.precision fp8 (an FP8 recipe keeps them)"
        ]
    }
    assert validate_request(with_training(precision="fp8", memory={"fp8_activations": True}), catalog)
