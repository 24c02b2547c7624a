"""The plan report PDF, rendered once per plan result and kept as a file.

Rendering takes seconds of CPU (WeasyPrint lays out every table and diagram), so it is not done inside a download
request when it can be helped: the worker renders the report right after a run succeeds (planner/tasks.py), and a
download serves that file. A download that finds no file (an older plan, a cache cleared) renders it once and keeps
it. The file name carries a digest of what the report is made from (the plan's stored result and the report's
version), so a re-run or a new report layout never serves a stale PDF.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from django.conf import settings

from .pdf import render_pdf

__all__ = ["REPORT_VERSION", "cached_report_path", "report_pdf"]

# Raise when the report's template or styles change, so every cached file is rendered again.
REPORT_VERSION = "2026-11-26.1"


def _folder() -> Path:
    folder = Path(settings.VAR_DIR) / "reports"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def _key(plan) -> str:
    stamp = f"{REPORT_VERSION}|{plan.pk}|{plan.updated_at.isoformat() if plan.updated_at else ''}"
    return hashlib.sha256(stamp.encode()).hexdigest()[:16]


def cached_report_path(plan) -> Path:
    """Where this plan result's report is (or will be) kept."""
    return _folder() / f"plan-{plan.pk}-{_key(plan)}.pdf"


def report_pdf(plan) -> bytes:
    """The report's bytes: the kept file, else rendered now and kept (older versions of the plan's file removed)."""
    path = cached_report_path(plan)
    if path.is_file():
        return path.read_bytes()
    from planner.presenters import report_context  # the presenters import the outputs package

    data = render_pdf("planner/report.html", report_context(plan))
    for old in path.parent.glob(f"plan-{plan.pk}-*.pdf"):
        old.unlink(missing_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=".render-", suffix=".pdf")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.replace(tmp, path)  # atomic: a concurrent download sees the old state or the whole new file
    return data
