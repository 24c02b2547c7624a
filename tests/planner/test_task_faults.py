"""Task-level faults: the database blinking under a worker, two deliveries of one run."""

from __future__ import annotations

import threading

import pytest
from django.db import OperationalError

from planner import tasks
from planner.choices import RunStatus
from planner.models import Plan, PlanRun

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def eager_retries_run_inline():
    """In eager mode a Retry re-applies the task in place; it must not propagate as an error."""
    conf = tasks.run_plan_task.app.conf
    saved = conf.task_eager_propagates
    conf.task_eager_propagates = False
    yield
    conf.task_eager_propagates = saved


def _queued(user, request_data) -> PlanRun:
    plan = Plan.objects.create(owner=user, name="p", workload="training", request=request_data)
    return PlanRun.objects.create(plan=plan)


def test_database_blip_is_retried_and_the_run_completes(user, training_request, monkeypatch, settings):
    run = _queued(user, training_request)
    real = tasks.plan_run_execute
    calls = {"n": 0}

    def flaky(**kwargs):
        calls["n"] += 1
        if calls["n"] <= 2:
            raise OperationalError("server closed the connection unexpectedly")
        return real(**kwargs)

    monkeypatch.setattr(tasks, "plan_run_execute", flaky)
    monkeypatch.setattr(tasks.run_plan_task, "retry_backoff", False)
    result = tasks.run_plan_task.apply(args=[run.pk], throw=False)
    run.refresh_from_db()
    assert calls["n"] == 3 and result.get() == RunStatus.SUCCEEDED
    assert run.status == RunStatus.SUCCEEDED


def test_database_gone_for_good_fails_the_run_clearly(user, training_request, monkeypatch):
    run = _queued(user, training_request)

    def down(**_kwargs):
        raise OperationalError("could not connect to server")

    monkeypatch.setattr(tasks, "plan_run_execute", down)
    monkeypatch.setattr(tasks.run_plan_task, "retry_backoff", False)
    monkeypatch.setattr(tasks.run_plan_task, "max_retries", 2)
    outcome = tasks.run_plan_task.apply(args=[run.pk], throw=False)
    assert outcome.failed()
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "database was unavailable" in run.error and "gave up after 2 retries" in run.error


def test_retry_of_the_same_delivery_takes_its_run_back(user, training_request):
    """The database failed after the claim: the retry (same task id) may resume; others may not."""
    from planner.services import plan_run_execute

    run = _queued(user, training_request)
    PlanRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, claimed_by="task-1", attempts=1)
    assert plan_run_execute(run_id=run.pk, claim_token="task-2") == "skipped:running"
    assert plan_run_execute(run_id=run.pk, claim_token="task-1") == RunStatus.SUCCEEDED


@pytest.mark.django_db(transaction=True)
def test_two_deliveries_at_once_give_one_result(user, training_request):
    """Two workers handed the same run at the same moment: exactly one does the work."""
    from planner.services import plan_run_execute

    run = _queued(user, training_request)
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def deliver(token: str) -> None:
        barrier.wait()
        try:
            outcomes.append(plan_run_execute(run_id=run.pk, claim_token=token))
        finally:
            from django.db import connection

            connection.close()

    threads = [threading.Thread(target=deliver, args=(f"task-{i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == sorted([RunStatus.SUCCEEDED, "skipped:running"]) or sorted(outcomes) == sorted(
        [RunStatus.SUCCEEDED, "skipped:succeeded"]
    )
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.attempts == 1
