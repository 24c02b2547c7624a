"""Production settings: `check --deploy` is clean with the documented variables; missing ones fail fast."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

from tests.support import REPO

PRODUCTION_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "SECRET_KEY": "x" * 64 + "-not-a-real-secret-only-for-the-deploy-check",
    "ALLOWED_HOSTS": "planner.example.com",
    "DATABASE_URL": "postgres://planner:pw@db.invalid:5432/planner",
    "CELERY_BROKER_URL": "redis://redis.invalid:6379/0",
    "PATH": "/usr/bin:/bin",
}


def _manage(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean(tmp_path):
    result = _manage(
        "check", "--deploy", "--fail-level", "WARNING", env={**PRODUCTION_ENV, "PLANNER_VAR_DIR": str(tmp_path)}
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_missing_production_variable_fails_fast(tmp_path):
    env = {**PRODUCTION_ENV, "PLANNER_VAR_DIR": str(tmp_path)}
    del env["SECRET_KEY"]
    result = _manage("check", env=env)
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_json_log_lines():
    from config.logging import JsonFormatter

    record = logging.makeLogRecord(
        {"name": "planner", "levelname": "INFO", "msg": "run %s done", "args": (7,), "run_id": 7}
    )
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "run 7 done" and line["run_id"] == 7 and line["level"] == "INFO"
