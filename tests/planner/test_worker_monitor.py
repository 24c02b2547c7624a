"""The worker watchdog's rules on a fake clock: reserved work that never starts, a queue that ages while the
worker idles, a task past its time limit; and what counts as progress."""

from __future__ import annotations

from planner.worker_monitor import MonitorLimits, ProgressMonitor, TaskSample

LIMITS = MonitorLimits(start_within_s=30, idle_backlog_limit_s=30, task_time_limit_s=150, concurrency=1)


def test_idle_worker_with_an_empty_queue_is_healthy_and_progressing():
    monitor = ProgressMonitor(LIMITS)
    for now in (0, 5, 10, 500):
        assert monitor.observe(now, [], [], queue_depth=0).healthy
    assert monitor.last_progress_at == 500 and not monitor.busy


def test_reserved_task_that_never_starts_is_a_wedge_after_the_limit():
    monitor = ProgressMonitor(LIMITS)
    stuck = [TaskSample("t1", run_id=7)]
    assert monitor.observe(100, stuck, [], queue_depth=0).healthy  # first seen at 100
    assert monitor.observe(130, stuck, [], queue_depth=0).healthy  # exactly 30 s: still within the limit
    verdict = monitor.observe(131, stuck, [], queue_depth=0)
    assert not verdict.healthy and "t1" in verdict.reason and "has not started" in verdict.reason
    assert verdict.overdue_run_id is None  # the run was never started: the sweep re-queues it, nothing to fail


def test_reserved_task_waiting_behind_a_running_one_is_not_a_wedge():
    monitor = ProgressMonitor(LIMITS)
    running, waiting = TaskSample("a", run_id=1), TaskSample("b", run_id=2)
    monitor.observe(0, [running, waiting], [running], queue_depth=0)
    assert monitor.observe(100, [running, waiting], [running], queue_depth=0).healthy  # the one slot is busy


def test_a_task_with_a_later_eta_is_judged_from_its_eta():
    """A retry scheduled 25 s ahead (database back-off) may wait 25 s plus the start limit."""
    monitor = ProgressMonitor(LIMITS)
    retry = [TaskSample("r", run_id=3, eta_at=25)]
    monitor.observe(0, retry, [], queue_depth=0)
    assert monitor.observe(55, retry, [], queue_depth=0).healthy  # 25 + 30
    assert not monitor.observe(56, retry, [], queue_depth=0).healthy


def test_queue_that_ages_while_the_worker_idles_is_a_wedge():
    monitor = ProgressMonitor(LIMITS)
    assert monitor.observe(0, [], [], queue_depth=2).healthy  # backlog first seen at 0
    assert monitor.observe(30, [], [], queue_depth=2).healthy
    verdict = monitor.observe(31, [], [], queue_depth=2)
    assert not verdict.healthy and "while this worker had nothing to do" in verdict.reason
    assert monitor.last_progress_at == 0  # idle with work waiting is not progress


def test_backlog_clock_restarts_when_the_worker_takes_work_or_the_queue_empties():
    monitor = ProgressMonitor(LIMITS)
    monitor.observe(0, [], [], queue_depth=2)
    monitor.observe(20, [TaskSample("x")], [TaskSample("x")], queue_depth=1)  # took one: busy, not wedged
    monitor.observe(25, [], [], queue_depth=1)  # idle again with one waiting: a new backlog clock from 25
    assert monitor.observe(55, [], [], queue_depth=1).healthy
    assert not monitor.observe(56, [], [], queue_depth=1).healthy


def test_unreadable_broker_neither_starts_nor_clears_the_backlog_clock():
    monitor = ProgressMonitor(LIMITS)
    monitor.observe(0, [], [], queue_depth=3)
    monitor.observe(20, [], [], queue_depth=None)
    assert not monitor.observe(31, [], [], queue_depth=3).healthy


def test_task_over_its_time_limit_names_its_run():
    monitor = ProgressMonitor(LIMITS)
    task = [TaskSample("long", run_id=42)]
    monitor.observe(0, task, task, queue_depth=0)
    assert monitor.observe(150, task, task, queue_depth=0).healthy
    verdict = monitor.observe(151, task, task, queue_depth=0)
    assert not verdict.healthy and verdict.overdue_run_id == 42 and "over the 150 s limit" in verdict.reason


def test_progress_is_a_start_or_a_finish_not_a_task_merely_running():
    monitor = ProgressMonitor(LIMITS)
    task = [TaskSample("t", run_id=1)]
    monitor.observe(0, [], [], queue_depth=0)
    monitor.observe(10, task, task, queue_depth=0)  # started
    monitor.observe(60, task, task, queue_depth=0)  # still running
    assert monitor.last_progress_at == 10 and monitor.busy
    monitor.observe(70, [], [], queue_depth=1)  # finished (a message waits: not idle-progress, but a finish)
    assert monitor.last_progress_at == 70
