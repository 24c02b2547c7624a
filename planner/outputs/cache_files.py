"""What the output caches share: the digest of a plan's stored result, and owner-only files written whole.

The report PDF (report_cache.py) and the page's charts and diagrams (page_cache.py) are each kept as one file per
plan, named after what they were made from. The result part of that name is a digest of the result as the database
stores it: any change to the result, by any writer (a re-run, an admin edit, a migration, a test's `update()`),
gives a new name, so nothing stale is ever served and no writer has to remember to invalidate. Reading the stored
text and hashing it costs about 3 ms for a 16,384-GPU plan (440 kB), against 17 ms to serialise the decoded dict
again.

Callers pass plans they have already fetched through an owner-filtered selector; these helpers never decide who
may see what.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db.models import TextField
from django.db.models.functions import Cast

__all__ = ["StoredResult", "cache_folder", "stored_result", "write_replacing"]


def cache_folder(name: str) -> Path:
    """var/<name>/, owner-only (0700) like the rest of var/: plans are their owner's business."""
    folder = Path(settings.VAR_DIR) / name
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


@dataclass(frozen=True)
class StoredResult:
    """A plan's result as the database holds it now: its digest, and the text itself (decoded only on a miss)."""

    digest: str
    text: str

    def decoded(self) -> dict:
        return json.loads(self.text)


def stored_result(plan) -> StoredResult | None:
    """The plan's result exactly as stored, with its SHA-256 (hex, 32 characters); None when it has none.

    What a cache builds on a miss must come from this same text, not from a `plan.result` loaded earlier: a run
    finishing in between would otherwise file the old result's drawing under the new result's name.
    """
    from planner.models import Plan  # outputs are imported by the models' app; keep this import lazy

    text = Plan.objects.filter(pk=plan.pk).values_list(Cast("result", TextField()), flat=True).first()
    if not text or text in ("null", "{}"):
        return None
    return StoredResult(digest=hashlib.sha256(text.encode()).hexdigest()[:32], text=text)


def write_replacing(path: Path, data: bytes, stale_glob: str) -> None:
    """Write `path` atomically (a reader sees no file or the whole file), then remove the files matching
    `stale_glob` beside it other than `path` (the same plan's earlier results)."""
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=".write-", suffix=path.suffix)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    for old in path.parent.glob(stale_glob):
        if old.name != path.name:
            old.unlink(missing_ok=True)
