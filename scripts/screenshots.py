"""`make screenshots`: the README's pictures of the main pages, taken from a real browser on a throw-away database.

Why a script and not the tests: the pictures are documentation, refreshed on demand; the browser tests check what
the pages show. This script makes a temporary var/ folder (database, broker, static files), plans two example
requests in-process with the fixture prices, serves the app on a loopback port and has Debian's chromium
(playwright) photograph the plan page (top and whole), the plan list, the new-plan form and the PDF's first page
(pdftoppm). Output: docs/screenshots/*.png. Nothing outside the temporary folder and docs/screenshots is written.

Usage: .venv/bin/python scripts/screenshots.py [--out DIR] [--width 1440] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
PASSWORD = "a-long-screenshot-passphrase"

EXAMPLES = {
    "Llama 3 70B on 15T tokens in 90 days": {
        "workload": "training",
        "model": {"preset": "llama-3-70b"},
        "training": {"tokens": 15e12, "deadline_days": 90},
        "hardware": {"system": "auto"},
    },
    "Serve Llama 3 70B at 20 requests/s": {
        "workload": "inference",
        "model": {"preset": "llama-3-70b"},
        "inference": {"requests_per_s": 20, "prompt_tokens": 1000, "output_tokens": 250},
    },
}


def _setup(var_dir: Path, fresh: bool = True) -> None:
    os.environ["PLANNER_VAR_DIR"] = str(var_dir)
    os.environ["STATIC_ROOT"] = str(var_dir / "static")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    if fresh:  # a reused folder has its catalog and prices already (loading the prices takes a minute)
        call_command("load_catalog", verbosity=0)
        call_command("load_prices", verbosity=0)


def _plans() -> list[int]:
    from django.contrib.auth import get_user_model

    from planner.services import plan_create_synchronous

    users = get_user_model().objects
    users.filter(username="demo").delete()
    user = users.create_user(username="demo", password=PASSWORD)
    return [plan_create_synchronous(owner=user, request_data=req, name=name).pk for name, req in EXAMPLES.items()]


def _serve():
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test.testcases import LiveServerThread

    server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    if server.error:
        raise server.error
    return server, f"http://127.0.0.1:{server.port}"


def _pdf_first_page(pdf: bytes, out: Path, work: Path) -> None:
    source = work / "report.pdf"
    source.write_bytes(pdf)
    subprocess.run(
        ["pdftoppm", "-png", "-r", "110", "-f", "1", "-l", "1", "-singlefile", str(source), str(out.with_suffix(""))],
        check=True,
    )


def take(out: Path, width: int, work: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    training, _serving = _plans()
    server, base = _serve()
    written = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": width, "height": 1000})
            page.goto(f"{base}/accounts/login/")
            page.get_by_label("Username").fill("demo")
            page.get_by_label("Password").fill(PASSWORD)
            page.get_by_role("button", name="Log in").click()
            page.wait_for_url(f"{base}/")
            shots = {
                "plan.png": (f"/plans/{training}/", False),
                "plan-full.png": (f"/plans/{training}/", True),
                "plan-list.png": ("/", False),
                "plan-form.png": ("/plans/new/", False),
            }
            for name, (url, full) in shots.items():
                page.goto(base + url)
                page.wait_for_load_state("networkidle")
                page.screenshot(path=str(out / name), full_page=full)
                written.append(out / name)
            response = page.request.get(f"{base}/plans/{training}/bom.pdf", timeout=180_000)  # WeasyPrint: seconds
            _pdf_first_page(response.body(), out / "report-page1.png", work)
            written.append(out / "report-page1.png")
            browser.close()
    finally:
        server.terminate()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--width", type=int, default=1440)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (database, PDF)")
    parser.add_argument("--reuse", type=Path, help="a folder kept by --keep: its database, catalog and prices")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.reuse or Path(tempfile.mkdtemp(prefix="planner-screens-"))
    try:
        _setup(work / "var", fresh=args.reuse is None)
        for path in take(args.out, args.width, work):
            print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    finally:
        if args.keep or args.reuse:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
