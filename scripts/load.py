"""`make load`: a bounded load test of the API under gunicorn on loopback.

Starts gunicorn on 127.0.0.1 with a throw-away database under var/load, creates a user, a
token and one finished plan, then for a fixed time drives (1) reads of that plan and (2) plan
creations from client threads, and prints requests/s with p50/p90/p99 latency. Nothing leaves
the machine; every loop stops by itself.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
REQUEST = {
    "workload": "training",
    "model": {"preset": "llama-3-70b"},
    "training": {"tokens": 15e12, "deadline_days": 90},
    "hardware": {"system": "auto"},
}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def drive(port: int, token: str, method: str, path: str, body: bytes | None, seconds: float, threads: int) -> dict:
    """Run `threads` keep-alive clients for `seconds`; return throughput and latency figures."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine: list[float] = []
        bad = 0
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                ok = response.status in (200, 202)
            except (OSError, http.client.HTTPException):
                ok = False
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            mine.append(time.perf_counter() - started)
            bad += not ok
        with lock:
            latencies.extend(mine)
            errors[0] += bad

    started = time.monotonic()
    workers = [threading.Thread(target=client) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.monotonic() - started
    return {
        "requests": len(latencies),
        "errors": errors[0],
        "seconds": round(elapsed, 2),
        "requests_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 1),
        "p90_ms": round(percentile(latencies, 90) * 1000, 1),
        "p99_ms": round(percentile(latencies, 99) * 1000, 1),
    }


def main() -> None:
    """Set up a fresh database with one user, token and saved plan, serve it with gunicorn on loopback, drive reads
    and creations for `--seconds` each, and print and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--gunicorn-workers", type=int, default=3)
    parser.add_argument("--port", type=int, default=8089)
    args = parser.parse_args()

    var = REPO / "var" / "load"
    shutil.rmtree(var, ignore_errors=True)
    env = dict(
        os.environ,
        PLANNER_VAR_DIR=str(var),
        DJANGO_SETTINGS_MODULE="config.settings.base",
        PLANNER_API_RATE="10000000/min",
        PLANNER_CREATE_RATE="10000000/min",
        PLANNER_MAX_ACTIVE_RUNS_PER_USER="100000",
        LOG_LEVEL="WARNING",
    )
    env.pop("DATABASE_URL", None)
    token, plan_id = _prepare(env)
    server = _start_gunicorn(env, args.port, args.gunicorn_workers)
    try:
        _wait_until_serving(args.port)
        body = json.dumps(REQUEST).encode()
        results = {
            "read_plan": drive(args.port, token, "GET", f"/api/plans/{plan_id}/", None, args.seconds, args.threads),
            "create_plan": drive(
                args.port, token, "POST", "/api/plans/", body, args.seconds, max(1, args.threads // 2)
            ),
        }
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)
    results["setup"] = {
        "gunicorn_workers": args.gunicorn_workers,
        "client_threads": args.threads,
        "database": "sqlite (WAL)",
        "cpus": os.cpu_count(),
    }
    (var / "results.json").write_text(json.dumps(results, indent=2))
    _print_results(results)


def _prepare(env: dict[str, str]) -> tuple[str, int]:
    """Migrate, load the prices, create the user `load` and its API token, and save one plan to read back;
    returns (token, plan id)."""

    def manage(*argv: str, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(
            [PY, "manage.py", *argv], cwd=REPO, env=env, check=True, capture_output=True, text=True, **kwargs
        )

    manage("migrate", "--noinput")
    manage("load_prices")
    manage("shell", "-c", "from django.contrib.auth.models import User; User.objects.create_user('load', password='x')")
    token = manage("api_token", "load").stdout.strip()
    saved = manage("plan", "--input", "-", "--save", "--user", "load", input=json.dumps(REQUEST))
    return token, json.loads(saved.stdout)["id"]


def _start_gunicorn(env: dict[str, str], port: int, workers: int) -> subprocess.Popen:
    """gunicorn on loopback in a session of its own, so it and its workers stop together."""
    return subprocess.Popen(
        [PY, "-m", "gunicorn", "config.wsgi", "-b", f"127.0.0.1:{port}", "--workers", str(workers),
         "--log-level", "warning"],
        cwd=REPO,
        env=env,
        start_new_session=True,
    )  # fmt: skip


def _wait_until_serving(port: int) -> None:
    """Until the API schema answers 200, for at most 30 s."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/api/schema/")
            if conn.getresponse().status == 200:
                break
        except OSError:
            time.sleep(0.3)


def _print_results(results: dict) -> None:
    """One line per operation: requests per second, latency percentiles, errors and requests."""
    print(f"{'operation':<12} {'req/s':>8} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'errors':>7} {'requests':>9}")
    for name in ("read_plan", "create_plan"):
        r = results[name]
        print(
            f"{name:<12} {r['requests_per_s']:>8} {r['p50_ms']:>8} {r['p90_ms']:>8} {r['p99_ms']:>8} "
            f"{r['errors']:>7} {r['requests']:>9}"
        )


if __name__ == "__main__":
    main()
