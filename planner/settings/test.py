"""Test settings: the embedded stack, fast password hashing, tasks eager unless a test says otherwise."""

import os
from pathlib import Path

# Tests keep their database, broker folder and secret apart from the ones `make run` uses.
os.environ.setdefault("PLANNER_VAR_DIR", str(Path(__file__).resolve().parents[2] / "var" / "test"))

from .base import *

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = env.bool("PLANNER_TASKS_EAGER", default=True)
LOGGING["root"]["level"] = "WARNING"
