"""PDF rendering with WeasyPrint, from the same Django templates as the pages.

The fetcher reads only data: URLs and files inside the project's static folders, so rendering never reaches the
network and a plan's text cannot make it read another file of the machine (a hostile `file:///etc/...` URL in
the HTML is refused, whatever put it there).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.template.loader import render_to_string
from weasyprint import CSS, HTML
from weasyprint.urls import URLFetcher

PDF_CSS = settings.BASE_DIR / "static" / "css" / "report.css"


def _static_roots() -> tuple[Path, ...]:
    roots = [settings.BASE_DIR / "static"]
    if getattr(settings, "STATIC_ROOT", None):
        roots.append(Path(settings.STATIC_ROOT))
    return tuple(root.resolve() for root in roots)


class StaticOnlyFetcher(URLFetcher):
    """data: URLs and files under the static folders; everything else is refused."""

    def __init__(self) -> None:
        super().__init__(allowed_protocols={"file", "data"})
        self.roots = _static_roots()

    def fetch(self, url, headers=None):
        parts = urlsplit(url)
        if parts.scheme == "file":
            path = Path(unquote(parts.path)).resolve()
            if not any(path.is_relative_to(root) for root in self.roots):
                raise ValueError(f"the PDF may only read the planner's static files, not {path}")
        return super().fetch(url, headers)


def report_chart_images(view) -> list:
    """The plan's charts as static SVG images for the report (`chart_images`: title and SVG markup of each), drawn by
    matplotlib from the same chart specs as the page's plotly charts."""
    from .chart_static import chart_svgs  # matplotlib is imported only when a report is rendered
    from .charts import chart_specs

    return chart_svgs(chart_specs(view)) if view else []


def render_pdf(template: str, context: dict) -> bytes:
    if "view" in context and "chart_images" not in context:  # the plan report (presenters.report_context)
        context = {**context, "chart_images": report_chart_images(context["view"])}
    html = render_to_string(template, context)
    fetcher = StaticOnlyFetcher()
    document = HTML(string=html, base_url=str(settings.BASE_DIR / "static"), url_fetcher=fetcher)
    return document.write_pdf(stylesheets=[CSS(filename=str(PDF_CSS), url_fetcher=fetcher)])
