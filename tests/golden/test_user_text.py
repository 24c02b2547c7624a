"""The words a buyer reads in a plan carry no identifiers of ours.

Walks every golden plan (plans/*.json, the stored JSON the page, PDF and API show) and the summary band the page
and the PDF lead with, and fails on three kinds of internal name in a text a person reads:

- a catalog id (any key of the catalog's GPUs, systems, build parts or model presets: "dgx-h100", "cdu-in-row-1350"),
  where the catalog's own name belongs ("NVIDIA DGX H100");
- a dotted field path ("training.checkpointing"), where words belong ("the checkpointing option");
- a snake_case identifier ("goodput_target", "1cc_h100_sxm5"), where words belong ("the goodput target").

Texts walked: labels, sentences, notes, reasons, problems, warnings, rules, the verdict, every explain formula and
text input, and the summary band (its sentence, figures and risks). Left out on purpose: the assumption list (a
user overrides an assumption by its name there), the request echo (the user's own input), the BOM and topology
(part ids are data there, each beside its name), `source` fields (a citation may name an API as its authors do:
"async_save"), explain input keys (field names that carry their unit, labelled in words by the outputs), and id
fields (`option`, `system`, `part_number`: what tools read).

A hyperscaler's instance type is its product name (p5.48xlarge, Standard_ND96isr_H100_v5) and is not matched.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PLANS = Path(__file__).parent / "plans"
CATALOG = Path(__file__).resolve().parents[2] / "engine" / "data" / "catalog"

# Keys whose string values (or list of strings) a person reads.
TEXT_KEYS = frozenset(
    {
        "label",
        "sentence",
        "note",
        "notes",
        "reason",
        "problems",
        "warnings",
        "price_warnings",
        "price_warning_headlines",
        "cloud_notes",
        "capacity_note",
        "rule",
        "batch_note",
        "description",
        "drivers",
        "envelope_capex",
        "not_modelled",
        "formula",
        "checkpointing_reason",
        "excluded_reason",
        "unavailable_reason",
        "management_reason",
        "price_basis",
    }
)
SKIPPED_SECTIONS = frozenset({"assumptions", "request", "bom", "topology"})

DOTTED = re.compile(r"(?<![\w.])[a-z][a-z0-9_]+(?:\.[a-z_][a-z0-9_]+)+(?![\w])")
SNAKE = re.compile(r"(?<![\w.-])[a-z0-9]*[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w-])")

# (plan path, the name found) -> why it may stay. Short on purpose: each entry says why the JSON keeps the name.
ALLOWED: tuple[tuple[str, str, str], ...] = (
    (
        r"^selection\.rule$",
        r".*",
        "the selection rule names the request's system and the cost formula's figures as the API returns them; "
        "the page and PDF show the rule in words",
    ),
    (
        r"^problems$",
        r"^[a-z0-9-]+$",
        "each problem starts with the candidate's system id so an API client can tell which system it is about; "
        "the page and PDF name the product instead",
    ),
)


def _catalog_ids() -> frozenset[str]:
    ids: set[str] = set()
    for name in ("gpus", "systems", "parts", "models"):
        ids.update(record["id"] for record in json.loads((CATALOG / f"{name}.json").read_text())["records"])
    return frozenset(ids)


IDS = _catalog_ids()
CATALOG_ID = re.compile(
    r"(?<![\w.-])(" + "|".join(re.escape(i) for i in sorted(IDS, key=len, reverse=True)) + r")(?![\w-])"
)


def _texts(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, str]]:
    """(dotted path without list indices, text) for every string a person reads in a stored plan."""
    if isinstance(node, dict):
        for key, value in node.items():
            key = str(key)
            if not path and key in SKIPPED_SECTIONS:
                continue
            if path and path[0] == "explain":
                if key in ("inputs", "formula"):
                    yield from _strings(value, ".".join((*path, key)))
                else:
                    yield from _texts(value, (*path, key))
            elif key in TEXT_KEYS or key.endswith("_reason") or (key == "option" and path[-1:] == ("verdict",)):
                yield from _strings(value, ".".join((*path, key)))
            else:
                yield from _texts(value, (*path, key))
    elif isinstance(node, list):
        for item in node:
            yield from _texts(item, path)


def _strings(node: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, str):
        yield path, node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value, path)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value, path)


def _summary_texts(plan: dict) -> Iterator[tuple[str, str]]:
    """The summary band as the page and the PDF show it (planner/outputs/summary.py)."""
    from planner.outputs.plan_view import PlanView

    band = PlanView(plan).summary_band
    if band.sentence:
        yield "summary.sentence", band.sentence
    for figure in band.figures:
        for text in (figure.label, figure.value, figure.unit, figure.range, figure.note):
            if text:
                yield "summary.figures", str(text)
    for risk in band.risks:
        yield "summary.risks", risk


def _findings(path: str, text: str) -> list[str]:
    found = [("catalog id", m) for m in CATALOG_ID.findall(text)]
    found += [("field path", m) for m in DOTTED.findall(text)]
    found += [("snake_case name", m) for m in SNAKE.findall(text) if m not in IDS]
    return [
        f"{kind} {name!r} in {path}: {text[:160]}"
        for kind, name in found
        if not any(re.match(p, path) and re.match(n, name) for p, n, _ in ALLOWED)
    ]


def _plan_names() -> list[str]:
    return sorted(p.stem for p in PLANS.glob("*.json"))


@pytest.mark.parametrize("name", _plan_names())
def test_plan_text_names_no_internal_identifier(name: str) -> None:
    plan = json.loads((PLANS / f"{name}.json").read_text())
    problems = [f for path, text in (*_texts(plan), *_summary_texts(plan)) for f in _findings(path, text)]
    assert not problems, f"{len(problems)} internal names a reader would see:\n" + "\n".join(problems[:30])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Neocloud contract hgx-h100-8gpu 3-year contract", []),  # not a catalog key: caught by the label test
        ("9 SU x 32 dgx-b200; 32 systems per leaf", ["catalog id 'dgx-b200'"]),
        ("chosen by training.checkpointing = auto", ["field path 'training.checkpointing'"]),
        ("at least 90% (goodput_target)", ["snake_case name 'goodput_target'"]),
        ("Lambda 1cc_h100_sxm5 1-year reserved", ["snake_case name '1cc_h100_sxm5'"]),
        ("AWS on-demand, p5.48xlarge; Azure spot, Standard_ND96isr_H100_v5; a3-highgpu-8g", []),
        ("e.g. the NVIDIA DGX H100 (dgx-h100-like words are not the id)", []),
        ("the cdu-in-row-1350 and qm9700", ["catalog id 'cdu-in-row-1350'", "catalog id 'qm9700'"]),
    ],
)
def test_the_walker_finds_what_it_should(text: str, expected: list[str]) -> None:
    """The detector itself, on texts worked out by hand (so the plan test cannot pass by matching nothing)."""
    found = [f.split(" in ")[0] for f in _findings("notes", text)]
    assert found == expected


def test_labels_name_products_not_price_list_ids() -> None:
    """The rent options of every golden plan read provider, term, hardware: no price-list id (which the catalog
    check cannot know) such as "hgx-h100-8gpu" or "gd-8xh100ib-i128", and a contract's term said once."""
    ids = {"hgx-h100-8gpu", "gd-8xh100ib-i128", "gpu-h100-sxm", "gpu-h200-sxm", "1cc_h100_sxm5", "gpu_8x_h100_sxm5"}
    for name in _plan_names():
        plan = json.loads((PLANS / f"{name}.json").read_text())
        comparison = (plan.get("costs") or {}).get("comparison") or {}
        for option in comparison.get("options", []):
            label = option["label"]
            assert not any(i in label for i in ids), (name, label)
            assert label.count("contract") <= 1, (name, label)


def test_no_sentence_repeats_a_figure_as_its_own_range() -> None:
    """A p90 that reads the same as the p50 ('done in 25.8 days (25.8 at p90)') tells the reader nothing: every
    golden plan's verdict and summary text says a p90 only when it reads differently."""
    repeated = re.compile(r"(\d[\d,]*\.\d) days \(\1 (at p90|with spot interruptions at their p90)\)")
    for name in _plan_names():
        plan = json.loads((PLANS / f"{name}.json").read_text())
        for path, text in (*_texts(plan), *_summary_texts(plan)):
            assert not repeated.search(text), (name, path, text[:160])
    assert repeated.search("done in 25.8 days (25.8 at p90)")  # the pattern itself, on the case it guards
    assert repeated.search("done in 25.8 days (25.8 with spot interruptions at their p90)")


@pytest.mark.parametrize(
    ("name", "buckets"),
    [
        # Llama 3 70B at TP8 PP4, dp 16: Megatron's bucket is max(40M, 1M x 16) = 40M parameters; the heavier end
        # stage holds 20 layers of 855.6M and the 1.05B embedding, over TP8: 2.27B -> ceil(56.7) = 57.
        ("train-70b-pinned-tp8-pp4", math.ceil((20 * 855_654_400 + 128_256 * 8192) / 8 / 40e6)),
        # The same model at TP8 PP16 CP4, dp 32: 5 layers and the embedding, over TP8: 666M / 40M -> 17.
        ("train-16k-gpus", math.ceil((5 * 855_654_400 + 128_256 * 8192) / 8 / 40e6)),
        # ZeRO-3 gathers and reduces a layer at a time: 80 layers on one stage.
        ("train-70b-dgx-h100", 80),
    ],
)
def test_the_step_time_says_how_many_buckets_the_reduction_runs_in(name: str, buckets: int) -> None:
    """The step time's explain names the data-parallel buckets its exposed reduction was costed in, so a reader
    can check the latency it pays (one ring start-up per bucket) against the layout."""
    plan = json.loads((PLANS / f"{name}.json").read_text())
    inputs = plan["explain"]["training.step_time_s"]["inputs"]
    assert inputs["data-parallel buckets (collectives a step)"] == buckets
