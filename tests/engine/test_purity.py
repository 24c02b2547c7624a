"""The engine must stay importable and runnable without Django, Celery, boto3 or HTTP clients."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ["django", "celery", "kombu", "rest_framework", "boto3", "botocore", "requests", "urllib3", "http.client"]

SCRIPT = """
import json, sys
from engine import load_catalog, run_plan, validate_request
cat = load_catalog()
for body in (
    {"workload": "training", "model": {"preset": "llama-3-70b"}, "training": {"tokens": 15e12, "deadline_days": 90}},
    {"workload": "inference", "model": {"preset": "llama-3-8b"},
     "inference": {"requests_per_s": 5, "prompt_tokens": 1000, "output_tokens": 200}},
):
    run_plan(validate_request(body, cat), cat)
print(json.dumps(sorted(sys.modules)))
"""


def test_engine_loads_no_forbidden_modules():
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    bad = sorted(m for m in loaded for f in FORBIDDEN if m == f or m.startswith(f + "."))
    assert bad == []


def test_planner_package_init_is_empty():
    # Importing engine runs planner/__init__.py first; it must not pull in the Celery app.
    assert (ROOT / "planner" / "__init__.py").read_text().strip() == ""
