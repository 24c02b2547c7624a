"""The plan report PDF, rendered once per plan result and kept as a file.

Rendering takes seconds of CPU (WeasyPrint lays out every table and diagram), so it is not done inside a download
request when it can be helped: the worker renders the report right after a run succeeds (planner/tasks.py; on
`make run` a worker of its own, so plans never wait behind a render), and a download serves that file. A download
that finds no file (an older plan, a cache cleared, a download that beat the worker) renders it once and keeps it.
The file name carries a digest of everything the report is made from: the plan's result exactly as stored
(cache_files.stored_result, so a new result from any writer is a new name), its name, and the code, template and
style sheet that draw it, so neither a re-run nor a deploy that changes the report ever serves a stale PDF.
"""

from __future__ import annotations

import copy
import hashlib
import logging
from functools import cache
from pathlib import Path

from django.conf import settings

from .cache_files import StoredResult, cache_folder, stored_result, write_replacing
from .pdf import PDF_CSS, render_pdf

__all__ = ["REPORT_VERSION", "cached_report_path", "report_pdf"]

logger = logging.getLogger(__name__)

# Raise to render every kept report again (changes to the code, template and style sheet are followed already).
REPORT_VERSION = "2026-11-26.2"


@cache
def _code_digest() -> str:
    """The drawing code (page_cache.code_digest), every planner template and the report's style sheet."""
    from .page_cache import code_digest

    digest = hashlib.sha256(f"{REPORT_VERSION}|{code_digest()}".encode())
    for source in [*sorted((Path(settings.BASE_DIR) / "templates" / "planner").rglob("*.html")), Path(PDF_CSS)]:
        digest.update(source.name.encode())
        digest.update(source.read_bytes() if source.is_file() else b"")
    return digest.hexdigest()[:16]


def _key(plan, stored: StoredResult | None) -> str:
    stamp = f"{_code_digest()}|{plan.pk}|{stored.digest if stored else 'no-result'}|{plan.name}"
    return hashlib.sha256(stamp.encode()).hexdigest()[:24]


def cached_report_path(plan, stored: StoredResult | None = None) -> Path:
    """Where this plan result's report is (or will be) kept."""
    stored = stored if stored is not None else stored_result(plan)
    return cache_folder("reports") / f"plan-{plan.pk}-{_key(plan, stored)}.pdf"


def report_pdf(plan) -> bytes:
    """The report's bytes: the kept file, else rendered now and kept (the plan's earlier files removed)."""
    from planner.presenters import report_context  # the presenters import the outputs package

    stored = stored_result(plan)
    path = cached_report_path(plan, stored)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    fresh = copy.copy(plan)  # rendered from the same stored text the name was made from, not an older copy
    fresh.result = stored.decoded() if stored is not None else plan.result
    data = render_pdf("planner/report.html", report_context(fresh))
    try:
        write_replacing(path, data, stale_glob=f"plan-{plan.pk}-*.pdf")
    except OSError:  # a full disk costs the next download a render, never this one
        logger.exception("could not keep the report of plan %s", plan.pk)
    return data
