"""The plan page's charts (plotly JSON), diagrams (SVG), plan JSON and owner-independent sections (HTML), built once
per plan result and kept as a file.

For a 16,384-GPU plan the charts and diagrams were about half of the page's server time (90 + 40 ms of 250 ms,
measured by benchmarks/test_page_speed.py), spent again on every view of a result that never changes. The worker
builds them right after a run succeeds (planner/tasks.py); a view that finds no file (an older plan, a view that
beat the worker, a cleared var/) builds them itself and keeps them. The sections (page_html.py) took the page from
302 to about 35 ms: Django's templates had laid out the same 1.2 MB of tables on every view.

A file's name carries what its content was made from: the plan, the digest of its stored result
(cache_files.stored_result: any new result is a new name) and the digest of the code that draws them (this
package's modules, the presenters, the template filters and every planner template; `digest_sources`), so a
deploy that changes a chart or a template never serves the old drawing and nobody has to remember to bump a
version. Access control stays with the callers: they
pass a plan fetched through an owner-filtered selector.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

from django.conf import settings

from .cache_files import StoredResult, cache_folder, stored_result, write_replacing
from .charts import PageChart, plan_charts
from .plan_view import PlanView, plan_view

__all__ = ["PageParts", "cached_parts_path", "code_digest", "digest_sources", "page_parts", "page_parts_prerender"]

logger = logging.getLogger(__name__)

# Raise to drop every kept file at once (the code digest already follows changes to the drawing code).
PAGE_PARTS_VERSION = "2026-11-26.2"
_OUTPUTS = Path(__file__).resolve().parent
_FILTERS = "templatetags/planner_format.py"  # pretty_json and every filter the kept HTML went through
_TEMPLATES = ("templates", "planner")  # under BASE_DIR: the page's sections are kept as rendered HTML
# A view that misses while the worker is building waits up to this long for the worker's file (then builds).
BUILD_WAIT_S = 2.0
BUILD_POLL_S = 0.02
# The "Plan JSON" block shows the plan inline up to this size; a larger plan (a 1M-GPU plan's JSON is about 8 MB,
# which made its page 20 MB) links the download instead (views.plan_result_json).
INLINE_JSON_MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class PageParts:
    """What the page shows beside the figures: chart id -> plotly JSON, diagram kind -> SVG text, the plan's
    JSON pretty-printed (the "Plan JSON" block: json.dumps with an indent runs in pure Python, 30 ms here; "" above
    INLINE_JSON_MAX_BYTES), and
    every section of the page that is the same whoever views it, as HTML (a page view then decodes nothing)."""

    charts: dict[str, PageChart] = field(default_factory=dict)
    diagrams: dict[str, str] = field(default_factory=dict)
    plan_json: str = ""
    html: dict[str, str] = field(default_factory=dict)  # the page's owner-independent sections (page_html.py)
    has_bom: bool = False  # the BOM downloads apply


def digest_sources() -> list[Path]:
    """Every file whose text shapes the kept parts: this package, the presenters, the what-if fields, the template
    filters and every planner template (the page's sections are kept as rendered HTML)."""
    base = Path(settings.BASE_DIR)
    return [
        *sorted(_OUTPUTS.rglob("*.py")),
        *(_OUTPUTS.parent / name for name in ("presenters.py", "whatif.py", _FILTERS)),
        *sorted(base.joinpath(*_TEMPLATES).rglob("*.html")),
    ]


@cache
def code_digest() -> str:
    """Digest of the source that draws the charts, diagrams and sections (read once per process: a deploy
    restarts it)."""
    digest = hashlib.sha256(PAGE_PARTS_VERSION.encode())
    base = Path(settings.BASE_DIR)
    for source in digest_sources():
        digest.update(source.relative_to(base).as_posix().encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def cached_parts_path(plan, stored: StoredResult | None = None) -> Path | None:
    """Where this plan result's parts are (or will be) kept; None for a plan with no result."""
    stored = stored if stored is not None else stored_result(plan)
    if stored is None:
        return None
    return cache_folder("pages") / f"plan-{plan.pk}-{stored.digest}-{code_digest()}.json"


def _build(view: PlanView, plan_pk: int) -> PageParts:
    from planner.presenters import plan_diagrams  # the presenters import this package
    from planner.templatetags.planner_format import pretty_json

    from .page_html import page_html

    charts, diagrams = plan_charts(view), plan_diagrams(view)
    plan_json = pretty_json(view.raw) if len(json.dumps(view.raw)) <= INLINE_JSON_MAX_BYTES else ""
    html = page_html(plan_pk, view, charts, diagrams, plan_json)
    has_bom = bool(view.bom_lines)
    return PageParts(charts=charts, diagrams=diagrams, plan_json=plan_json, html=html, has_bom=has_bom)


def _read(path: Path) -> PageParts | None:
    try:
        data = json.loads(path.read_bytes())
        charts = {key: PageChart(**chart) for key, chart in data["charts"].items()}
        return PageParts(
            charts=charts,
            diagrams=dict(data["diagrams"]),
            plan_json=str(data["plan_json"]),
            html=dict(data["html"]),
            has_bom=bool(data["has_bom"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):  # a damaged file is built again, never served
        logger.warning("page cache file %s unreadable; building the page parts again", path)
        return None


def _building_marker(plan) -> Path:
    return cache_folder("pages") / f"plan-{plan.pk}.building"


def _wait_for_worker(plan, path: Path) -> PageParts | None:
    """The worker's parts, if it is building them right now and they arrive within BUILD_WAIT_S.

    The run is marked finished before the worker builds, so the author's page often asks while the build is under
    way: waiting for it costs less than building the same parts twice on the same CPUs."""
    try:
        started_at = _building_marker(plan).stat().st_mtime
    except FileNotFoundError:
        return None
    deadline = min(time.time() + BUILD_WAIT_S, started_at + BUILD_WAIT_S)
    while time.time() < deadline:
        time.sleep(BUILD_POLL_S)
        if (kept := _read(path)) is not None:
            return kept
    return None


def page_parts(plan, view: PlanView | None = None) -> PageParts:
    """The plan's charts and diagrams: from its kept file, else built now from the stored result and kept.

    `view` is the caller's view of `plan.result`: on a miss it is reused (the page decodes the plan once) when it
    shows the result as stored now, and passed over when a run has replaced that result since the plan was read.
    """
    stored = stored_result(plan)
    if stored is None:
        return PageParts()
    path = cached_parts_path(plan, stored)
    if (kept := _read(path)) is not None or (kept := _wait_for_worker(plan, path)) is not None:
        return kept
    current = stored.decoded()  # the same text the name was made from
    parts = _build(view if view is not None and view.raw == current else plan_view(current), plan.pk)
    _keep(plan, path, parts)
    return parts


def _keep(plan, path: Path, parts: PageParts) -> None:
    try:
        write_replacing(path, json.dumps(asdict(parts)).encode(), stale_glob=f"plan-{plan.pk}-*.json")
    except OSError:  # a full disk costs the next view a rebuild, never this page
        logger.exception("could not keep the page parts of plan %s", plan.pk)


def page_parts_prerender(plan) -> bool:
    """Build and keep a finished plan's parts ahead of its first view; False when there is nothing to build."""
    if not plan.result:
        return False
    marker = _building_marker(plan)
    marker.touch()
    try:
        stored = stored_result(plan)
        if stored is not None and _read(path := cached_parts_path(plan, stored)) is None:
            _keep(plan, path, _build(plan_view(stored.decoded()), plan.pk))
    finally:
        marker.unlink(missing_ok=True)
    return True
