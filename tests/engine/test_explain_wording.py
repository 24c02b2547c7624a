"""Explain formulas in words (engine/explain/wording.py): each name of the table read as words, others untouched."""

from __future__ import annotations

from engine.explain.wording import TERMS, explain_entry, in_words, inputs_in_words


def test_names_in_a_formula_become_words():
    assert in_words("ceil(job_gpus / gpus_per_system)") == "ceil(the job's GPUs / GPUs per system)"
    assert in_words("chosen by training.checkpointing = auto (goodput_target)") == (
        "chosen by the checkpointing option = auto (the goodput target)"
    )


def test_product_names_and_unknown_names_are_left_alone():
    # instance types are product names; an unlisted name stays so the golden wording test can find it
    text = "p5.48xlarge and Standard_ND96isr_H100_v5 x a3-highgpu-8g, some_new_name, e.g. GB/s"
    assert in_words(text) == text


def test_inputs_keep_keys_and_numbers():
    inputs = {"cdu_part": "NVIDIA CDU", "method": "air_containment", "n": 3, "nested": {"why": "it_kw / 3.517"}}
    assert inputs_in_words(inputs) == {
        "cdu_part": "NVIDIA CDU",
        "method": "air with aisle containment",
        "n": 3,
        "nested": {"why": "IT kW / 3.517"},
    }


def test_entry_keeps_its_source_as_cited():
    entry = explain_entry("it_kw x PUE", {"pue_from": "site.pue"}, "PyTorch async_save docs (2024)")
    assert entry.formula == "IT kW x PUE"
    assert entry.inputs == {"pue_from": "the site's PUE"}
    assert entry.source == "PyTorch async_save docs (2024)"


def test_every_word_is_words():
    """No entry of the table maps a name to another name (a reader would meet it again)."""
    for name, words in TERMS.items():
        assert "_" not in words and words != name, name
