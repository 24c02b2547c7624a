"""A `ChartSpec` as a static SVG drawn by matplotlib, for the PDF report (WeasyPrint runs no scripts).

The same specs as the page's plotly charts (planner/outputs/charts.py), so the PDF shows the same series, colours,
ticks, reference lines and names. matplotlib is set up for a server: the Agg backend (no display), its config and
font cache under var/ (MPLCONFIGDIR; the worker never writes to $HOME), DejaVu Sans (shipped with matplotlib, so the
SVG's text measures the same everywhere), text kept as SVG text (`svg.fonttype: none`, so the PDF's text can be
searched and read by a screen reader) and mathtext off (a "$" in a label is a dollar, not a formula). matplotlib
escapes every text it writes into the SVG, so a label cannot inject markup into the report.
"""

from __future__ import annotations

import base64
import io
import os
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from planner.outputs.chart_spec import Axis, ChartSpec, Series

__all__ = ["ChartImage", "chart_svg", "chart_svgs"]

WIDTH_IN = 7.0
LINESTYLES = {
    **{"solid": "-", "dash": "--", "dot": ":", "dashdot": "-."},
    **{"longdash": (0, (8, 3)), "longdashdot": (0, (8, 3, 1, 3))},
}
# chart_spec's marker names (plotly's symbols) as matplotlib's.
MARKERS = {
    **{"circle": "o", "star": "*", "diamond": "D", "square": "s", "triangle-up": "^", "triangle-down": "v"},
    **{"triangle-left": "<", "x": "x", "cross": "P", "pentagon": "p", "hexagon": "h"},
}
STYLE = {
    "font.family": "DejaVu Sans",
    "font.size": 8.5,
    "axes.titlesize": 10.5,
    "axes.titlelocation": "left",
    "axes.edgecolor": "#9aa3b0",
    "axes.labelcolor": "#1d2430",
    "text.color": "#1d2430",
    "xtick.color": "#1d2430",
    "ytick.color": "#1d2430",
    "svg.fonttype": "none",
    "text.parse_math": False,
    "svg.hashsalt": "planner",  # element ids the same on every run (a report renders identically)
}


def _config_dir() -> str:
    """A writable folder for matplotlib's config and font cache: var/matplotlib, else a private temp folder."""
    try:
        from django.conf import settings

        folder = Path(settings.VAR_DIR) / "matplotlib"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        return str(folder)
    except Exception:  # outside Django (a script), or var/ not writable
        return tempfile.mkdtemp(prefix="planner-mpl-")


_figure_class = None


def _figure(width_in: float, height_in: float):
    """A matplotlib Figure with the report's style. matplotlib is imported on first use (it costs about a second;
    the page never needs it) and through `matplotlib.figure`, not pyplot: no global figure manager, no GUI backend,
    so figures built in the worker's threads do not share state. The style is set once, process-wide."""
    global _figure_class
    if _figure_class is None:
        os.environ.setdefault("MPLCONFIGDIR", _config_dir())
        import matplotlib
        from matplotlib.figure import Figure

        matplotlib.rcParams.update(STYLE)
        _figure_class = Figure
    return _figure_class(figsize=(width_in, height_in), layout="constrained")


def _positions(axis: Axis) -> dict[str, int]:
    return {category: index for index, category in enumerate(axis.categories)}


def _bars(ax, spec: ChartSpec, series: Series, bottoms: dict[str, float]) -> None:
    horizontal = series.orientation == "h"
    axis = spec.y if horizontal else spec.x
    where = _positions(axis)
    categories = series.y if horizontal else series.x
    values = series.x if horizontal else series.y
    spots = [where[str(c)] for c in categories]
    starts = [bottoms.get(str(c), 0.0) if spec.barmode == "stack" else 0.0 for c in categories]
    if horizontal:
        ax.barh(spots, values, left=starts, color=series.color, label=series.name, height=0.6)
    else:
        ax.bar(spots, values, bottom=starts, color=series.color, label=series.name, width=0.6)
    for category, start, value, text in zip(categories, starts, values, series.text or [""] * len(spots), strict=True):
        bottoms[str(category)] = start + float(value)
        if text:
            spot = where[str(category)]
            if horizontal:
                ax.annotate(text, (start + value, spot), xytext=(4, 0), textcoords="offset points", va="center")
            else:
                ax.annotate(text, (spot, start + value), xytext=(0, 3), textcoords="offset points", ha="center")


def _line(ax, series: Series) -> None:
    style: dict[str, Any] = {"color": series.color, "label": series.name}
    if series.kind == "marker":
        marker = MARKERS.get(series.marker or "circle", "o")
        ax.plot(
            series.x,
            series.y,
            linestyle="none",
            marker=marker,
            markersize=11 if marker == "*" else 7,
            markeredgecolor="white",
            markeredgewidth=0.6,
            zorder=5,
            **style,
        )
        return
    ax.plot(
        series.x,
        series.y,
        linestyle=LINESTYLES.get(series.dash, "-"),
        linewidth=series.width * 0.75,
        marker=MARKERS.get(series.marker, "") if series.marker else "",
        markersize=4.5,
        **style,
    )


def _axis(ax, which: str, axis: Axis) -> None:
    set_scale, set_ticks, set_lim, set_label = (
        (ax.set_xscale, ax.set_xticks, ax.set_xlim, ax.set_xlabel)
        if which == "x"
        else (ax.set_yscale, ax.set_yticks, ax.set_ylim, ax.set_ylabel)
    )
    if axis.categories:
        set_ticks(range(len(axis.categories)), list(axis.categories))
        set_lim(-0.6, len(axis.categories) - 0.4)
        if which == "y":
            ax.invert_yaxis()  # the first category on top, as on the page
    else:
        if axis.log:
            set_scale("log")
        if axis.ticks:
            set_ticks([v for v, _ in axis.ticks], [t for _, t in axis.ticks])
            (ax.xaxis if which == "x" else ax.yaxis).set_minor_locator(_null_locator())
        if axis.range:
            set_lim(*axis.range)
    set_label(axis.title)


def _null_locator():
    from matplotlib.ticker import NullLocator

    return NullLocator()


def _legend_columns(spec: ChartSpec) -> int:
    """As many columns as the longest name allows within the chart's width (about 95 characters at 7.5 pt)."""
    names = [s.name for s in spec.series] + [line.name for line in spec.lines]
    longest = max((len(name) for name in names), default=1) + 6  # the line sample before each name
    return max(1, min(len(names), 95 // longest, 3))


def chart_svg(spec: ChartSpec) -> str:
    """The chart as SVG markup (the <svg> element alone, for inlining in the report's HTML)."""
    fig = _figure(WIDTH_IN, max(2.8, spec.height_px / 100))
    ax = fig.subplots()
    bottoms: dict[str, float] = {}
    for series in spec.series:
        _bars(ax, spec, series, bottoms) if series.kind == "bar" else _line(ax, series)
    for line in spec.lines:
        draw = ax.axhline if line.axis == "y" else ax.axvline
        draw(line.value, color=line.color, linestyle=LINESTYLES[line.dash], linewidth=1.3, label=line.name)
    _axis(ax, "x", spec.x)
    _axis(ax, "y", spec.y)
    ax.set_title(spec.title)
    ax.grid(True, color="#e6e9ef", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    # Below the axes and outside them (constrained layout makes room), so it never covers a tick label or a bar.
    fig.legend(loc="outside lower left", ncol=_legend_columns(spec), frameon=False, fontsize=7.5, handlelength=2.5)
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})  # constrained layout already fits every label
    markup = buffer.getvalue()
    return markup[markup.index("<svg") :]


class ChartImage(NamedTuple):
    """One chart for the report: its title and SVG markup. The report embeds it as an image (`data_uri`), not inline,
    so the ids matplotlib gives its elements stay inside each SVG and WeasyPrint reads it with its SVG renderer."""

    title: str
    svg: str

    @property
    def data_uri(self) -> str:
        return "data:image/svg+xml;base64," + base64.b64encode(self.svg.encode("utf-8")).decode("ascii")


def chart_svgs(specs: list[ChartSpec]) -> list[ChartImage]:
    """(title, SVG markup) for each chart, in the page's order."""
    return [ChartImage(spec.title, chart_svg(spec)) for spec in specs]
