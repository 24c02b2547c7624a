"""`make latency`: how long a user waits from pressing "Plan it" to reading the finished plan, on the embedded stack.

It starts the stack exactly as `make run` does (scripts/run.sh: the web server, the Celery worker and beat under
scripts/supervise.py; SQLite and the `filesystem://` broker) on a throw-away folder under var/latency, logs in as a
browser would and, for each plan, times what the user sees:

    POST the plan form -> follow the redirect to the plan page -> poll status.json on static/js/run.js's schedule
    -> when the run reports finished, load the plan page again (run.js reloads it)

"submit -> finished" is the wall time of that whole sequence, in this client. The server's own timestamps
(queued_at, started_at, finished_at in status.json) split it into the queue wait (broker pickup), the run, and
what is left: the poll that notices the end, and the requests. The first plans warm the processes' imports and are
not counted. Prints median and p90 and writes var/latency/results.json. A benchmark, never a test: the numbers
depend on the machine and on what else runs on it.

    .venv/bin/python benchmarks/latency.py --plans 20
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "var" / "latency"
PY = str(REPO / ".venv" / "bin" / "python") if (REPO / ".venv" / "bin" / "python").exists() else sys.executable
USER, PASSWORD = "latency", "a-long-latency-passphrase"

# A 70B training plan on one system: the engine's part is about 0.15-0.2 s, so what is measured is the stack.
REQUEST = {
    "workload": "training",
    "model": {"preset": "llama-3-70b"},
    "training": {"tokens": 15e12, "deadline_days": 90},
    "hardware": {"system": "dgx-h100"},
}

# run.js's poll schedule, read from the file so the benchmark follows the page: `const POLL = {...};`.
POLL_PATTERN = re.compile(r"const POLL = (\{[^}]*\});")


@dataclass(frozen=True)
class PollSchedule:
    first_ms: float
    growth: float
    max_ms: float

    @classmethod
    def from_run_js(cls) -> PollSchedule:
        text = (REPO / "static" / "js" / "run.js").read_text()
        match = POLL_PATTERN.search(text)
        if match is None:
            sys.exit("latency: static/js/run.js has no `const POLL = {...};` line to read the poll schedule from")
        raw = json.loads(re.sub(r"(\w+):", r'"\1":', match.group(1)))
        return cls(first_ms=raw["firstMs"], growth=raw["growth"], max_ms=raw["maxMs"])

    def delays_s(self):
        delay = self.first_ms
        while True:
            yield delay / 1000
            delay = min(delay * self.growth, self.max_ms)


def cpu_share(work_s: float = 0.05) -> float:
    """Wall time over CPU time of a short busy loop in this process: 1.0 on an idle machine, 4.0 when other work
    leaves it a quarter of a core. Recorded beside each plan, since every figure here stretches by about that."""
    wall, cpu = time.perf_counter(), time.process_time()
    while time.process_time() - cpu < work_s:
        pass
    return (time.perf_counter() - wall) / (time.process_time() - cpu)


@dataclass
class Sample:
    total_s: float
    post_s: float
    final_page_s: float
    polls: int
    queue_wait_s: float
    run_s: float
    engine_s: float
    noticed_after_s: float  # from the server's finished_at to the client seeing it
    stretch: float  # cpu_share() just before the plan: how loaded the machine was
    page_again_s: float  # the plan page loaded once more (not part of total_s)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stack_env(var_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "PLANNER_BROKER_DIR", "PLANNER_WORKER_ALIVE_FILE"):
        env.pop(name, None)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.base",
        PLANNER_VAR_DIR=str(var_dir),
        STATIC_ROOT=str(REPO / "var" / "static"),
        DJANGO_SUPERUSER_USERNAME=USER,
        DJANGO_SUPERUSER_PASSWORD=PASSWORD,
        PYTHONUNBUFFERED="1",
        # The throttles would refuse the burst of a long benchmark; they are not what is measured.
        PLANNER_CREATE_RATE="100000/min",
        PLANNER_MAX_ACTIVE_RUNS_PER_USER="1000",
    )
    return env


def prepare(env: dict[str, str], log) -> None:
    for command in (["migrate", "--noinput", "-v", "0"], ["load_catalog"], ["load_prices"]):
        subprocess.run([PY, "manage.py", *command], cwd=REPO, env=env, check=True, stdout=log, stderr=log)


def wait_healthy(base: str, proc: subprocess.Popen, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"latency: the stack exited at start-up (code {proc.returncode}); see {OUT}/stack.log")
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{base}/healthz", timeout=5).status_code == 200:
                return
        time.sleep(0.5)
    sys.exit(f"latency: /healthz did not answer 200 within {timeout_s:.0f} s; see {OUT}/stack.log")


def login(base: str) -> requests.Session:
    session = requests.Session()
    session.get(f"{base}/accounts/login/", timeout=10)
    response = session.post(
        f"{base}/accounts/login/",
        data={"username": USER, "password": PASSWORD, "csrfmiddlewaretoken": session.cookies["csrftoken"]},
        headers={"Referer": f"{base}/accounts/login/"},
        timeout=10,
    )
    if response.status_code != 200 or "sessionid" not in session.cookies:
        sys.exit(f"latency: could not log in (HTTP {response.status_code})")
    return session


def _seconds(status: dict, start: str, end: str) -> float:
    return (datetime.fromisoformat(status[end]) - datetime.fromisoformat(status[start])).total_seconds()


def one_plan(session: requests.Session, base: str, schedule: PollSchedule, index: int) -> Sample:
    """One plan as the browser makes it; the form page is loaded first, as the user has it open."""
    session.get(f"{base}/plans/new/", timeout=10)
    stretch = cpu_share()
    form = {
        "csrfmiddlewaretoken": session.cookies["csrftoken"],
        "name": f"latency {index}",
        # The visible fields a browser sends with their defaults; the JSON box replaces them (plan_form.html).
        "workload": REQUEST["workload"],
        "model_preset": REQUEST["model"]["preset"],
        "training_precision": "bf16",
        "inference_precision": "bf16",
        "hardware_system": REQUEST["hardware"]["system"],
        "request_json": json.dumps(REQUEST),
    }
    started = time.perf_counter()
    response = session.post(
        f"{base}/plans/new/", data=form, headers={"Referer": f"{base}/plans/new/"}, timeout=30, allow_redirects=True
    )
    post_s = time.perf_counter() - started
    match = re.search(r"/plans/(\d+)/$", response.url)
    if response.status_code != 200 or match is None:
        sys.exit(f"latency: the plan form was refused (HTTP {response.status_code} at {response.url})")
    plan_url = response.url
    status_url = f"{plan_url}status.json"
    polls = 0
    status: dict = {}
    for delay_s in schedule.delays_s():
        time.sleep(delay_s)
        status = session.get(status_url, headers={"Accept": "application/json"}, timeout=30).json()
        polls += 1
        if status["finished"]:
            break
        if time.perf_counter() - started > 120:
            sys.exit(f"latency: plan {plan_url} did not finish within 120 s")
    noticed_at, noticed_wall = time.perf_counter(), time.time()
    page = session.get(plan_url, timeout=30)
    total_s = time.perf_counter() - started
    again = time.perf_counter()
    session.get(plan_url, timeout=30)  # a second view: what reading the plan costs once everything is kept
    again_s = time.perf_counter() - again
    if status["status"] != "succeeded" or page.status_code != 200:
        sys.exit(f"latency: plan {plan_url} ended {status['status']} (page HTTP {page.status_code})")
    finished_wall = datetime.fromisoformat(status["finished_at"]).timestamp()
    return Sample(
        total_s=total_s,
        post_s=post_s,
        final_page_s=total_s - (noticed_at - started),
        polls=polls,
        queue_wait_s=_seconds(status, "queued_at", "started_at"),
        run_s=_seconds(status, "started_at", "finished_at"),
        engine_s=status.get("engine_s") or 0.0,
        noticed_after_s=noticed_wall - finished_wall,
        stretch=stretch,
        page_again_s=again_s,
    )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def summarise(samples: list[Sample]) -> dict[str, dict[str, float]]:
    summary = {}
    names = ("total_s", "post_s", "queue_wait_s", "run_s", "engine_s", "noticed_after_s", "final_page_s", "polls")
    for name in (*names, "page_again_s", "stretch"):
        values = [getattr(s, name) for s in samples]
        summary[name] = {
            "median": round(statistics.median(values), 3),
            "p90": round(percentile(values, 90), 3),
            "max": round(max(values), 3),
        }
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plans", type=int, default=20, help="plans timed (after the warm-up ones)")
    parser.add_argument("--warmup", type=int, default=2, help="plans made first and not counted")
    parser.add_argument("--gap-s", type=float, default=1.0, help="pause between plans (a user reading the page)")
    parser.add_argument("--label", default="", help="stored with the results (e.g. before/after)")
    parser.add_argument("--poll", default="", help="FIRST_MS,GROWTH,MAX_MS instead of run.js's (an older run.js)")
    args = parser.parse_args()

    OUT.mkdir(mode=0o700, parents=True, exist_ok=True)
    var_dir = Path(tempfile.mkdtemp(prefix="run-", dir=OUT))
    env = stack_env(var_dir)
    port = free_port()
    env["PORT"] = str(port)
    base = f"http://127.0.0.1:{port}"
    if args.poll:
        first_ms, growth, max_ms = (float(part) for part in args.poll.split(","))
        schedule = PollSchedule(first_ms=first_ms, growth=growth, max_ms=max_ms)
    else:
        schedule = PollSchedule.from_run_js()
    log_path = OUT / "stack.log"
    with open(log_path, "wb") as log:
        prepare(env, log)
        stack = subprocess.Popen(
            ["scripts/run.sh"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        wait_healthy(base, stack)
        session = login(base)
        for i in range(args.warmup):
            one_plan(session, base, schedule, -1 - i)
            time.sleep(args.gap_s)
        samples = []
        for i in range(args.plans):
            samples.append(one_plan(session, base, schedule, i))
            time.sleep(args.gap_s)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(stack.pid, signal.SIGTERM)  # supervise.py stops web, worker and beat
        try:
            stack.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(stack.pid, signal.SIGKILL)
            stack.wait(timeout=10)
        shutil.rmtree(var_dir, ignore_errors=True)

    summary = summarise(samples)
    results = {
        "label": args.label,
        "plans": args.plans,
        "gap_s": args.gap_s,
        "poll_schedule": asdict(schedule),
        "load_average_after": os.getloadavg(),
        "cpus": os.cpu_count(),
        "summary": summary,
        "samples": [asdict(s) for s in samples],
    }
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    print(f"submit -> finished plan page, embedded stack, {args.plans} plans ({args.label or 'unlabelled'})")
    print(f"{'':18}{'median':>9}{'p90':>9}{'max':>9}")
    for name, row in summary.items():
        print(f"{name:18}{row['median']:9.3f}{row['p90']:9.3f}{row['max']:9.3f}")
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f}; stretch = wall/CPU time of a busy loop")
    print(f"results: {OUT / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
