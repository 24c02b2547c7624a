"""The PDF renderer reads only data: URLs and the planner's static files (issue 15: it allowed any file:// URL)."""

from __future__ import annotations

import pytest
from django.conf import settings

from planner.outputs.pdf import StaticOnlyFetcher


@pytest.fixture
def fetcher() -> StaticOnlyFetcher:
    return StaticOnlyFetcher()


def test_static_files_and_data_urls_are_read(fetcher):
    css = (settings.BASE_DIR / "static" / "css" / "report.css").resolve()
    assert fetcher.fetch(css.as_uri()) is not None
    assert fetcher.fetch("data:text/plain;base64,aGk=") is not None


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "file:///etc/hostname",
        (settings.BASE_DIR / "static" / ".." / "manage.py").as_uri(),  # .. out of the static folder
        f"file://{settings.BASE_DIR}/static/%2e%2e/manage.py",  # the same, percent-encoded
        "http://127.0.0.1:8000/healthz",
        "https://example.com/font.woff2",
    ],
)
def test_everything_else_is_refused(fetcher, url):
    with pytest.raises(ValueError):
        fetcher.fetch(url)
