"""The `plan` command and a Celery worker start without importing what they never use.

Both used to load every URL module through Django's system checks (pages, PDF, charts, API docs):
about 1.5 s of a 3 s CLI call. These run in fresh processes, since the test process has it all loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.samples import TRAINING_REQUEST
from tests.support import REPO, subprocess_env

UNUSED = ("weasyprint", "plotly", "boto3", "botocore", "drf_spectacular.views", "planner.views", "planner.outputs")


def _imported(importtime_stderr: str) -> set[str]:
    lines = importtime_stderr.splitlines()
    return {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}


def _unused_in(modules: set[str]) -> list[str]:
    return sorted(name for name in modules if any(name == u or name.startswith(f"{u}.") for u in UNUSED))


@pytest.mark.django_db  # the command reads the test database (the current price snapshot)
def test_plan_command_imports_only_what_it_uses(tmp_path):
    path = tmp_path / "request.json"
    path.write_text(json.dumps(TRAINING_REQUEST))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "manage.py", "plan", "--input", str(path)],
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["cluster"]["gpus"] > 0
    assert _unused_in(_imported(done.stderr)) == []


def test_worker_start_imports_only_what_it_uses():
    """What a worker does before `ready`: Django set-up, the Celery Django fix-up, task discovery."""
    script = (
        "import django, sys; django.setup()\n"
        "from config.celery import app\n"
        "from celery.fixups.django import DjangoWorkerFixup\n"
        "DjangoWorkerFixup(app).validate_models()\n"
        "app.loader.import_default_modules()\n"
        "assert 'planner.run_plan' in app.tasks and 'planner.sweep_runs' in app.tasks\n"
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", script],
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert _unused_in(_imported(done.stderr)) == []
