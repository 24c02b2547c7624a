"""Does this worker make progress? The watchdog's rules, as plain code with an injectable clock.

A worker can look alive (process up, heartbeat thread writing) while doing nothing: a pool that never starts
the task it reserved, a consumer that stopped taking messages from a queue that keeps growing, a task stuck
far beyond its time limit (the `threads` pool used on SQLite does not enforce Celery's time limits). The
heartbeat thread (planner.signals) samples the worker's reserved and active tasks and the broker queue depth
every PLANNER_WORKER_HEARTBEAT_S and asks `ProgressMonitor.observe` for a verdict; an unhealthy verdict makes
the worker exit so that its supervisor starts a fresh one and the sweep re-queues its runs.

Sampling (rather than hooking every task signal) works for every pool: Celery keeps reserved and active
requests in the worker's main process for prefork children too. Times are only as precise as the sampling
interval, which is far finer than the limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MonitorLimits:
    start_within_s: float  # a reserved task must start this soon (after its ETA) while a pool slot is free
    idle_backlog_limit_s: float  # the broker queue may hold messages this long while the worker idles
    task_time_limit_s: float  # a task running longer than this is stuck
    concurrency: int = 1


@dataclass(frozen=True)
class TaskSample:
    """One reserved or active task as seen at a sample: its id, the run it executes, its ETA if any."""

    task_id: str
    run_id: int | None = None
    eta_at: float | None = None  # on the monitor's clock


@dataclass(frozen=True)
class Verdict:
    healthy: bool
    reason: str = ""
    overdue_run_id: int | None = None  # a run whose task overran its time limit (to be failed, not re-run)


@dataclass
class ProgressMonitor:
    limits: MonitorLimits
    last_progress_at: float | None = None
    _reserved_seen: dict[str, float] = field(default_factory=dict)
    _active_seen: dict[str, float] = field(default_factory=dict)
    _backlog_since: float | None = None

    def observe(
        self, now: float, reserved: list[TaskSample], active: list[TaskSample], queue_depth: int | None
    ) -> Verdict:
        """Record one sample taken at `now` and judge it.

        Progress is a task starting or finishing, or the worker idle with nothing queued (it is keeping up).
        `queue_depth` None means the broker could not be read: that sample says nothing about a backlog.
        """
        if self.last_progress_at is None:
            self.last_progress_at = now
        active_ids = {t.task_id for t in active}
        if active_ids != set(self._active_seen):
            self.last_progress_at = now  # something started or finished since the last sample
        self._active_seen = {i: self._active_seen.get(i, now) for i in active_ids}
        waiting = [t for t in reserved if t.task_id not in active_ids]
        self._reserved_seen = {t.task_id: self._reserved_seen.get(t.task_id, now) for t in waiting}
        idle = not active and not waiting
        if idle and queue_depth == 0:
            self.last_progress_at = now
        if idle and queue_depth:
            self._backlog_since = self._backlog_since if self._backlog_since is not None else now
        elif queue_depth is not None or not idle:
            self._backlog_since = None
        return self._judge(now, waiting, active, queue_depth)

    def _judge(self, now: float, waiting: list[TaskSample], active: list[TaskSample], depth: int | None) -> Verdict:
        limits = self.limits
        for task in active:
            running_s = now - self._active_seen[task.task_id]
            if running_s > limits.task_time_limit_s:
                return Verdict(
                    False,
                    f"task {task.task_id} has run {running_s:.0f} s, over the {limits.task_time_limit_s:.0f} s limit",
                    overdue_run_id=task.run_id,
                )
        if len(active) < limits.concurrency:
            for task in waiting:
                since = max(self._reserved_seen[task.task_id], task.eta_at or 0.0)
                if now - since > limits.start_within_s:
                    return Verdict(
                        False,
                        f"task {task.task_id} was reserved {now - self._reserved_seen[task.task_id]:.0f} s ago and "
                        f"has not started although a pool slot is free (limit {limits.start_within_s:.0f} s)",
                    )
        if self._backlog_since is not None and now - self._backlog_since > limits.idle_backlog_limit_s:
            return Verdict(
                False,
                f"the broker queue has held messages ({depth} now) for {now - self._backlog_since:.0f} s while "
                f"this worker had nothing to do (limit {limits.idle_backlog_limit_s:.0f} s)",
            )
        return Verdict(True)

    @property
    def busy(self) -> bool:
        return bool(self._active_seen or self._reserved_seen)
