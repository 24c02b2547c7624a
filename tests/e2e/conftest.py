"""Browser tests: pytest-playwright driving Debian's chromium against pytest-django's live server."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in the test thread; the ORM would otherwise refuse
# to run there (microsoft/playwright-pytest #29, #46). Browser tests only.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARTEFACTS = Path(__file__).resolve().parents[2] / "test-results" / "screenshots"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.fail(f"Debian's chromium is not installed at {CHROMIUM}: run scripts/system-deps.sh (make test does).")
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
        ],
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1366, "height": 900}, "accept_downloads": True}


@pytest.fixture
def shot(page):
    """Save a full-page screenshot as a test artefact (test-results/screenshots/NAME.png)."""
    ARTEFACTS.mkdir(parents=True, exist_ok=True)

    def take(name: str) -> Path:
        path = ARTEFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


@pytest.fixture
def logged_in(page, live_server, django_user_model):
    django_user_model.objects.create_user(username="eve", password="a-long-e2e-passphrase")
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("eve")
    page.get_by_label("Password").fill("a-long-e2e-passphrase")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
    return page
