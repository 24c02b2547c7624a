"""The sweep by hand: runs whose worker process stopped its heartbeat are re-queued (and then finish), runs of
live workers are left alone, a restarted worker does not revive its predecessor's runs, and queued runs whose
message was lost are re-published while every worker idles."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from planner import recovery, services
from planner.choices import RunStatus
from planner.models import Plan, PlanRun, WorkerHeartbeat

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _timings(settings):
    settings.PLANNER_WORKER_SEEN_WITHIN_S = 20
    settings.PLANNER_RUN_STALE_AFTER_S = 180
    settings.PLANNER_RUN_MAX_ATTEMPTS = 2
    settings.PLANNER_RUN_IDLE_RESEND_AFTER_S = 20
    settings.PLANNER_RUN_QUEUED_RESEND_AFTER_S = 300


def _plan(user, request_data) -> Plan:
    return Plan.objects.create(owner=user, name="p", workload="training", request=request_data)


def _running(user, request_data, *, worker: str, claimed_s_ago: float) -> PlanRun:
    then = timezone.now() - timedelta(seconds=claimed_s_ago)
    return PlanRun.objects.create(
        plan=_plan(user, request_data),
        status=RunStatus.RUNNING,
        worker=worker,
        attempts=1,
        started_at=then,
        heartbeat_at=then,
        claimed_by="task-1",
    )


def _heartbeat(name: str, s_ago: float, busy: bool = False) -> None:
    seen = timezone.now() - timedelta(seconds=s_ago)
    WorkerHeartbeat.objects.create(hostname=name, seen_at=seen, progress_at=seen, busy=busy)


def test_run_of_a_worker_silent_past_the_window_is_requeued_and_finishes(
    user, training_request, django_capture_on_commit_callbacks
):
    _heartbeat("planner@h#dead", s_ago=21)
    run = _running(user, training_request, worker="planner@h#dead", claimed_s_ago=25)
    with django_capture_on_commit_callbacks(execute=True):  # eager tasks: the re-sent message runs here
        counts = recovery.plan_runs_recover_stale()
    assert counts["requeued"] == 1
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.attempts == 2 and run.sends == 1


def test_run_of_a_live_worker_is_left_alone(user, training_request):
    _heartbeat("planner@h#live", s_ago=3)
    run = _running(user, training_request, worker="planner@h#live", claimed_s_ago=60)
    assert recovery.plan_runs_recover_stale()["requeued"] == 0
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING


def test_worker_restarted_under_the_same_node_name_does_not_revive_old_runs(user, training_request):
    _heartbeat("planner@h#old", s_ago=30)
    _heartbeat("planner@h#new", s_ago=1)  # the supervisor's restart: same node name, new boot id
    run = _running(user, training_request, worker="planner@h#old", claimed_s_ago=30)
    assert recovery.plan_runs_recover_stale()["requeued"] == 1
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and run.stage == "re-queued after its worker stopped"


def test_just_claimed_run_of_a_worker_not_yet_seen_is_left_alone(user, training_request):
    """The claim may land before the worker's first heartbeat: the run's own heartbeat must be old too."""
    fresh = _running(user, training_request, worker="planner@h#booting", claimed_s_ago=5)
    lost = _running(user, training_request, worker="planner@h#never-seen", claimed_s_ago=21)
    assert recovery.plan_runs_recover_stale()["requeued"] == 1
    fresh.refresh_from_db()
    lost.refresh_from_db()
    assert (fresh.status, lost.status) == (RunStatus.RUNNING, RunStatus.QUEUED)


def test_run_whose_worker_died_after_its_last_start_is_failed(user, training_request):
    _heartbeat("planner@h#dead", s_ago=60)
    run = _running(user, training_request, worker="planner@h#dead", claimed_s_ago=60)
    PlanRun.objects.filter(pk=run.pk).update(attempts=2)
    assert recovery.plan_runs_recover_stale()["failed"] == 1
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "stopped responding 2 times" in run.error


def _queued(user, request_data, sent_s_ago: float) -> PlanRun:
    sent = timezone.now() - timedelta(seconds=sent_s_ago)
    return PlanRun.objects.create(plan=_plan(user, request_data), sends=1, sent_at=sent)


@pytest.fixture
def queue_depth(monkeypatch):
    depth = {"now": 0}
    monkeypatch.setattr("planner.health.broker_queue_depth", lambda: depth["now"])
    return depth


def test_queued_run_is_resent_when_every_live_worker_idles(user, training_request, queue_depth):
    _heartbeat("planner@h#1", s_ago=2, busy=False)
    lost = _queued(user, training_request, sent_s_ago=21)
    recent = _queued(user, training_request, sent_s_ago=10)
    assert recovery.plan_runs_recover_stale()["resent_idle"] == 1
    lost.refresh_from_db()
    recent.refresh_from_db()
    assert (lost.sends, recent.sends) == (2, 1)


def test_queued_run_is_not_resent_while_messages_wait_in_the_broker(user, training_request, queue_depth):
    _heartbeat("planner@h#1", s_ago=2, busy=False)  # e.g. a worker just restarted, not yet consuming
    queue_depth["now"] = 4
    run = _queued(user, training_request, sent_s_ago=60)
    assert recovery.plan_runs_recover_stale()["resent_idle"] == 0
    run.refresh_from_db()
    assert run.sends == 1


@pytest.mark.parametrize(
    "workers",
    [[("planner@h#1", 2, True)], [("planner@h#1", 2, False), ("planner@h#2", 2, True)], [("planner@h#1", 60, False)]],
    ids=["busy", "one-of-two-busy", "no-live-worker"],
)
def test_queued_run_is_not_resent_while_a_worker_is_busy_or_none_is_alive(user, training_request, workers, queue_depth):
    for name, s_ago, busy in workers:
        _heartbeat(name, s_ago=s_ago, busy=busy)
    run = _queued(user, training_request, sent_s_ago=60)
    assert recovery.plan_runs_recover_stale()["resent_idle"] == 0
    run.refresh_from_db()
    assert run.sends == 1


def test_claim_records_the_worker_process(user, training_request):
    run = PlanRun.objects.create(plan=_plan(user, training_request))
    assert services.plan_run_execute(run_id=run.pk, claim_token="t", worker="planner@h#abc") == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert run.worker == "planner@h#abc"


def test_heartbeats_of_processes_gone_a_day_are_pruned():
    _heartbeat("planner@h#gone", s_ago=86_401)
    _heartbeat("planner@h#here", s_ago=5)
    assert recovery.worker_heartbeats_prune() == 1
    assert list(WorkerHeartbeat.objects.values_list("hostname", flat=True)) == ["planner@h#here"]


def test_restarted_worker_requeues_its_dead_predecessors_runs_at_once(user, training_request):
    """Same node name, the predecessor's pid gone: re-queued without waiting for its heartbeat to age.
    A live process of the same node (this test's own pid) and another node's run are left alone."""
    import os
    import subprocess
    import sys

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    now = timezone.now()
    WorkerHeartbeat.objects.create(hostname="planner@h#old", seen_at=now, pid=gone.pid)
    WorkerHeartbeat.objects.create(hostname="planner@h#sibling", seen_at=now, pid=os.getpid())
    WorkerHeartbeat.objects.create(hostname="other@h2#x", seen_at=now, pid=gone.pid)
    orphan = _running(user, training_request, worker="planner@h#old", claimed_s_ago=2)
    sibling = _running(user, training_request, worker="planner@h#sibling", claimed_s_ago=2)
    elsewhere = _running(user, training_request, worker="other@h2#x", claimed_s_ago=2)
    counts = recovery.plan_runs_recover_from_predecessors(identity="planner@h#new")
    assert counts == {"requeued": 1, "failed": 0}
    statuses = {r.pk: r.status for r in PlanRun.objects.filter(pk__in=[orphan.pk, sibling.pk, elsewhere.pk])}
    assert statuses == {orphan.pk: RunStatus.QUEUED, sibling.pk: RunStatus.RUNNING, elsewhere.pk: RunStatus.RUNNING}
