"""Broker faults: Redis restarted (without persistence) under queued runs and under a connected worker.

Each test starts its own throw-away `redis-server` on a free loopback port, so restarting it loses messages
without disturbing anything else (the CI Redis included). Queued runs whose message was lost are re-published
by the sweep that Celery beat queues (PLANNER_RUN_QUEUED_RESEND_AFTER_S), so nothing waits forever.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from config.celery import app
from planner import services
from planner.choices import RunStatus
from planner.models import PlanRun, WorkerHeartbeat
from tests.support import celery_beat, celery_worker, subprocess_env, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

REDIS_SERVER = shutil.which("redis-server")
FINISHED = (RunStatus.SUCCEEDED, RunStatus.FAILED)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """A redis-server on 127.0.0.1 with no persistence (a restart empties it), restartable on the same port."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        cmd = [
            REDIS_SERVER,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.folder),
        ]
        with open(self.folder / "redis.log", "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        wait_for(self.ping, 15, f"redis-server on port {self.port}", self.folder / "redis.log")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def client(self):
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2, socket_connect_timeout=2)

    def ping(self) -> bool:
        try:
            with contextlib.closing(self.client()) as client:
                return bool(client.ping())
        except Exception:  # redis.ConnectionError and friends: not up (yet)
            return False

    def queued_messages(self) -> int:
        with contextlib.closing(self.client()) as client:
            return int(client.llen("celery"))


def _reset_producer_pools() -> None:
    """Make this process's Celery app build new broker connections on its next publish.

    Only references are dropped: kombu keeps one global pool per broker URL, and closing it would break the
    next test that publishes to the same URL.
    """
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def redis_server(tmp_path, monkeypatch) -> Iterator[RedisServer]:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not on PATH (Debian package redis-server; .ci/run installs it)")
    folder = tmp_path / "redis"
    folder.mkdir()
    server = RedisServer(folder)
    server.start()
    # Point this process's Celery app at the server, with tasks really sent (test settings are eager). Celery reads
    # CELERY_BROKER_URL from the environment before its own config, so on the scale-out pass (where it names the
    # CI Redis) the variable must change too.
    saved = (app.conf.broker_url, app.conf.task_always_eager)  # read before the variable changes, or it leaks
    monkeypatch.setenv("CELERY_BROKER_URL", server.url)
    app.conf.broker_url, app.conf.task_always_eager = server.url, False
    _reset_producer_pools()
    try:
        yield server
    finally:
        app.conf.broker_url, app.conf.task_always_eager = saved
        _reset_producer_pools()
        server.stop()


def _env(server: RedisServer) -> dict[str, str]:
    return subprocess_env(
        CELERY_BROKER_URL=server.url,
        PLANNER_WORKER_HEARTBEAT_S="0.5",
        PLANNER_RUN_SWEEP_EVERY_S="0.5",
        PLANNER_RUN_QUEUED_RESEND_AFTER_S="2",
    )


def _all_finished(run_ids: list[int]) -> bool:
    return PlanRun.objects.filter(pk__in=run_ids, status__in=FINISHED).count() == len(run_ids)


def test_runs_queued_when_redis_restarts_still_finish(
    redis_server, user, training_request, inference_request, tmp_path
):
    log = tmp_path / "worker.log"
    requests = [training_request, inference_request, {**training_request, "training": {"tokens": 1e12, "gpus": 64}}]
    run_ids = [services.plan_create(owner=user, request_data=r).runs.get().pk for r in requests]
    wait_for(lambda: redis_server.queued_messages() == 3, 15, "the three task messages to reach Redis")

    redis_server.restart()  # no persistence: the three messages are gone
    assert redis_server.queued_messages() == 0
    assert PlanRun.objects.filter(pk__in=run_ids, status=RunStatus.QUEUED).count() == 3

    with celery_worker(_env(redis_server), log, name="after-restart"), celery_beat(_env(redis_server), log):
        wait_for(
            lambda: _all_finished(run_ids), 60, "beat's sweep to re-publish the lost runs and a worker to run them", log
        )
    runs = list(PlanRun.objects.filter(pk__in=run_ids))
    assert [r.status for r in runs] == [RunStatus.SUCCEEDED] * 3, [(r.pk, r.status, r.error) for r in runs]
    assert all(r.sends >= 2 and r.attempts == 1 for r in runs), [(r.pk, r.sends, r.attempts) for r in runs]


def test_connected_worker_survives_a_redis_restart(redis_server, user, training_request, tmp_path):
    log = tmp_path / "worker.log"
    with celery_worker(_env(redis_server), log, name="through-restart"):
        wait_for(WorkerHeartbeat.objects.exists, 60, "the worker's first heartbeat", log)
        before = services.plan_create(owner=user, request_data=training_request).runs.get().pk
        wait_for(lambda: _all_finished([before]), 60, "a run before the restart", log)

        redis_server.restart()
        time.sleep(0.5)  # let the worker notice the dropped connection before the next message

        after = services.plan_create(owner=user, request_data=training_request).runs.get().pk
        wait_for(lambda: _all_finished([after]), 60, "a run after the restart", log)
    run = PlanRun.objects.get(pk=after)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert PlanRun.objects.get(pk=before).status == RunStatus.SUCCEEDED
