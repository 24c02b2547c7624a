"""`make run`'s supervisor: its back-off and staleness rules, and, live, that a dying program is restarted while
the others keep running, that a program whose liveness file goes stale is killed and restarted, and that
SIGTERM stops them all."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO, wait_for

_spec = importlib.util.spec_from_file_location("supervise", REPO / "scripts" / "supervise.py")
supervise = importlib.util.module_from_spec(_spec)
sys.modules["supervise"] = supervise  # dataclasses look their module up by name
_spec.loader.exec_module(supervise)


@pytest.mark.parametrize(
    ("previous_s", "ran_s", "expected_s"),
    [(0, 5, 1), (1, 5, 2), (2, 5, 4), (16, 5, 30), (30, 5, 30), (8, 60, 1)],
    ids=["first", "doubles", "doubles-again", "capped", "stays-capped", "reset-after-a-healthy-minute"],
)
def test_backoff_doubles_while_dying_young_and_resets_after_a_healthy_run(previous_s, ran_s, expected_s):
    assert supervise.next_backoff_s(previous_s, ran_s) == expected_s


def test_staleness_counts_from_the_last_touch_or_from_start_with_a_boot_grace():
    # Touched since this start: stale once the file is older than stale_s.
    assert not supervise.is_stale(now=120, started_at=100, touched_at=101, stale_s=20, boot_grace_s=60)
    assert supervise.is_stale(now=122, started_at=100, touched_at=101, stale_s=20, boot_grace_s=60)
    # Never touched since this start (a file left by the previous process does not count): boot grace.
    assert not supervise.is_stale(now=160, started_at=100, touched_at=90, stale_s=20, boot_grace_s=60)
    assert supervise.is_stale(now=161, started_at=100, touched_at=None, stale_s=20, boot_grace_s=60)


def _pid(pid_dir: Path, name: str) -> int | None:
    try:
        return int((pid_dir / f"{name}.pid").read_text())
    except (FileNotFoundError, ValueError):
        return None


def test_a_dying_program_is_restarted_and_the_others_keep_running(tmp_path):
    pid_dir = tmp_path / "run"
    alive = tmp_path / "never-touched.alive"
    sleeper = f"{sys.executable} -c 'import time; time.sleep(120)'"
    cmd = [
        sys.executable,
        str(REPO / "scripts" / "supervise.py"),
        "--pid-dir",
        str(pid_dir),
        "--max-backoff-s",
        "1",
        "--boot-grace-s",
        "1",
        "--program",
        f"steady={sleeper}",
        "--program",
        f"dying={sys.executable} -c 'pass'",
        "--program",
        f"frozen={sleeper}",
        "--alive",
        f"frozen={alive}",
    ]
    log = tmp_path / "supervise.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        steady = wait_for(lambda: _pid(pid_dir, "steady"), 30, "the steady program to start", log)
        frozen = wait_for(lambda: _pid(pid_dir, "frozen"), 30, "the frozen program to start", log)
        wait_for(lambda: log.read_text().count("started dying") >= 3, 30, "the dying program's restarts", log)
        wait_for(lambda: _pid(pid_dir, "frozen") not in (None, frozen), 30, "the stale program's restart", log)
        assert "frozen made no progress (liveness file stale); killing it" in log.read_text()
        assert _pid(pid_dir, "steady") == steady
        os.kill(steady, 0)  # still the same, still running
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    with pytest.raises(ProcessLookupError):
        os.kill(steady, 0)
    assert "stopping steady, dying, frozen" in log.read_text()
