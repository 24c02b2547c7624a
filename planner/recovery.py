"""Recovering runs lost with their worker or their message, and recording worker liveness.

A run is lost in three ways, each found by `plan_runs_recover_stale` (the `planner.sweep_runs` task that Celery
beat queues every PLANNER_RUN_SWEEP_EVERY_S):

- its worker died while running it: the run names the worker process that claimed it, and that process's
  heartbeat stopped (PLANNER_WORKER_SEEN_WITHIN_S). A restarted worker is a new process with a new name, so its
  first heartbeat does not revive its predecessor's runs. Re-queued within about SEEN_WITHIN + one sweep, or
  as soon as the restarted worker is up when it finds its predecessor's pid gone
  (`plan_runs_recover_from_predecessors`).
- its worker is alive but the run stopped reporting progress for PLANNER_RUN_STALE_AFTER_S (older rows with
  no worker name, or a task the worker's watchdog has not yet stopped);
- its message was lost before any worker claimed it: on the filesystem broker a worker killed between taking
  the message file and claiming the run; on Redis a restart without persistence. Re-published when every live
  worker is idle (PLANNER_RUN_IDLE_RESEND_AFTER_S) or, failing that, after PLANNER_RUN_QUEUED_RESEND_AFTER_S.

Every transition is a conditional UPDATE, so two sweeps at once never double-queue a run, and a re-published
run is harmless: only the first delivery claims it.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from .choices import RunStatus
from .models import PlanRun, WorkerHeartbeat
from .services import _enqueue_on_commit, _publish_on_commit


def plan_runs_recover_stale(*, now: datetime | None = None) -> dict[str, int]:
    """Re-queue (up to PLANNER_RUN_MAX_ATTEMPTS starts) or fail lost running runs; re-publish lost messages."""
    now = now or timezone.now()
    counts = _requeue_or_fail(_lost_running_runs(now), now)
    counts["resent_idle"] = _resend_while_workers_idle(now)
    counts.update(_recover_lost_messages(now))
    return counts


def plan_runs_recover_from_predecessors(*, identity: str, now: datetime | None = None) -> dict[str, int]:
    """Called once by a worker that has just started: re-queue the runs of its dead predecessors at once.

    A predecessor is a worker process with the same node name (so, by Celery's `%h`, on this host) whose
    recorded pid no longer exists here. Without this, its runs wait for its heartbeat to age past
    PLANNER_WORKER_SEEN_WITHIN_S; a pid reused by another process just leaves them to that slower rule.
    """
    now = now or timezone.now()
    node = identity.split("#", 1)[0]
    dead = [
        beat.hostname
        for beat in WorkerHeartbeat.objects.filter(hostname__startswith=f"{node}#").exclude(hostname=identity)
        if beat.pid and not _pid_alive(beat.pid)
    ]
    runs = PlanRun.objects.filter(status=RunStatus.RUNNING, worker__in=dead)
    return _requeue_or_fail(runs, now)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _requeue_or_fail(runs, now: datetime) -> dict[str, int]:
    counts = {"requeued": 0, "failed": 0}
    for run in runs.only("pk", "attempts", "heartbeat_at"):
        if run.attempts < settings.PLANNER_RUN_MAX_ATTEMPTS:
            moved = PlanRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING, heartbeat_at=run.heartbeat_at).update(
                status=RunStatus.QUEUED, stage="re-queued after its worker stopped", progress_percent=0
            )
            if moved:
                counts["requeued"] += 1
                _enqueue_on_commit(run.pk)
        else:
            moved = PlanRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(
                status=RunStatus.FAILED,
                finished_at=now,
                error=(
                    f"The worker running this plan stopped responding {run.attempts} times before finishing it; the "
                    "run was abandoned. Re-run the plan; if it fails again, check the worker logs."
                ),
            )
            counts["failed"] += moved
    return counts


def live_workers(now: datetime) -> list[WorkerHeartbeat]:
    """Worker processes whose heartbeat is recent enough to count them alive."""
    cutoff = now - timedelta(seconds=settings.PLANNER_WORKER_SEEN_WITHIN_S)
    return list(WorkerHeartbeat.objects.filter(seen_at__gte=cutoff))


def _lost_running_runs(now: datetime):
    worker_cutoff = now - timedelta(seconds=settings.PLANNER_WORKER_SEEN_WITHIN_S)
    progress_cutoff = now - timedelta(seconds=settings.PLANNER_RUN_STALE_AFTER_S)
    alive = [w.hostname for w in live_workers(now)]
    # The run's own heartbeat must also be older than the worker window: a run claimed a moment ago by a worker
    # whose first heartbeat has not landed yet is not lost.
    worker_dead = Q(heartbeat_at__lt=worker_cutoff) & ~Q(worker="") & ~Q(worker__in=alive)
    silent = Q(heartbeat_at__lt=progress_cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=progress_cutoff)
    return PlanRun.objects.filter(status=RunStatus.RUNNING).filter(worker_dead | silent)


def _resend_while_workers_idle(now: datetime) -> int:
    """Re-publish queued runs sent a while ago when every live worker idles and the broker queue is empty.

    A queued run then means its message is gone (a busy worker or a non-empty queue means it may still be on
    its way, so nothing is resent). With no live worker nothing is resent: the message still waits.
    """
    workers = live_workers(now)
    if not workers or any(w.busy for w in workers):
        return 0
    from .health import broker_queue_depth

    if broker_queue_depth() != 0:  # messages still waiting (or the broker unreadable): not lost
        return 0
    cutoff = now - timedelta(seconds=settings.PLANNER_RUN_IDLE_RESEND_AFTER_S)
    resent = 0
    for run in PlanRun.objects.filter(status=RunStatus.QUEUED, sent_at__lt=cutoff).only("pk", "sent_at"):
        with transaction.atomic():
            won = PlanRun.objects.filter(pk=run.pk, status=RunStatus.QUEUED, sent_at=run.sent_at).update(
                sends=F("sends") + 1, sent_at=now
            )
            if won:
                _publish_on_commit(run.pk)
                resent += 1
    return resent


def _recover_lost_messages(now: datetime) -> dict[str, int]:
    """Re-publish queued runs whose message seems lost; fail them after a few tries.

    A queued run that no worker has claimed long after its message was sent lost that message
    (a broker restarted without persistence, a purge) or has no worker at all. Publishing again
    is safe because only the first delivery claims the run; after PLANNER_RUN_MAX_SENDS the run is
    failed with a message pointing at the workers, so nothing waits forever.
    """
    cutoff = now - timedelta(seconds=settings.PLANNER_RUN_QUEUED_RESEND_AFTER_S)
    counts = {"resent": 0, "failed_unclaimed": 0}
    waiting = PlanRun.objects.filter(status=RunStatus.QUEUED, sent_at__lt=cutoff).only("pk", "sends", "sent_at")
    for run in waiting:
        if run.sends < settings.PLANNER_RUN_MAX_SENDS:
            with transaction.atomic():
                # Conditional on the send we saw: of two sweeps at once only one wins this update.
                won = PlanRun.objects.filter(pk=run.pk, status=RunStatus.QUEUED, sent_at=run.sent_at).update(
                    sends=F("sends") + 1, sent_at=now
                )
                if won:
                    _publish_on_commit(run.pk)
                    counts["resent"] += 1
        else:
            minutes = settings.PLANNER_RUN_QUEUED_RESEND_AFTER_S * run.sends / 60
            counts["failed_unclaimed"] += PlanRun.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(
                status=RunStatus.FAILED,
                finished_at=now,
                error=(
                    f"No worker took this run in about {minutes:.0f} minutes ({run.sends} messages sent). "
                    "Check that Celery workers are running (GET /healthz), then run the plan again."
                ),
            )
    return counts


def worker_heartbeat_record(
    *, hostname: str, progress_at: datetime | None = None, busy: bool = False, now: datetime | None = None
) -> None:
    """Record that this worker process is alive (and, when given, when it last made progress)."""
    now = now or timezone.now()
    defaults = {"seen_at": now, "pid": os.getpid(), "busy": busy}
    if progress_at is not None:
        defaults["progress_at"] = progress_at
    WorkerHeartbeat.objects.update_or_create(hostname=hostname, defaults=defaults)


def worker_heartbeats_prune(*, now: datetime | None = None, keep_days: int = 1) -> int:
    """Delete heartbeat rows of worker processes gone for more than a day (each restart adds one)."""
    now = now or timezone.now()
    deleted, _ = WorkerHeartbeat.objects.filter(seen_at__lt=now - timedelta(days=keep_days)).delete()
    return deleted
