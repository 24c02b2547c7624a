"""`make capacity`: a bounded capacity run of real Celery workers on Redis, on loopback only.

Starts its own redis-server (free loopback port, no persistence) and uses a throw-away SQLite database under
var/capacity (or PostgreSQL when PLANNER_TEST_DATABASE_URL is set), migrates it and creates a user. Then, for
each worker count (1, then 2 by default), it starts that many real workers (concurrency 1 each; the pool
as the settings choose it: threads on SQLite, prefork on PostgreSQL), queues
a burst of plan requests through the service (`planner.services.plan_create`, as the web and API do), waits
for every run to finish (or the timeout), and reports plans completed per minute with the queue wait
(started_at - queued_at) and end-to-end time (finished_at - queued_at) at p50/p99. Prints a table and writes
var/capacity/results.json. Everything it starts, it stops; nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VAR = REPO / "var" / "capacity"
PY = sys.executable

# A mix: training over every candidate system, training on a fixed GPU count, and serving.
REQUESTS = [
    {
        "workload": "training",
        "model": {"preset": "llama-3-70b"},
        "training": {"tokens": 15e12, "deadline_days": 90},
        "hardware": {"system": "auto"},
    },
    {
        "workload": "training",
        "model": {"preset": "llama-3-8b"},
        "training": {"tokens": 1e12, "gpus": 256},
        "hardware": {"system": "dgx-h100"},
    },
    {
        "workload": "inference",
        "model": {"preset": "llama-3-8b"},
        "inference": {
            "requests_per_s": 20,
            "prompt_tokens": 1000,
            "output_tokens": 250,
            "ttft_ms": 1000,
            "tpot_ms": 50,
            "precision": "bf16",
        },
        "hardware": {"system": "dgx-h100"},
    },
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_redis(port: int) -> subprocess.Popen:
    redis_server = shutil.which("redis-server")
    if redis_server is None:
        sys.exit("capacity: redis-server is not on PATH (Debian package redis-server; `make system-deps`).")
    cmd = [
        redis_server,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(VAR),
    ]
    with open(VAR / "redis.log", "ab") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            if sock.recv(16).startswith(b"+PONG"):
                return proc
        time.sleep(0.1)
    proc.kill()
    sys.exit(f"capacity: redis-server did not answer on port {port}; see {VAR / 'redis.log'}")


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def start_workers(count: int, env: dict[str, str], label: str) -> list[subprocess.Popen]:
    procs = []
    for i in range(count):
        cmd = [
            PY,
            "-m",
            "celery",
            "-A",
            "config",  # the Celery app lives in config/celery.py (planner/__init__.py stays free of it)
            "worker",
            "--concurrency=1",  # the pool is the settings' choice: threads on SQLite, prefork on PostgreSQL
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"{label}-{i}@%h",
            "--loglevel=WARNING",
        ]
        with open(VAR / f"worker-{label}-{i}.log", "ab") as log:
            procs.append(
                subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            )
    return procs


def one_round(workers: int, plans: int, timeout_s: float, env: dict[str, str], user) -> dict:
    from django.db import close_old_connections

    from planner import services
    from planner.choices import RunStatus
    from planner.models import Plan, PlanRun, WorkerHeartbeat

    Plan.objects.all().delete()
    WorkerHeartbeat.objects.all().delete()
    procs = start_workers(workers, env, f"w{workers}")
    try:
        deadline = time.monotonic() + 60
        while WorkerHeartbeat.objects.count() < workers:
            if time.monotonic() > deadline:
                raise SystemExit(f"capacity: {workers} worker(s) did not report in 60 s; see {VAR}/worker-*.log")
            if any(p.poll() is not None for p in procs):
                raise SystemExit(f"capacity: a worker exited at start-up; see {VAR}/worker-*.log")
            time.sleep(0.2)

        burst_started = time.monotonic()
        for i in range(plans):
            services.plan_create(owner=user, request_data=REQUESTS[i % len(REQUESTS)], name=f"capacity {i}")
        burst_s = time.monotonic() - burst_started

        finished = (RunStatus.SUCCEEDED, RunStatus.FAILED)
        deadline = time.monotonic() + timeout_s
        while PlanRun.objects.filter(status__in=finished).count() < plans and time.monotonic() < deadline:
            time.sleep(0.25)
            close_old_connections()
    finally:
        for proc in procs:
            stop(proc)

    runs = list(PlanRun.objects.all())
    done = [r for r in runs if r.status == RunStatus.SUCCEEDED and r.started_at and r.finished_at]
    failed = sum(r.status == RunStatus.FAILED for r in runs)
    if not done:
        return {"workers": workers, "plans": plans, "succeeded": 0, "failed": failed, "timed_out": True}
    first_queued = min(r.queued_at for r in runs)
    last_finished = max(r.finished_at for r in done)
    span_s = (last_finished - first_queued).total_seconds()
    waits = [(r.started_at - r.queued_at).total_seconds() for r in done]
    e2e = [(r.finished_at - r.queued_at).total_seconds() for r in done]
    service = [(r.finished_at - r.started_at).total_seconds() for r in done]

    def ms(values: list[float], q: float) -> float:
        return round(percentile(values, q) * 1000, 1)

    return {
        "workers": workers,
        "plans": plans,
        "succeeded": len(done),
        "failed": failed,
        "timed_out": len(done) + failed < plans,
        "burst_submit_s": round(burst_s, 2),
        "span_s": round(span_s, 2),
        "plans_per_minute": round(len(done) / span_s * 60, 1),
        "queue_wait_p50_ms": ms(waits, 50),
        "queue_wait_p99_ms": ms(waits, 99),
        "end_to_end_p50_ms": ms(e2e, 50),
        "end_to_end_p99_ms": ms(e2e, 99),
        "run_p50_ms": ms(service, 50),
        "engine_mean_ms": round(statistics.fmean(r.engine_s or 0 for r in done) * 1000, 1),
    }


def main() -> None:
    """One burst per worker count on a fresh Redis and database; exits 1 when a burst failed or timed out."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plans", type=int, default=200, help="plan requests per burst (default 200)")
    parser.add_argument("--workers", default="1,2", help="worker counts to try, comma-separated (default 1,2)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for a burst (default 300)")
    args = parser.parse_args()
    counts = [int(c) for c in args.workers.split(",") if c.strip()]

    shutil.rmtree(VAR, ignore_errors=True)
    VAR.mkdir(parents=True)
    redis = start_redis(free_port())
    try:
        port = int(redis.args[redis.args.index("--port") + 1])
        database_url = os.environ.get("PLANNER_TEST_DATABASE_URL", "")
        env = _worker_env(port, database_url)
        user = _become_client(env)
        results = {
            "setup": {
                "database": "postgresql" if database_url else "sqlite (WAL)",
                "broker": "redis (loopback, no persistence)",
                "cpus": os.cpu_count(),
                "plans_per_burst": args.plans,
                "worker": "prefork, concurrency 1",
                "requests": [r["workload"] + ":" + r["hardware"]["system"] for r in REQUESTS],
            },
            "rounds": [],
        }
        for workers in counts:
            print(f"capacity: {workers} worker(s), burst of {args.plans} plans ...", flush=True)
            results["rounds"].append(one_round(workers, args.plans, args.timeout, env, user))
        from planner.models import Plan

        Plan.objects.all().delete()  # leave a PostgreSQL database as it was found (SQLite is under var/)
    finally:
        stop(redis)

    (VAR / "results.json").write_text(json.dumps(results, indent=2))
    _print_table(results, args.plans)
    if any(r.get("timed_out") or r.get("failed") for r in results["rounds"]):
        sys.exit(1)


def _worker_env(port: int, database_url: str) -> dict[str, str]:
    """The environment the workers and this client share: the throw-away var/, the loopback Redis broker, real
    (not eager) tasks, and the database (PostgreSQL when given, else SQLite under var/)."""
    env = dict(
        os.environ,
        PLANNER_VAR_DIR=str(VAR),
        DJANGO_SETTINGS_MODULE="config.settings.base",
        CELERY_BROKER_URL=f"redis://127.0.0.1:{port}/0",
        PLANNER_TASKS_EAGER="0",
        PLANNER_WORKER_HEARTBEAT_S="1",
        # One user sends the whole burst here: lift the per-user queue share this benchmark measures past.
        PLANNER_MAX_ACTIVE_RUNS_PER_USER="100000",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    env.pop("DATABASE_URL", None)
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


def _become_client(env: dict[str, str]):
    """Make this process the client: a Django process with the workers' settings, its database migrated and the
    fixture prices loaded; returns the user the bursts are submitted as."""
    os.environ.clear()
    os.environ.update(env)
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", "--noinput", verbosity=0)
    call_command("load_prices", verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="capacity")
    return user


def _print_table(results: dict, plans: int) -> None:
    """One line per round (plans per minute, queue wait and end-to-end percentiles) and the scaling between the
    first and last worker counts."""
    cols = (
        "workers",
        "succeeded",
        "failed",
        "plans_per_minute",
        "queue_wait_p50_ms",
        "queue_wait_p99_ms",
        "end_to_end_p50_ms",
        "end_to_end_p99_ms",
        "run_p50_ms",
        "span_s",
    )
    heads = (
        "workers",
        "ok",
        "failed",
        "plans/min",
        "wait p50 ms",
        "wait p99 ms",
        "e2e p50 ms",
        "e2e p99 ms",
        "run p50 ms",
        "span s",
    )
    print(
        f"database {results['setup']['database']}, {results['setup']['cpus']} CPUs, "
        f"{plans} plans per burst ({', '.join(results['setup']['requests'])})"
    )
    print("  ".join(f"{h:>11}" for h in heads))
    for row in results["rounds"]:
        print("  ".join(f"{row.get(c, '-')!s:>11}" for c in cols))
    rounds = [r for r in results["rounds"] if r.get("plans_per_minute")]
    if len(rounds) >= 2:
        print(
            f"throughput {rounds[-1]['workers']} vs {rounds[0]['workers']} worker(s): "
            f"x{rounds[-1]['plans_per_minute'] / rounds[0]['plans_per_minute']:.2f}"
        )
    print(f"written: {VAR / 'results.json'}")


if __name__ == "__main__":
    main()
