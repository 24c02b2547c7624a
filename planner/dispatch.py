"""Putting a run's message on the queue: the one place services reach Celery through.

Services call `run_publish(run_id)`; the task is found by name in the Celery app's registry, so
`planner.services` never imports `planner.tasks` (which imports the services it runs) and the
two modules form no import cycle. `task.delay` still honours eager mode (the test settings).
"""

from __future__ import annotations

RUN_PLAN_TASK = "planner.run_plan"
SWEEP_RUNS_TASK = "planner.sweep_runs"
RENDER_REPORT_TASK = "planner.render_report"
# The node name of `make run`'s report worker (scripts/run.sh, `-n reports@%h`): it runs no plans, so /healthz does
# not take its heartbeat for the plan worker's.
REPORT_WORKER_PREFIX = "reports@"


def run_publish(run_id: int) -> None:
    """Send the message that makes a worker execute this run (call it after the run's rows commit)."""
    from config.celery import app

    if RUN_PLAN_TASK not in app.tasks:
        # Celery discovers task modules lazily (at worker start); a web or command process that has not
        # imported planner.tasks yet registers it here, once.
        app.loader.import_default_modules()
    app.tasks[RUN_PLAN_TASK].delay(run_id)


def report_publish(plan_id: int) -> None:
    """Ask a worker to render a finished plan's report PDF ahead of its first download.

    On the queue PLANNER_REPORT_QUEUE names, when it names one: `make run` gives reports a worker of their own, so
    a render (seconds of CPU) never holds up the plans submitted after it. Else on the default queue.
    """
    from django.conf import settings

    from config.celery import app

    if RENDER_REPORT_TASK not in app.tasks:
        app.loader.import_default_modules()
    queue = settings.PLANNER_REPORT_QUEUE or None
    app.tasks[RENDER_REPORT_TASK].apply_async((plan_id,), queue=queue)
