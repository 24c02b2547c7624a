"""The embedded stack's safety settings as they reach SQLite and Celery, the pool guard, and owner-only files."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from types import SimpleNamespace

import pytest
from django.db import connection

from config.celery import app
from config.permissions import loose_paths, tighten
from planner.signals import refuse_forking_pool_on_sqlite
from tests.support import REPO

# The embedded default's own guarantees: on PostgreSQL (`make test-scaleout`) the pool may fork and there is no
# PRAGMA, so these tests apply to SQLite only.
SQLITE_ONLY = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="checks the embedded SQLite stack (the scale-out pass runs PostgreSQL)"
)


@SQLITE_ONLY
@pytest.mark.django_db
def test_sqlite_connection_runs_in_wal_with_full_sync_and_a_busy_timeout():
    """Values as SQLite reports them (https://www.sqlite.org/pragma.html): synchronous FULL is 2, the busy
    timeout is in milliseconds."""
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
        cursor.execute("PRAGMA synchronous")
        assert cursor.fetchone()[0] == 2
        cursor.execute("PRAGMA busy_timeout")
        assert cursor.fetchone()[0] == 20_000


@SQLITE_ONLY
def test_worker_pool_never_forks_on_sqlite_and_results_are_not_stored(settings):
    assert settings.CELERY_WORKER_POOL == "threads"
    assert app.conf.worker_pool == "threads"
    assert app.conf.task_ignore_result is True  # run state lives in PlanRun, nothing reads Celery results
    assert not app.conf.result_backend


@SQLITE_ONLY
@pytest.mark.parametrize("asked", ["prefork", "processes", "celery.concurrency.prefork:TaskPool"])
def test_a_forking_pool_asked_for_on_sqlite_is_replaced_by_threads(asked):
    from celery.concurrency import get_implementation

    worker = SimpleNamespace(pool_cls=asked if ":" not in asked else get_implementation("prefork"))
    refuse_forking_pool_on_sqlite(sender=worker)
    assert worker.pool_cls == "threads"


@pytest.mark.parametrize("asked", ["threads", "solo"])
def test_non_forking_pools_are_kept(asked):
    worker = SimpleNamespace(pool_cls=asked)
    refuse_forking_pool_on_sqlite(sender=worker)
    assert worker.pool_cls == asked


def test_tighten_makes_var_owner_only_and_the_check_sees_loose_files(tmp_path):
    var = tmp_path / "var"
    var.mkdir()
    var.chmod(0o755)
    db = var / "db.sqlite3"
    db.write_bytes(b"")
    db.chmod(0o644)
    assert len(loose_paths([var, db])) == 2
    tighten(var, [db, var / "db.sqlite3-wal"])  # a missing -wal file is skipped
    assert stat.S_IMODE(var.stat().st_mode) == 0o700 and stat.S_IMODE(db.stat().st_mode) == 0o600
    assert loose_paths([var, db]) == []


def test_entry_point_creates_the_database_and_var_owner_only(tmp_path):
    """`manage.py migrate` under a permissive shell umask (022) still makes var/ 0700 and the database 0600."""
    var = tmp_path / "fresh-var"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(PLANNER_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="config.settings.base")
    result = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: os.umask(0o022),
    )
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(var.stat().st_mode) == 0o700
    assert stat.S_IMODE((var / "db.sqlite3").stat().st_mode) == 0o600
    assert stat.S_IMODE((var / "secret_key").stat().st_mode) == 0o600
    assert stat.S_IMODE((var / "broker" / "queue").stat().st_mode) == 0o700
