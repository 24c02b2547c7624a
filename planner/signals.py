"""The worker side of liveness: its identity, the pool guard, the heartbeat and the progress watchdog.

- Identity: each worker process is named `<node name>#<boot id>` when it starts, so a restart under the same
  node name is a different worker, and the runs its predecessor claimed are recognisably orphaned.
- Pool guard: on SQLite the worker's pool must not fork (a child inheriting an open SQLite connection is a
  documented way to corrupt the database, https://www.sqlite.org/howtocorrupt.html section 2.6). A forking
  pool asked for on SQLite is replaced by `threads`, with a warning, so no command line can bring it back.
- Heartbeat and watchdog: a small thread records the heartbeat every PLANNER_WORKER_HEARTBEAT_S and asks the
  ProgressMonitor (planner.worker_monitor) whether the worker makes progress; when it does not, the worker
  exits at once (its supervisor restarts it, the sweep re-queues its runs). While it does, the thread touches
  PLANNER_WORKER_ALIVE_FILE so the supervisor can kill a process too frozen to exit by itself.

Sweeping lost runs is not done here: Celery beat queues `planner.sweep_runs` (planner.recovery).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from datetime import datetime, timedelta

from celery.signals import celeryd_after_setup, worker_init, worker_ready, worker_shutdown
from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone

from .worker_monitor import MonitorLimits, ProgressMonitor, TaskSample, Verdict

logger = logging.getLogger(__name__)
_stop = threading.Event()
_identity = {"name": ""}
FORKING_POOLS = {"prefork", "processes"}
WATCHDOG_EXIT_CODE = 70


def worker_identity() -> str:
    """This worker process's name in WorkerHeartbeat and PlanRun.worker ('' outside a worker)."""
    return _identity["name"]


@celeryd_after_setup.connect
def name_worker(sender=None, **_kwargs) -> None:
    """Named before the pool starts, so prefork children (PostgreSQL) inherit the parent's name."""
    _identity["name"] = f"{sender or 'worker'}#{uuid.uuid4().hex[:8]}"


@worker_init.connect
def refuse_forking_pool_on_sqlite(sender=None, **_kwargs) -> None:
    if sender is None or connection.vendor != "sqlite":
        return
    pool = sender.pool_cls
    name = pool if isinstance(pool, str) else getattr(pool, "__module__", "")
    if name in FORKING_POOLS or name.endswith(".prefork"):
        logger.warning(
            "pool %r forks, and a forked SQLite connection can corrupt the database; using the threads pool",
            name,
        )
        sender.pool_cls = "threads"


@worker_ready.connect
def start_heartbeat(sender=None, **_kwargs) -> None:
    limits = MonitorLimits(
        start_within_s=settings.PLANNER_WORKER_START_WITHIN_S,
        idle_backlog_limit_s=settings.PLANNER_WORKER_IDLE_BACKLOG_LIMIT_S,
        # Celery kills a prefork child at the hard limit; the watchdog is the limit for pools that cannot.
        task_time_limit_s=settings.PLANNER_TASK_TIME_LIMIT_S + 2 * settings.PLANNER_WORKER_HEARTBEAT_S,
        concurrency=int(getattr(sender, "concurrency", 1) or 1),
    )
    name = worker_identity() or f"{getattr(sender, 'hostname', 'worker')}#{uuid.uuid4().hex[:8]}"
    _identity["name"] = name
    _stop.clear()
    thread = threading.Thread(target=_beat, args=(name, ProgressMonitor(limits)), name="planner-heartbeat")
    thread.daemon = True
    thread.start()


@worker_shutdown.connect
def stop_heartbeat(**_kwargs) -> None:
    _stop.set()


def _beat(name: str, monitor: ProgressMonitor) -> None:
    from .health import broker_queue_depth
    from .recovery import plan_runs_recover_from_predecessors, worker_heartbeat_record

    wall_at_start, clock_at_start = timezone.now(), time.monotonic()
    first = True
    while not _stop.is_set():
        now = time.monotonic()
        try:
            reserved, active = _sample_requests(now)
            verdict = monitor.observe(now, reserved, active, broker_queue_depth())
        except Exception:  # a sampling bug must not silence the heartbeat (the supervisor would kill us)
            logger.exception("worker watchdog could not sample; judged healthy this time")
            verdict = Verdict(True)
        progress_at = wall_at_start + timedelta(seconds=(monitor.last_progress_at or now) - clock_at_start)
        try:
            close_old_connections()
            worker_heartbeat_record(hostname=name, progress_at=progress_at, busy=monitor.busy)
            if first:
                counts = plan_runs_recover_from_predecessors(identity=name)
                if any(counts.values()):
                    logger.warning("runs of this worker's dead predecessors: %s", counts)
                first = False
        except Exception:  # the heartbeat must outlive a database blip
            logger.exception("worker heartbeat failed")
        if not verdict.healthy:
            _exit_for_restart(verdict.reason, verdict.overdue_run_id)
        _touch_alive_file()
        _stop.wait(settings.PLANNER_WORKER_HEARTBEAT_S)


def _sample_requests(now: float) -> tuple[list[TaskSample], list[TaskSample]]:
    """The worker's reserved and active requests, read from Celery's worker state (main process)."""
    from celery.worker import state

    for _attempt in range(3):
        try:
            return [_task_sample(r, now) for r in list(state.reserved_requests)], [
                _task_sample(r, now) for r in list(state.active_requests)
            ]
        except RuntimeError:  # a set changed while being copied: sample again
            continue
    return [], []


def _task_sample(request, now: float) -> TaskSample:
    from .dispatch import RUN_PLAN_TASK

    run_id = None
    if request.name == RUN_PLAN_TASK and request.args:
        run_id = int(request.args[0])
    eta_at = None
    if request.eta:
        eta = request.eta if isinstance(request.eta, datetime) else datetime.fromisoformat(str(request.eta))
        eta_at = now + (eta - timezone.now()).total_seconds() if eta.tzinfo else None
    return TaskSample(task_id=request.id, run_id=run_id, eta_at=eta_at)


def _exit_for_restart(reason: str, overdue_run_id: int | None) -> None:
    """End the worker now (no graceful shutdown: it would wait for the stuck task) for its supervisor."""
    logger.critical("worker makes no progress, exiting for a restart: %s", reason)
    if overdue_run_id is not None:
        from .services import plan_run_fail

        try:
            plan_run_fail(
                run_id=overdue_run_id,
                message=f"The plan took longer than the {settings.PLANNER_TASK_TIME_LIMIT_S} s limit; "
                "its worker was restarted.",
            )
        except Exception:
            logger.exception("could not fail overdue run %s", overdue_run_id)
    logging.shutdown()
    os._exit(WATCHDOG_EXIT_CODE)


def _touch_alive_file() -> None:
    path = settings.PLANNER_WORKER_ALIVE_FILE
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.touch()
        os.utime(path)
    except OSError:
        logger.exception("could not touch %s", path)
