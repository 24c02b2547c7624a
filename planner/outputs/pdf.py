"""PDF rendering with WeasyPrint, from the same Django templates as the pages.

The fetcher only allows file: and data: URLs, so rendering never reaches the network, and the
stylesheet is read from the project's own static folder.
"""

from __future__ import annotations

from django.conf import settings
from django.template.loader import render_to_string
from weasyprint import CSS, HTML
from weasyprint.urls import URLFetcher

PDF_CSS = settings.BASE_DIR / "static" / "css" / "report.css"


def render_pdf(template: str, context: dict) -> bytes:
    html = render_to_string(template, context)
    fetcher = URLFetcher(allowed_protocols={"file", "data"})
    document = HTML(string=html, base_url=str(settings.BASE_DIR), url_fetcher=fetcher)
    return document.write_pdf(stylesheets=[CSS(filename=str(PDF_CSS), url_fetcher=fetcher)])
