"""A `ChartSpec` as a plotly.js figure (plain JSON: data and layout), drawn on the page by static/js/charts.js.

Built as plain dicts rather than through plotly's Python figure classes: the spec already holds every value and
label, and the page then needs only the trace types the basic plotly.js bundle provides (`TRACE_TYPES`).

Coordinates on log axes: plotly.js places shapes (our reference lines) and tick values in data units, but an axis
`range` (and annotations, which we do not use) in log10 units; the deadline of 90 days is therefore y0 = y1 = 90,
and the range is log10 of the spec's data range (tests/e2e/test_charts.py measures the drawn line against the axis).
"""

from __future__ import annotations

import json
import math
from typing import Any

from planner.outputs.chart_spec import Axis, ChartSpec, RefLine, Series

__all__ = ["TRACE_TYPES", "figure", "figure_json"]

# What the builders below emit; every one must be in plotly.js-basic (scatter, bar, pie).
TRACE_TYPES = frozenset({"scatter", "bar"})
FONT = "DejaVu Sans, system-ui, sans-serif"
GRID = "#e6e9ef"


def _br(text: str) -> str:
    return text.replace("\n", "<br>")


def _trace(series: Series) -> dict[str, Any]:
    hover = list(series.hover) if series.hover else None
    if series.kind == "bar":
        horizontal = series.orientation == "h"
        trace: dict[str, Any] = {
            "type": "bar",
            "name": series.name,
            "orientation": series.orientation,
            "x": list(series.x) if horizontal else [_br(str(v)) for v in series.x],
            "y": [_br(str(v)) for v in series.y] if horizontal else list(series.y),
            "marker": {"color": series.color},
        }
        if series.text:
            trace.update(text=list(series.text), textposition="outside", cliponaxis=False)
        else:
            trace["textposition"] = "none"
    else:
        trace = {
            "type": "scatter",
            "name": series.name,
            "x": list(series.x),
            "y": list(series.y),
            "mode": "markers" if series.kind == "marker" else ("lines+markers" if series.marker else "lines"),
            "line": {"color": series.color, "dash": series.dash, "width": series.width},
            "marker": {
                "color": series.color,
                "symbol": series.marker or "circle",
                "size": 15 if series.kind == "marker" else 8,  # shapes told apart (chart_spec.SYMBOLS)
            },
        }
    if hover:
        trace.update(hovertext=hover, hovertemplate="%{hovertext}<extra></extra>")
    return trace


def _axis(axis: Axis, reverse: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "title": {"text": axis.title},
        "gridcolor": GRID,
        "zeroline": False,
        "automargin": True,
        "showline": True,
        "linecolor": "#9aa3b0",
    }
    if axis.categories:
        out.update(type="category", categoryorder="array", categoryarray=[_br(c) for c in axis.categories])
        if reverse:
            out["autorange"] = "reversed"
        return out
    out["type"] = "log" if axis.log else "linear"
    if axis.ticks:
        out.update(tickmode="array", tickvals=[v for v, _ in axis.ticks], ticktext=[t for _, t in axis.ticks])
    if axis.range:
        low, high = axis.range
        out["range"] = [math.log10(low), math.log10(high)] if axis.log else [low, high]
    return out


def _shape(line: RefLine) -> dict[str, Any]:
    """A full-width (or full-height) line at the data value, listed in the legend under its name."""
    across, along = ("x", "y") if line.axis == "y" else ("y", "x")
    return {
        "type": "line",
        f"{across}ref": "paper",
        f"{across}0": 0,
        f"{across}1": 1,
        f"{along}ref": along,
        f"{along}0": line.value,
        f"{along}1": line.value,
        "line": {"color": line.color, "dash": line.dash, "width": 2},
        "name": line.name,
        "showlegend": True,
        "layer": "above",
    }


def figure(spec: ChartSpec) -> dict[str, Any]:
    """The plotly figure (data + layout) for one spec."""
    horizontal = any(s.kind == "bar" and s.orientation == "h" for s in spec.series)
    layout = {
        "title": {"text": spec.title, "x": 0, "xanchor": "left", "font": {"size": 16}},
        "font": {"family": FONT, "size": 13, "color": "#1d2430"},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "hovermode": "closest",
        # The legend takes height from the plot: about one row per entry beyond two (long option names wrap).
        "height": spec.height_px + 18 * max(0, len(spec.series) + len(spec.lines) - 2),
        "margin": {"l": 70, "r": 30, "t": 50, "b": 60},
        # At the foot of the figure, measured from the container: plotly then grows the bottom margin to fit it, so
        # it never lies over the x axis's title or tick labels (a legend placed by paper fraction can).
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "yref": "container", "y": 0, "yanchor": "bottom"},
        "xaxis": _axis(spec.x),
        "yaxis": _axis(spec.y, reverse=horizontal),
        "barmode": "relative" if spec.barmode == "stack" else "group",
        "shapes": [_shape(line) for line in spec.lines],
    }
    if horizontal:
        layout["yaxis"]["gridcolor"] = "rgba(0,0,0,0)"
    return {"data": [_trace(s) for s in spec.series], "layout": layout}


def figure_json(spec: ChartSpec) -> str:
    return json.dumps(figure(spec), separators=(",", ":"))
