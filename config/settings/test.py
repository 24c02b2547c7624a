"""Test settings: the embedded stack, fast password hashing, tasks eager unless a test says otherwise."""

import os
from pathlib import Path

# Each test session gets its own database file, broker folder and secret under var/test/, so two
# sessions (a developer's and CI's, or parallel runs) never share a SQLite file. Worker processes
# started by the tests inherit the variable and so join the same session's folder.
_session_dir = Path(__file__).resolve().parents[2] / "var" / "test" / f"run-{os.getpid()}"
os.environ.setdefault("PLANNER_VAR_DIR", str(_session_dir))

from .base import *  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = env.bool("PLANNER_TASKS_EAGER", default=True)
LOGGING["root"]["level"] = "WARNING"
PLANNER_PRERENDER_REPORTS = env.bool("PLANNER_PRERENDER_REPORTS", default=False)
PLANNER_PRERENDER_PAGES = env.bool("PLANNER_PRERENDER_PAGES", default=False)
