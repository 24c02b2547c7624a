"""Helpers for tests that start real processes (workers, the `plan` command)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from django.db import connection

REPO = Path(__file__).resolve().parent.parent


def test_database_url() -> str:
    """A DATABASE_URL for the database this test session is using (SQLite file or PostgreSQL)."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    credentials = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{credentials}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def subprocess_env(**extra: str) -> dict[str, str]:
    """Environment for a child process that shares this test's database (a file, see settings)."""
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.test",
        DATABASE_URL=test_database_url(),
        PLANNER_TASKS_EAGER="0",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


@contextlib.contextmanager
def celery_worker(env: dict[str, str], log_path: Path, name: str = "test") -> Iterator[subprocess.Popen]:
    """A real prefork Celery worker in its own process group; killed (whole group) on exit."""
    cmd = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "--pool=prefork",
        "--concurrency=1",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        "-n",
        f"{name}@%h",
        "--loglevel=INFO",
    ]
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc
    finally:
        kill_group(proc, signal.SIGKILL)


@contextlib.contextmanager
def celery_beat(env: dict[str, str], log_path: Path) -> Iterator[subprocess.Popen]:
    """A real Celery beat (it queues the run sweep), schedule file beside the log; killed on exit."""
    cmd = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "beat",
        "--loglevel=INFO",
        "--schedule",
        str(log_path.with_name(f"beat-schedule-{os.getpid()}")),
    ]
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc
    finally:
        kill_group(proc, signal.SIGKILL)


def kill_group(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def wait_for(predicate: Callable[[], object], timeout_s: float, what: str, log_path: Path | None = None) -> object:
    """Poll until predicate() is truthy; fail with the worker log when it never is."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    log = log_path.read_text()[-4000:] if log_path and log_path.exists() else ""
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}\n--- worker log ---\n{log}")
