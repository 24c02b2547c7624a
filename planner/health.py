"""Liveness checks for /healthz: database, broker, worker. Each returns (ok, detail)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from .models import WorkerHeartbeat


def check_database() -> tuple[bool, str]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return False, f"{type(exc).__name__}: {exc}"
    return True, connection.vendor


def check_broker() -> tuple[bool, str]:
    """Open (and close) a real connection to the configured broker."""
    from config.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
            transport = conn.transport_cls
    except Exception as exc:
        return False, f"{type(exc).__name__}: {exc}"
    return True, str(transport)


def check_worker() -> tuple[bool, str]:
    """A worker counts as alive when it recorded a heartbeat within the allowed window."""
    window_s = settings.PLANNER_WORKER_SEEN_WITHIN_S
    try:
        latest = WorkerHeartbeat.objects.order_by("-seen_at").first()
    except Exception as exc:
        return False, f"{type(exc).__name__}: {exc}"
    if latest is None:
        return False, "no worker has ever reported"
    age_s = (timezone.now() - latest.seen_at).total_seconds()
    if latest.seen_at < timezone.now() - timedelta(seconds=window_s):
        return False, f"last worker heartbeat {age_s:.0f} s ago ({latest.hostname}); limit {window_s} s"
    return True, f"{latest.hostname} seen {age_s:.0f} s ago"


def health_report() -> dict:
    checks = {"database": check_database(), "broker": check_broker(), "worker": check_worker()}
    return {
        "ok": all(ok for ok, _ in checks.values()),
        "checks": {name: {"ok": ok, "detail": detail} for name, (ok, detail) in checks.items()},
        "time": timezone.now().isoformat(),
    }
