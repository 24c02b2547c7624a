"""Presets train on their published global batch by default; the plan says where its batch comes from.

Expected values are the publications' own figures: Llama 3 405B ends on 16M tokens (2,048 sequences of 8,192;
'The Llama 3 Herd of Models', section 3.4.1), GPT-3 175B on 3.2M tokens (1,536 sequences of 2,048; Brown et al.
2020, Table 2.1), BLOOM 176B on 2,048 sequences of 2,048 (BigScience's training script), and Llama 2 used 4M
tokens at every size (Touvron et al. 2023), the planner's default.
"""

from __future__ import annotations

import pytest

from engine import run_plan, to_json, validate_request


def _request(preset: str, **training) -> dict:
    return {"workload": "training", "model": {"preset": preset}, "hardware": {"system": "dgx-h100"},
            "training": {"tokens": 1e11, "gpus": 1024, **training}}  # fmt: skip


@pytest.mark.parametrize(
    ("preset", "tokens", "sequences"),
    [
        ("llama-3-405b", 2048 * 8192, 2048),
        ("gpt-3-175b", 1536 * 2048, 1536),
        ("llama-3-70b", 4 * 1024 * 1024, 512),
        ("bloom-176b", 2048 * 2048, 2048),  # BigScience's tr11-176B-ml.slurm: GLOBAL_BATCH_SIZE=2048 of 2,048 tokens
        ("starcoder-15b", 512 * 8192, 512),  # StarCoder (arXiv 2305.06161) section 5: 512 sequences of 8,192
        ("llama-2-70b", 4 * 1024 * 1024, 1024),  # Llama 2 (arXiv 2307.09288) section 2.2: 4M tokens of 4,096
        ("nemotron-4-340b", 2304 * 4096, 2304),  # Nemotron-4 340B (arXiv 2406.11704) Table 2: the final stage
        ("smollm3-3b", 2_359_296, 576),  # SmolLM3-3B-checkpoints: GBS 2,359,296 tokens = 576 x 4,096
        ("phi-4", 5760 * 4096, 5760),  # Phi-4 Technical Report (arXiv 2412.08905) section 3: 5,760 sequences
    ],
)
def test_a_preset_defaults_to_its_published_batch(catalog, preset, tokens, sequences):
    request = validate_request(_request(preset), catalog)
    assert request.training.global_batch_tokens == tokens
    plan = to_json(run_plan(request, catalog))
    assert plan["training"]["global_batch_sequences"] == sequences
    entry = plan["explain"]["training.global_batch_sequences"]
    assert entry["inputs"]["global batch (tokens)"] == tokens
    assert "reference/" not in entry["source"] and ".md" not in entry["source"]


def test_the_explain_names_the_publication_or_the_request(catalog):
    source = lambda body: to_json(run_plan(validate_request(body, catalog), catalog))["explain"][  # noqa: E731
        "training.global_batch_sequences"
    ]["source"]
    assert "The Llama 3 Herd of Models" in source(_request("llama-3-405b"))
    assert "Llama 2" in source(_request("llama-3-70b"))  # no published batch: the default and why it is 4M
    assert (
        source(_request("llama-3-405b", global_batch_tokens=8 * 1024 * 1024))
        == "the global batch given in the request (tokens)"
    )


def test_an_explicit_batch_wins_and_survives_the_minimal_form(catalog):
    for given in (4 * 1024 * 1024, 2048 * 8192):
        request = validate_request(_request("llama-3-405b", global_batch_tokens=given), catalog)
        assert request.training.global_batch_tokens == given
        again = validate_request(request.to_minimal_dict(), catalog)
        assert again == request
    # The published batch is the default, so the minimal form leaves it out; a non-preset batch is kept.
    minimal = validate_request(_request("llama-3-405b"), catalog).to_minimal_dict()
    assert "global_batch_tokens" not in minimal["training"]


def test_the_stepped_ramp_of_llama_3_405b_lengthens_the_whole_run_only(catalog):
    """Its schedule runs 2.87T tokens at half the batch or less: on a 3T-token run nearly all of it ramps."""
    plan = to_json(run_plan(validate_request(_request("llama-3-405b", tokens=3e12), catalog), catalog))["training"]
    factor = next(f for f in plan["whole_run"]["factors"] if f["name"] == "batch ramp-up")
    share = 1 - (plan["step_breakdown_s"]["pipeline"] - plan["step_breakdown_s"]["bubble"]) / plan["step_time_s"]
    excess = 252e6 / 3e12 * (4 - 1) + (2.87e12 - 252e6) / 3e12 * (2 - 1)
    assert factor["efficiency"] == pytest.approx(1 / (1 + share * excess), rel=1e-9)
    assert factor["efficiency"] < 1.0
