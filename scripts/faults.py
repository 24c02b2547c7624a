"""`make faults`: kill -9 the real embedded stack at random moments and check that nothing is lost or corrupted.

Runs the embedded default (SQLite + `filesystem://` broker, the worker's pool as the settings choose it) under
the real supervisor (scripts/supervise.py), in a throw-away folder var/faults/run-<pid>, with a third
supervised program that keeps creating plans through `planner.services.plan_create` (as the web and the API do).

1. Trials: `--trials` times (100 by default), pick a victim (the worker 75 %, else the plan creator or beat),
   wait a random moment (for the worker mostly 0-4 s after it is ready, so kills land mid-run, between runs,
   mid-heartbeat and mid-commit; otherwise 0.3-6 s after its start, start-up included) and SIGKILL its process
   group; the supervisor restarts it. Every 20 trials `PRAGMA
   quick_check` runs on the live database.
2. Drain: stop creating, let the stack finish every run (bounded), then stop it and run `PRAGMA
   integrity_check` on the closed database. Every run must end `succeeded` (runs killed mid-way re-queued by
   the sweep and finished).
3. Recovery, measured with the default timings: the worker killed mid-run (`--deaths` times): seconds from
   the kill to the run re-queued and to it finished; and a wedged worker (SIGSTOP, a process frozen but
   alive): seconds to the supervisor's kill, the run re-queued and finished.

Prints a summary and writes var/faults/results.json. Bounded by --max-seconds; everything it starts, it stops.
Runs share the machine: the numbers include start-up of the Python processes (about 3-6 s per worker start).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from capacity import REQUESTS as CAPACITY_REQUESTS  # scripts/ is on sys.path when run as a script

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
FINISHED = ("succeeded", "failed")
# Runs a little slower than real so that kills often land mid-run (about 6 stages x 0.3 s).
STAGE_DELAY_S = "0.3"


def stack_env(var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_BROKER_URL"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.base",
        PLANNER_VAR_DIR=str(var_dir),
        PLANNER_RUN_STAGE_DELAY_S=STAGE_DELAY_S,
        # A run may be killed several times in 100 trials; the default (2 starts, then failed) would turn that
        # into a failure the user re-runs by hand. Here every run must finish, so allow more starts.
        PLANNER_RUN_MAX_ATTEMPTS="20",
        PYTHONUNBUFFERED="1",
    )
    return env


class Stack:
    """The supervised worker, beat and plan creator, with a read-only view of the database."""

    def __init__(self, var_dir: Path) -> None:
        self.var_dir = var_dir
        self.env = stack_env(var_dir)
        self.db = var_dir / "db.sqlite3"
        self.pid_dir = var_dir / "run"
        self.log_path = var_dir / "stack.log"
        self.proc: subprocess.Popen | None = None

    def prepare(self) -> None:
        self.var_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO, env=self.env, check=True)

    def start(self) -> None:
        celery = [PY, "-m", "celery", "-A", "config"]
        worker = [*celery, "worker", "--loglevel=INFO", "--concurrency=1", "--without-gossip", "--without-mingle"]
        programs = {
            "worker": [*worker, "-n", "faults@%h"],
            "beat": [*celery, "beat", "--loglevel=INFO", "--schedule", str(self.var_dir / "beat-schedule")],
            "creator": [PY, __file__, "--create-plans", "--var-dir", str(self.var_dir)],
        }
        cmd = [PY, "scripts/supervise.py", "--pid-dir", str(self.pid_dir), "--max-backoff-s", "1"]
        for name, argv in programs.items():
            cmd += ["--program", f"{name}={subprocess.list2cmdline(argv)}"]
        cmd += ["--alive", f"worker={self.var_dir / 'run' / 'worker.alive'}"]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(cmd, cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def pid(self, name: str) -> tuple[int, float] | None:
        """The program's current pid and start time (the pid file's mtime), if it is running."""
        path = self.pid_dir / f"{name}.pid"
        try:
            pid, started = int(path.read_text()), path.stat().st_mtime
            os.kill(pid, 0)
        except (OSError, ValueError):
            return None
        return pid, started

    def query(self, sql: str, args: tuple = ()) -> list[tuple]:
        """A short-lived connection per query: this process holds none while it spawns or kills others."""
        conn = sqlite3.connect(self.db, timeout=30)
        try:
            return conn.execute(sql, args).fetchall()
        finally:
            conn.close()

    def statuses(self) -> dict[str, int]:
        return dict(self.query("SELECT status, COUNT(*) FROM planner_planrun GROUP BY status"))

    def run_row(self, run_id: int) -> tuple[str, str, int]:
        return self.query("SELECT status, worker, attempts FROM planner_planrun WHERE id = ?", (run_id,))[0]


def wait_until(predicate, timeout_s: float, poll_s: float = 0.1):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll_s)
    return None


def kill_trials(stack: Stack, trials: int, rng: random.Random, deadline: float) -> dict:
    victims = {"worker": 0, "creator": 0, "beat": 0}
    quick_checks: list[str] = []
    done = mid_run = 0
    while done < trials and time.monotonic() < deadline:
        name = rng.choices(["worker", "creator", "beat"], weights=[0.75, 0.15, 0.10])[0]
        current = wait_until(lambda n=name: stack.pid(n), 60, 0.05)
        if current is None:
            continue
        pid, started = current
        if name == "worker" and rng.random() < 0.8:
            # Mostly once it is consuming (its watchdog touched the liveness file): mid-run, between runs,
            # mid-heartbeat; otherwise at any moment of its start-up.
            alive = stack.var_dir / "run" / "worker.alive"
            wait_until(lambda a=alive, s=started: a.exists() and a.stat().st_mtime >= s, 60, 0.05)
            time.sleep(rng.uniform(0.0, 4.0))
        else:
            time.sleep(max(0.0, started + rng.uniform(0.3, 6.0) - time.time()))
        if name == "worker" and stack.query("SELECT COUNT(*) FROM planner_planrun WHERE status = 'running'")[0][0]:
            mid_run += 1
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)  # the program's whole group (its process and any child)
        victims[name] += 1
        done += 1
        if done % 20 == 0:
            quick_checks.append(stack.query("PRAGMA quick_check")[0][0])
            print(f"faults: {done} kills, statuses {stack.statuses()}, quick_check {quick_checks[-1]}", flush=True)
    return {
        "trials": done,
        "victims": victims,
        "worker_kills_with_a_run_running": mid_run,
        "quick_checks": quick_checks,
    }


def drain(stack: Stack, timeout_s: float) -> dict:
    (stack.var_dir / "stop-creating").touch()
    started = time.monotonic()
    finished = wait_until(lambda: set(stack.statuses()) <= set(FINISHED), timeout_s, 1.0)
    return {"drained": bool(finished), "drain_s": round(time.monotonic() - started, 1), "statuses": stack.statuses()}


def create_one_run(stack: Stack) -> int:
    code = (
        "from django.contrib.auth import get_user_model; from planner import services; "
        "from scripts.faults import REQUESTS; "
        "u, _ = get_user_model().objects.get_or_create(username='faults'); "
        "print(services.plan_create(owner=u, request_data=REQUESTS[0]).runs.get().pk)"
    )
    out = subprocess.run(
        [PY, "manage.py", "shell", "-c", code], cwd=REPO, env=stack.env, check=True, text=True, capture_output=True
    )
    return int(out.stdout.strip().splitlines()[-1])


def measure_recovery(stack: Stack, freeze: bool) -> dict:
    """Kill (or freeze) the worker while it runs a plan; time the run's re-queue and finish from that moment."""
    wait_until(
        lambda: (
            stack.pid("worker")
            and stack.query("SELECT 1 FROM planner_workerheartbeat WHERE seen_at > datetime('now', '-5 seconds')")
        ),
        120,
        0.5,
    )
    run_id = create_one_run(stack)
    if not wait_until(lambda: stack.run_row(run_id)[0] == "running", 120, 0.05):
        return {"error": f"run {run_id} never started"}
    worker = stack.run_row(run_id)[1]
    pid, _ = stack.pid("worker")
    t0 = time.monotonic()
    os.kill(pid, signal.SIGSTOP if freeze else signal.SIGKILL)
    result: dict = {"run_id": run_id, "wedged" if freeze else "killed": True}
    if freeze:
        restarted = wait_until(lambda: (stack.pid("worker") or (pid, 0))[0] != pid, 180, 0.1)
        result["to_supervisor_restart_s"] = round(time.monotonic() - t0, 1) if restarted else None
    requeued = wait_until(lambda: stack.run_row(run_id)[1] != worker or stack.run_row(run_id)[0] == "queued", 180, 0.1)
    result["to_requeued_s"] = round(time.monotonic() - t0, 1) if requeued else None
    done = wait_until(lambda: stack.run_row(run_id)[0] in FINISHED, 240, 0.1)
    result["to_finished_s"] = round(time.monotonic() - t0, 1) if done else None
    result["final_status"], _, result["attempts"] = stack.run_row(run_id)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description="kill -9 trials on the embedded stack")
    parser.add_argument("--trials", type=int, default=int(os.environ.get("FAULT_TRIALS", 100)))
    parser.add_argument("--deaths", type=int, default=3, help="measured worker deaths mid-run")
    parser.add_argument("--wedges", type=int, default=1, help="measured frozen (SIGSTOP) workers")
    parser.add_argument("--max-seconds", type=float, default=float(os.environ.get("FAULT_MAX_SECONDS", 540)))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--var-dir", type=Path, default=None)
    parser.add_argument("--results", type=Path, default=REPO / "var" / "faults" / "results.json")
    parser.add_argument("--create-plans", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.create_plans:
        return create_plans(args.var_dir)
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    var_dir = args.var_dir or REPO / "var" / "faults" / f"run-{os.getpid()}"
    stack = Stack(var_dir)
    stack.prepare()
    started = time.monotonic()
    report: dict = {"seed": seed, "var_dir": str(var_dir)}
    stack.start()
    try:
        report.update(kill_trials(stack, args.trials, rng, started + args.max_seconds * 0.6))
        report.update(drain(stack, timeout_s=max(60.0, started + args.max_seconds * 0.8 - time.monotonic())))
        report["recovery"] = [measure_recovery(stack, freeze=False) for _ in range(args.deaths)]
        report["wedged"] = [measure_recovery(stack, freeze=True) for _ in range(args.wedges)]
    finally:
        stack.stop()
    report["integrity_check"] = [row[0] for row in stack.query("PRAGMA integrity_check")]
    report["corruptions"] = int(report["integrity_check"] != ["ok"]) + sum(q != "ok" for q in report["quick_checks"])
    report["runs"] = stack.statuses()
    report["runs_started_more_than_once"], report["most_starts_of_one_run"] = stack.query(
        "SELECT COALESCE(SUM(attempts > 1), 0), COALESCE(MAX(attempts), 0) FROM planner_planrun"
    )[0]
    report["elapsed_s"] = round(time.monotonic() - started, 1)
    report["quarantined_broker_files"] = len(list((var_dir / "broker-quarantine").glob("*")))
    args.results.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    ok = report["corruptions"] == 0 and set(report["runs"]) == {"succeeded"} and report.get("drained")
    print(f"faults: {'PASS' if ok else 'FAIL'} ({report['trials']} kills, {report['corruptions']} corruptions)")
    return 0 if ok else 1


# The fixed-GPU training and the serving request of `make capacity`'s mix (its `system: auto` plan is slower than a
# kill trial needs).
REQUESTS = CAPACITY_REQUESTS[1:]


def create_plans(var_dir: Path) -> int:
    """The supervised plan creator: keeps two or three runs queued until told to stop (a file)."""
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection

    from planner import services
    from planner.models import PlanRun

    user, _ = get_user_model().objects.get_or_create(username="faults")
    stop = var_dir / "stop-creating"
    i = 0
    while True:
        if not stop.exists() and PlanRun.objects.filter(status="queued").count() < 3:
            services.plan_create(owner=user, request_data=REQUESTS[i % len(REQUESTS)])
            i += 1
        connection.close()
        time.sleep(0.3)


if __name__ == "__main__":
    sys.exit(main())
