"""Worker liveness: each Celery worker records a heartbeat and sweeps lost runs periodically.

Running the sweep inside every worker (instead of relying on a separate beat process) means
the embedded one-worker set-up recovers lost runs with nothing else running; with many
workers the sweep's conditional updates keep them from stepping on each other.
"""

from __future__ import annotations

import logging
import threading

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import close_old_connections

logger = logging.getLogger(__name__)
_stop = threading.Event()


def _beat(hostname: str) -> None:
    from .services import plan_runs_recover_stale, worker_heartbeat_record

    while not _stop.is_set():
        try:
            close_old_connections()
            worker_heartbeat_record(hostname=hostname)
            counts = plan_runs_recover_stale()
            if any(counts.values()):
                logger.warning("stale plan runs: %s", counts)
        except Exception:  # the heartbeat must outlive a database blip
            logger.exception("worker heartbeat failed")
        _stop.wait(settings.PLANNER_WORKER_HEARTBEAT_S)


@worker_ready.connect
def start_heartbeat(sender=None, **_kwargs) -> None:
    hostname = getattr(sender, "hostname", None) or "worker"
    _stop.clear()
    threading.Thread(target=_beat, args=(hostname,), name="planner-heartbeat", daemon=True).start()


@worker_shutdown.connect
def stop_heartbeat(**_kwargs) -> None:
    _stop.set()
