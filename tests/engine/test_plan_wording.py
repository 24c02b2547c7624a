"""Plan sentences read as a person writes them: no ids with underscores, no six-decimal percentages, failure
intervals in the unit a reader thinks in, provider names keeping their case inside a sentence."""

from __future__ import annotations

import json
from pathlib import Path

from engine.search.training_recovery import _interval, _mode_words

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "plans"


def test_failure_interval_in_a_readers_unit():
    # 30 minutes, then hours below two days, then days: 0.5 h, 24.7 h, 100 h = 4.17 days.
    assert _interval(0.5) == "30.0 minutes"
    assert _interval(24.7) == "24.7 hours"
    assert _interval(100.0) == "4.2 days"


def test_recovery_modes_in_words():
    assert _mode_words("in_memory") == "in-memory"
    assert _mode_words("asynchronous") == "asynchronous"


def test_golden_plans_carry_no_machine_wording():
    for path in sorted(GOLDEN.glob("*.json")):
        text = json.dumps(json.loads(path.read_text()))
        assert "000000 %" not in text, path.name  # the spares pool as "3 %", not "3.000000 %"
        assert "google Cloud" not in text, path.name
        assert "Build: Build" not in text, path.name
        assert "Failures cost 0%" not in text, path.name
        assert "in_memory 7" not in text and "in_memory 8" not in text, path.name
