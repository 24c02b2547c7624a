"""The watchdog in a real worker: a task stuck past its time limit (which the threads pool does not enforce)
fails its run with the limit's message and the worker exits for its supervisor to restart."""

from __future__ import annotations

import pytest

from planner import services
from planner.choices import RunStatus
from planner.models import PlanRun, WorkerHeartbeat
from planner.signals import WATCHDOG_EXIT_CODE
from tests.support import celery_worker, subprocess_env, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_a_task_stuck_past_its_time_limit_fails_its_run_and_exits_the_worker(
    settings, user, training_request, tmp_path
):
    if not settings.CELERY_BROKER_URL.startswith("filesystem://"):
        pytest.skip("the embedded (threads pool) case; prefork children are killed by Celery itself")
    from config.celery import app

    saved = (app.conf.broker_url, app.conf.task_always_eager)
    app.conf.broker_url, app.conf.task_always_eager = settings.CELERY_BROKER_URL, False
    app._pool = None  # publish on a fresh connection to the embedded broker
    app.amqp._producer_pool = None
    log = tmp_path / "worker.log"
    env = subprocess_env(
        PLANNER_WORKER_HEARTBEAT_S="0.5",
        PLANNER_TASK_TIME_LIMIT_S="2",
        PLANNER_TASK_SOFT_TIME_LIMIT_S="1",
        PLANNER_RUN_STAGE_DELAY_S="30",  # the first stage alone sleeps far past the limit
    )
    try:
        with celery_worker(env, log, name="stuck") as worker:
            wait_for(WorkerHeartbeat.objects.exists, 60, "the worker's first heartbeat", log)
            run_id = services.plan_create(owner=user, request_data=training_request).runs.get().pk
            wait_for(lambda: worker.poll() is not None, 60, "the watchdog to end the worker", log)
    finally:
        app.conf.broker_url, app.conf.task_always_eager = saved
        app._pool = None
        app.amqp._producer_pool = None
    run = PlanRun.objects.get(pk=run_id)
    assert worker.returncode == WATCHDOG_EXIT_CODE
    assert run.status == RunStatus.FAILED and "longer than the 2 s limit" in run.error
    assert "worker makes no progress, exiting for a restart" in log.read_text()
