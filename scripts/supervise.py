#!/usr/bin/env python3
"""A small process supervisor for `make run`: the web server, the Celery worker and Celery beat.

Each program runs in its own process group. One that exits is started again after a back-off (1 s, doubling
to 30 s while it keeps dying young, back to 1 s once it has run for a minute); the others keep running. A
program given a liveness file (the worker's, touched by its watchdog while it makes progress) is killed with
SIGKILL and restarted when the file goes stale, which covers a process too frozen to exit by itself. Ctrl-C or
SIGTERM stops every program (SIGTERM, then SIGKILL after 10 s) and then the supervisor.

The current pid of each program is written to <pid-dir>/<name>.pid, for `make faults` and for operators.
Standard library only (no new dependency); the rules (back-off, staleness) are plain functions, tested alone.

    supervise.py --program "web=python manage.py runserver" --program "worker=celery -A config worker" \\
                 --alive worker=var/run/worker.alive --pid-dir var/run
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

MIN_BACKOFF_S = 1.0
MAX_BACKOFF_S = 30.0
HEALTHY_RUN_S = 60.0  # a program that ran this long before exiting restarts after MIN_BACKOFF_S again
STOP_GRACE_S = 10.0
POLL_S = 0.5


def next_backoff_s(previous_s: float, ran_s: float, max_s: float = MAX_BACKOFF_S) -> float:
    """Back-off before the next start: reset after a healthy run, doubled (capped at max_s) after a quick death."""
    if ran_s >= HEALTHY_RUN_S or previous_s <= 0:
        return min(MIN_BACKOFF_S, max_s)
    return min(max_s, previous_s * 2)


def is_stale(now: float, started_at: float, touched_at: float | None, stale_s: float, boot_grace_s: float) -> bool:
    """Has a program stopped touching its liveness file? A file older than this start does not count:
    the program then has `boot_grace_s` from its start to touch it once."""
    if touched_at is None or touched_at < started_at:
        return now - started_at > boot_grace_s
    return now - touched_at > stale_s


@dataclass
class Program:
    name: str
    argv: list[str]
    alive_file: Path | None = None
    proc: subprocess.Popen | None = None
    started_at: float = 0.0
    restart_at: float = 0.0
    backoff_s: float = 0.0
    restarts: int = 0
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))


class Supervisor:
    def __init__(
        self, programs: list[Program], pid_dir: Path, stale_s: float, boot_grace_s: float, max_backoff_s: float
    ) -> None:
        self.programs = programs
        self.max_backoff_s = max_backoff_s
        self.pid_dir = pid_dir
        self.stale_s = stale_s
        self.boot_grace_s = boot_grace_s
        self.stopping = False

    def log(self, message: str) -> None:
        print(f"supervise: {message}", file=sys.stderr, flush=True)

    def start(self, program: Program) -> None:
        program.proc = subprocess.Popen(program.argv, env=program.env, start_new_session=True)
        program.started_at = time.time()
        (self.pid_dir / f"{program.name}.pid").write_text(f"{program.proc.pid}\n")
        self.log(f"started {program.name} (pid {program.proc.pid})")

    def tick(self) -> None:
        now = time.time()
        for program in self.programs:
            if program.proc is None:
                if now >= program.restart_at:
                    program.restarts += 1
                    self.start(program)
                continue
            code = program.proc.poll()
            if code is None and program.alive_file is not None:
                touched = _mtime(program.alive_file)
                if is_stale(now, program.started_at, touched, self.stale_s, self.boot_grace_s):
                    self.log(f"{program.name} made no progress (liveness file stale); killing it")
                    _kill_group(program.proc, signal.SIGKILL)
                    code = program.proc.wait()
            if code is not None:
                ran_s = now - program.started_at
                program.backoff_s = next_backoff_s(program.backoff_s, ran_s, self.max_backoff_s)
                program.restart_at = now + program.backoff_s
                program.proc = None
                self.log(
                    f"{program.name} exited (code {code}) after {ran_s:.0f} s; restarting in {program.backoff_s:.0f} s"
                )

    def stop(self) -> None:
        live = [p.proc for p in self.programs if p.proc is not None and p.proc.poll() is None]
        for proc in live:
            _kill_group(proc, signal.SIGTERM)
        deadline = time.time() + STOP_GRACE_S
        for proc in live:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.1, deadline - time.time()))
            if proc.poll() is None:
                _kill_group(proc, signal.SIGKILL)
                proc.wait()
        # Each program ran in its own group: take out any grandchild still there.
        for proc in live:
            _kill_group(proc, signal.SIGKILL)

    def run(self) -> int:
        self.pid_dir.mkdir(mode=0o700, parents=True, exist_ok=True)

        def on_signal(signum, _frame) -> None:
            self.stopping = True

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        for program in self.programs:
            self.start(program)
        while not self.stopping:
            self.tick()
            time.sleep(POLL_S)
        self.log("stopping " + ", ".join(p.name for p in self.programs))
        self.stop()
        return 0


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return None


def _kill_group(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", action="append", required=True, help="NAME=COMMAND (shell-quoted)")
    parser.add_argument("--alive", action="append", default=[], help="NAME=PATH of the program's liveness file")
    parser.add_argument("--pid-dir", type=Path, default=Path("var/run"))
    parser.add_argument("--stale-s", type=float, default=float(os.environ.get("PLANNER_WORKER_SEEN_WITHIN_S", 20)))
    parser.add_argument("--boot-grace-s", type=float, default=60.0)
    parser.add_argument("--max-backoff-s", type=float, default=MAX_BACKOFF_S)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    os.umask(0o077)  # the programs' var/ files are owner-only (config.permissions)
    args = parse_args(sys.argv[1:] if argv is None else argv)
    alive = dict(item.split("=", 1) for item in args.alive)
    programs = []
    for item in args.program:
        name, command = item.split("=", 1)
        programs.append(
            Program(name=name, argv=shlex.split(command), alive_file=Path(alive[name]) if name in alive else None)
        )
    return Supervisor(programs, args.pid_dir, args.stale_s, args.boot_grace_s, args.max_backoff_s).run()


if __name__ == "__main__":
    sys.exit(main())
