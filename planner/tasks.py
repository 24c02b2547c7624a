"""Celery tasks. Thin: each one hands its id to a service."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from .services import plan_run_execute


@shared_task(
    name="planner.run_plan",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.PLANNER_TASK_SOFT_TIME_LIMIT_S,
    time_limit=settings.PLANNER_TASK_TIME_LIMIT_S,
)
def run_plan_task(run_id: int) -> str:
    """Run one PlanRun. Idempotent: a second delivery of the same id does nothing."""
    return plan_run_execute(run_id=run_id)
