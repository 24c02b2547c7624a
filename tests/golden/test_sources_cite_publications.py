"""Every source a user reads names a publication, never one of the project's own notes.

The explain entries of every golden plan and the catalog records' `source` fields are shown on the plan page, in
the PDF and through the API; a developer's file name there ("facility.md section 3") tells a buyer nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine import load_catalog

PLANS = Path(__file__).parent / "plans"
# A file of ours: a Markdown note, a path into the reference notes, or a repository path.
OWN_FILE = re.compile(
    r"\b[\w-]+\.md\b|reference/|engine/|calibration/|planner/|fixtures/|\b[\w/]+\.py\b|make accuracy|accuracy report"
)


def _sources(plan: dict) -> list[tuple[str, str]]:
    """Every source a reader of the plan sees: the explain entries' and the assumptions' (shown with each value)."""
    sections = (plan.get("explain") or {}, plan.get("assumptions") or {})
    return [(key, str(entry.get("source", ""))) for section in sections for key, entry in section.items()]


@pytest.mark.parametrize("path", sorted(PLANS.glob("*.json")), ids=lambda p: p.stem)
def test_explain_sources_name_publications(path: Path) -> None:
    plan = json.loads(path.read_text())
    bad = [(key, source) for key, source in _sources(plan) if OWN_FILE.search(source)]
    assert not bad, bad


def test_parts_and_presets_cite_publications() -> None:
    catalog = load_catalog()
    records = [*catalog.models.values()]
    bad = [(r.id, r.source) for r in records if OWN_FILE.search(r.source)]
    parts = json.loads((Path(load_catalog.__code__.co_filename).parent.parent / "data/catalog/parts.json").read_text())
    bad += [(r["id"], r["source"]) for r in parts["records"] if OWN_FILE.search(r.get("source", ""))]
    assert not bad, bad
