"""A short `make faults`: three kill -9 trials on the real embedded stack, then the integrity check and every
run finished. The full run (100 trials, measured recovery) is `make faults`, outside the suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support import REPO

pytestmark = pytest.mark.integration


def test_three_kill_trials_leave_an_intact_database_and_every_run_finished(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    # Faster sweeps than the defaults, so the drain after the kills fits the test's budget.
    env.update(
        PLANNER_WORKER_HEARTBEAT_S="1",
        PLANNER_RUN_SWEEP_EVERY_S="1",
        PLANNER_WORKER_SEEN_WITHIN_S="5",
        PLANNER_RUN_IDLE_RESEND_AFTER_S="3",
    )
    results = tmp_path / "results.json"
    cmd = [
        sys.executable,
        "scripts/faults.py",
        "--trials",
        "3",
        "--deaths",
        "0",
        "--wedges",
        "0",
        "--max-seconds",
        "50",
        "--seed",
        "3",
        "--var-dir",
        str(tmp_path / "var"),
        "--results",
        str(results),
    ]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert results.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(results.read_text())
    assert report["trials"] == 3 and report["integrity_check"] == ["ok"] and report["corruptions"] == 0
    assert set(report["runs"]) <= {"succeeded"} and report["drained"], report
    assert proc.returncode == 0, proc.stdout[-3000:]
