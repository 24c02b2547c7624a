"""/healthz: the pure judgement of each check on a fixed clock, the cached integrity check, and the view's 503."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.utils import timezone

from planner.choices import RunStatus
from planner.health import IntegrityCache, Limits, Observations, judge, quick_check
from planner.models import HealthProbe, Plan, PlanRun, WorkerHeartbeat

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
LIMITS = Limits(queue_age_s=300, worker_seen_within_s=20, worker_progress_within_s=170)


def _healthy(**changes) -> Observations:
    base = {
        "now": NOW,
        "queue_depth": 0,
        "worker_name": "planner@host#ab12cd34",
        "worker_seen_at": NOW - timedelta(seconds=3),
        "worker_progress_at": NOW - timedelta(seconds=3),
    }
    return Observations(**{**base, **changes})


def test_all_good_is_ok_and_names_no_failure():
    report = judge(_healthy(), LIMITS)
    assert report["ok"] is True and report["failed"] == []
    assert report["checks"]["worker"]["last_progress_age_s"] == 3


def test_worker_heartbeat_older_than_the_window_fails_the_worker_check():
    assert judge(_healthy(worker_seen_at=NOW - timedelta(seconds=20)), LIMITS)["ok"]
    report = judge(_healthy(worker_seen_at=NOW - timedelta(seconds=21)), LIMITS)
    assert report["failed"] == ["worker"] and "21 s ago" in report["checks"]["worker"]["detail"]


def test_worker_alive_without_progress_fails_the_worker_check():
    report = judge(_healthy(worker_progress_at=NOW - timedelta(seconds=171)), LIMITS)
    assert report["failed"] == ["worker"] and "last progress 171 s ago" in report["checks"]["worker"]["detail"]
    assert judge(_healthy(worker_progress_at=None), LIMITS)["failed"] == ["worker"]


def test_no_worker_ever_fails_the_worker_check():
    report = judge(_healthy(worker_seen_at=None, worker_progress_at=None, worker_name=""), LIMITS)
    assert report["failed"] == ["worker"] and "no worker" in report["checks"]["worker"]["detail"]


def test_oldest_queued_run_over_the_limit_fails_the_queue_check():
    assert judge(_healthy(oldest_queued_at=NOW - timedelta(seconds=300)), LIMITS)["ok"]
    report = judge(_healthy(oldest_queued_at=NOW - timedelta(seconds=301)), LIMITS)
    assert report["failed"] == ["queue"] and report["checks"]["queue"]["oldest_queued_age_s"] == 301


def test_database_write_failure_or_integrity_problem_fails_the_database_check():
    report = judge(_healthy(database_error="OperationalError: database or disk is full"), LIMITS)
    assert report["failed"] == ["database"] and "disk is full" in report["checks"]["database"]["detail"]
    report = judge(_healthy(integrity="*** in database main *** Page 5: never used"), LIMITS)
    assert report["failed"] == ["database"] and "integrity check failed" in report["checks"]["database"]["detail"]
    assert judge(_healthy(integrity="not applicable"), LIMITS)["ok"]  # PostgreSQL


def test_broker_unreachable_fails_the_broker_check():
    report = judge(_healthy(broker_error="OperationalError: connection refused", queue_depth=None), LIMITS)
    assert report["failed"] == ["broker"] and report["checks"]["broker"]["queue_depth"] is None


def test_integrity_check_runs_at_most_once_per_interval():
    clock = {"now": 1000.0}
    calls = []
    cache = IntegrityCache(every_s=60, clock=lambda: clock["now"])

    def check() -> str:
        calls.append(clock["now"])
        return "ok"

    for now in (1000.0, 1030.0, 1059.9, 1060.0, 1100.0):
        clock["now"] = now
        assert cache.get(check) == "ok"
    assert calls == [1000.0, 1060.0]


@pytest.mark.skipif(
    connection.vendor != "sqlite", reason="PRAGMA quick_check is SQLite's (the scale-out pass runs PostgreSQL)"
)
@pytest.mark.django_db
def test_quick_check_on_the_real_database_is_ok():
    assert quick_check() == "ok"


@pytest.mark.django_db
def test_healthz_503_names_the_failed_checks_with_retry_after(client, user, settings):
    settings.PLANNER_HEALTH_RETRY_AFTER_S = 30
    now = timezone.now()
    WorkerHeartbeat.objects.create(hostname="w#1", seen_at=now, progress_at=now)
    plan = Plan.objects.create(owner=user, name="p", workload="training", request={})
    run = PlanRun.objects.create(plan=plan)
    PlanRun.objects.filter(pk=run.pk).update(
        queued_at=now - timedelta(seconds=settings.PLANNER_HEALTH_QUEUE_AGE_LIMIT_S + 5)
    )
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 503 and response["Retry-After"] == "30"
    assert body["failed"] == ["queue"] and body["checks"]["database"]["ok"]
    assert HealthProbe.objects.get(name="healthz").written_at >= now  # the write probe committed

    PlanRun.objects.filter(pk=run.pk).update(status=RunStatus.SUCCEEDED)
    response = client.get("/healthz")
    assert response.status_code == 200 and "Retry-After" not in response
