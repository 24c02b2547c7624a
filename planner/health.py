"""The /healthz checks: can the stack make progress right now?

Four checks, each `{"ok", "detail", ...figures}`; any bad one makes /healthz answer 503 with Retry-After:

- database: a write that commits (HealthProbe row) and, on SQLite, `PRAGMA quick_check(1)` (stops at the first
  problem), run at most every PLANNER_HEALTH_INTEGRITY_EVERY_S and cached between, so health stays cheap;
- broker: a real connection, and the depth of the task queue;
- queue: the age of the oldest queued run (bad over PLANNER_HEALTH_QUEUE_AGE_LIMIT_S);
- worker: a worker process seen within PLANNER_WORKER_SEEN_WITHIN_S whose last progress is recent (a task
  started or finished, or idle with nothing queued, within the task time limit plus that window).

Gathering (I/O) and judging (`judge`, pure, the clock passed in) are separate so the rules are tested alone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from .choices import RunStatus
from .dispatch import REPORT_WORKER_PREFIX
from .models import HealthProbe, PlanRun, WorkerHeartbeat


@dataclass(frozen=True)
class Observations:
    """What the probes saw, at `now`. An `*_error` text means that probe itself failed."""

    now: datetime
    database_error: str = ""
    integrity: str = "ok"  # 'ok', 'not applicable', or SQLite's first complaint
    broker_error: str = ""
    queue_depth: int | None = None
    oldest_queued_at: datetime | None = None
    worker_name: str = ""
    worker_seen_at: datetime | None = None
    worker_progress_at: datetime | None = None


@dataclass(frozen=True)
class Limits:
    queue_age_s: float
    worker_seen_within_s: float
    worker_progress_within_s: float

    @classmethod
    def from_settings(cls) -> Limits:
        return cls(
            queue_age_s=settings.PLANNER_HEALTH_QUEUE_AGE_LIMIT_S,
            worker_seen_within_s=settings.PLANNER_WORKER_SEEN_WITHIN_S,
            worker_progress_within_s=settings.PLANNER_TASK_TIME_LIMIT_S + settings.PLANNER_WORKER_SEEN_WITHIN_S,
        )


def judge(obs: Observations, limits: Limits) -> dict:
    """The /healthz body from the observations: every check, `ok` overall and the names of the failed ones."""
    checks = {
        "database": _judge_database(obs),
        "broker": _judge_broker(obs),
        "queue": _judge_queue(obs, limits),
        "worker": _judge_worker(obs, limits),
    }
    failed = [name for name, check in checks.items() if not check["ok"]]
    return {"ok": not failed, "failed": failed, "checks": checks, "time": obs.now.isoformat()}


def _judge_database(obs: Observations) -> dict:
    if obs.database_error:
        return {"ok": False, "detail": f"write probe failed: {obs.database_error}", "integrity": obs.integrity}
    if obs.integrity not in ("ok", "not applicable"):
        return {"ok": False, "detail": f"integrity check failed: {obs.integrity}", "integrity": obs.integrity}
    return {"ok": True, "detail": f"write committed; integrity {obs.integrity}", "integrity": obs.integrity}


def _judge_broker(obs: Observations) -> dict:
    if obs.broker_error:
        return {"ok": False, "detail": obs.broker_error, "queue_depth": None}
    return {"ok": True, "detail": f"{obs.queue_depth} message(s) queued", "queue_depth": obs.queue_depth}


def _judge_queue(obs: Observations, limits: Limits) -> dict:
    if obs.oldest_queued_at is None:
        return {"ok": True, "detail": "no queued run", "oldest_queued_age_s": 0}
    age_s = max(0.0, (obs.now - obs.oldest_queued_at).total_seconds())
    ok = age_s <= limits.queue_age_s
    detail = f"oldest queued run waiting {age_s:.0f} s (limit {limits.queue_age_s:.0f} s)"
    return {"ok": ok, "detail": detail, "oldest_queued_age_s": round(age_s, 1)}


def _judge_worker(obs: Observations, limits: Limits) -> dict:
    if obs.worker_seen_at is None:
        return {"ok": False, "detail": "no worker has ever reported", "last_progress_age_s": None}
    seen_s = (obs.now - obs.worker_seen_at).total_seconds()
    progress_s = (obs.now - obs.worker_progress_at).total_seconds() if obs.worker_progress_at else None
    figures = {"worker": obs.worker_name, "last_seen_age_s": round(seen_s, 1), "last_progress_age_s": progress_s}
    if seen_s > limits.worker_seen_within_s:
        detail = f"last worker heartbeat {seen_s:.0f} s ago; limit {limits.worker_seen_within_s:.0f} s"
        return {"ok": False, "detail": detail, **figures}
    if progress_s is None or progress_s > limits.worker_progress_within_s:
        shown = "never" if progress_s is None else f"{progress_s:.0f} s ago"
        detail = f"worker alive but last progress {shown}; limit {limits.worker_progress_within_s:.0f} s"
        return {"ok": False, "detail": detail, **figures}
    return {"ok": True, "detail": f"seen {seen_s:.0f} s ago, progress {progress_s:.0f} s ago", **figures}


# --- Gathering -------------------------------------------------------------------------------


def observe(now: datetime | None = None) -> Observations:
    now = now or timezone.now()
    database_error = _write_probe(now)
    depth, broker_error = broker_queue_depth_or_error()
    oldest = worker = None
    try:
        oldest = (
            PlanRun.objects.filter(status=RunStatus.QUEUED).order_by("queued_at").values_list("queued_at", flat=True)
        ).first()
        worker = WorkerHeartbeat.objects.exclude(hostname__startswith=REPORT_WORKER_PREFIX).order_by("-seen_at").first()
    except Exception as exc:
        database_error = database_error or f"{type(exc).__name__}: {exc}"
    return Observations(
        now=now,
        database_error=database_error,
        integrity=integrity_cached(),
        broker_error=broker_error,
        queue_depth=depth,
        oldest_queued_at=oldest,
        worker_name=worker.hostname if worker else "",
        worker_seen_at=worker.seen_at if worker else None,
        worker_progress_at=worker.progress_at if worker else None,
    )


def health_report() -> dict:
    return judge(observe(), Limits.from_settings())


def _write_probe(now: datetime) -> str:
    try:
        with transaction.atomic():
            HealthProbe.objects.update_or_create(name="healthz", defaults={"written_at": now})
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return ""


class IntegrityCache:
    """SQLite's quick_check, run at most once per `every_s` (per web process); other databases: not applicable."""

    def __init__(self, every_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.every_s = every_s
        self.clock = clock
        self._checked_at: float | None = None
        self._answer = "not checked"
        self._lock = threading.Lock()

    def get(self, check: Callable[[], str]) -> str:
        with self._lock:
            now = self.clock()
            if self._checked_at is None or now - self._checked_at >= self.every_s:
                self._answer = check()
                self._checked_at = now
            return self._answer


def quick_check() -> str:
    if connection.vendor != "sqlite":
        return "not applicable"
    try:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA quick_check(1)")
            return str(cursor.fetchone()[0])
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


_integrity = IntegrityCache(every_s=0)


def integrity_cached() -> str:
    _integrity.every_s = settings.PLANNER_HEALTH_INTEGRITY_EVERY_S
    return _integrity.get(quick_check)


def broker_queue_depth_or_error() -> tuple[int | None, str]:
    """Messages waiting in the default task queue, read over a real broker connection."""
    from config.celery import app

    try:
        with app.connection_for_read() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
            declared = conn.default_channel.queue_declare(queue=app.conf.task_default_queue, passive=False)
            return int(declared.message_count), ""
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"


def broker_queue_depth() -> int | None:
    return broker_queue_depth_or_error()[0]
