"""Celery tasks. Thin: each one hands its work to a service.

This module imports the services; the services never import it (they publish through
planner.dispatch), so there is no import cycle.
"""

from __future__ import annotations

import logging

from celery import Task, shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections

from .choices import RunStatus
from .dispatch import RENDER_REPORT_TASK, RUN_PLAN_TASK, SWEEP_RUNS_TASK
from .models import Plan
from .recovery import plan_runs_recover_stale, worker_heartbeats_prune
from .services import plan_report_prerender, plan_run_execute, plan_run_fail
from .signals import worker_identity

logger = logging.getLogger(__name__)


class PlanTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        """Retries are spent (the database stayed away): record that on the run if we can.

        If the database is still unreachable this fails too, and the stale-run sweep fails
        the run later with its own message; either way the run does not stay `running`.
        """
        run_id = args[0] if args else kwargs.get("run_id")
        try:
            if not self.request.is_eager:
                close_old_connections()
            plan_run_fail(
                run_id=run_id,
                message=f"The database was unavailable to the worker ({type(exc).__name__}: {exc}); "
                f"gave up after {self.max_retries} retries. Run the plan again once the database is back.",
            )
        except Exception:
            logger.exception("could not record the failure of run %s", run_id)


@shared_task(
    bind=True,
    base=PlanTask,
    name=RUN_PLAN_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.PLANNER_TASK_SOFT_TIME_LIMIT_S,
    time_limit=settings.PLANNER_TASK_TIME_LIMIT_S,
    # A database that blinks (failover, restart, too many connections) is retried with backoff;
    # engine errors are not retried: the service records them on the run.
    autoretry_for=(OperationalError, InterfaceError),
    max_retries=settings.PLANNER_TASK_DB_RETRIES,
    retry_backoff=settings.PLANNER_TASK_DB_RETRY_BACKOFF_S,
    retry_backoff_max=30,
    retry_jitter=False,
)
def run_plan_task(self, run_id: int) -> str:
    """Run one PlanRun. Idempotent: a second delivery of the same id does nothing."""
    if not self.request.is_eager:
        close_old_connections()  # a connection broken by an outage must not poison the retry
    status = plan_run_execute(run_id=run_id, claim_token=self.request.id or "", worker=worker_identity())
    if settings.PLANNER_PRERENDER_PAGES and status != RunStatus.FAILED and not status.startswith("skipped"):
        _prerender_page(run_id)
    return status


def _prerender_page(run_id: int) -> None:
    """Build the finished plan's charts and diagrams for its page (planner/outputs/page_cache.py), so the view
    its author is about to open reads them from a file. Here rather than on the report queue, where it would wait
    behind PDF renders; it takes tens of milliseconds. Best effort: the page builds them itself on a miss."""
    try:
        from .outputs.page_cache import page_parts_prerender  # plotly: imported by the first run, not at start-up

        plan = Plan.objects.filter(runs__pk=run_id).first()
        if plan is not None:
            page_parts_prerender(plan)
    except Exception:
        logger.exception("could not pre-render the page parts of run %s; the page builds them", run_id)


@shared_task(bind=True, name=SWEEP_RUNS_TASK, acks_late=False, soft_time_limit=60, time_limit=90)
def sweep_runs_task(self) -> dict[str, int]:
    """Re-queue or fail runs lost with their worker, re-publish runs whose message was lost.

    Queued by Celery beat every PLANNER_RUN_SWEEP_EVERY_S (one beat per deployment; `make run`
    starts one). Not acked late: a sweep lost with its worker is simply replaced by the next tick.
    """
    if not self.request.is_eager:
        close_old_connections()  # a connection broken since the last tick must not fail this one
    counts = plan_runs_recover_stale()
    worker_heartbeats_prune()  # each worker restart adds a row; rows of processes gone a day go
    if any(counts.values()):
        logger.warning("stale plan runs: %s", counts)
    return counts


@shared_task(bind=True, name=RENDER_REPORT_TASK, acks_late=False, soft_time_limit=120, time_limit=180)
def render_report_task(self, plan_id: int) -> bool:
    """Render a finished plan's report PDF once (services.plan_report_prerender). Best effort: a failure is
    logged and the download renders on demand instead."""
    if not self.request.is_eager:
        close_old_connections()
    try:
        return plan_report_prerender(plan_id=plan_id)
    except Exception:
        logger.exception("could not pre-render the report of plan %s; it renders on download", plan_id)
        return False
