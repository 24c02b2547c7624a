"""Worker liveness: each Celery worker records a heartbeat (read by /healthz) from a small thread.

Sweeping lost runs is not done here: Celery beat queues `planner.sweep_runs` (see
CELERY_BEAT_SCHEDULE), so one sweep runs per tick however many workers there are.
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
    from .services import worker_heartbeat_record

    while not _stop.is_set():
        try:
            close_old_connections()
            worker_heartbeat_record(hostname=hostname)
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
