"""Plotly figures for the plan page, built server-side from the plan JSON.

Each builder returns a figure as JSON (or None when the plan lacks the data), and the page
draws it with the plotly.min.js served from static/vendor. Building figures here keeps the
numbers and their labels in Python, next to the presenters, not in page scripts.
"""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go

from .presenters import lookup

LAYOUT = {
    "margin": {"l": 60, "r": 20, "t": 40, "b": 50},
    "font": {"family": "system-ui, sans-serif", "size": 13},
    "paper_bgcolor": "white",
    "plot_bgcolor": "white",
    "hovermode": "closest",
    "legend": {"orientation": "h", "y": -0.2},
}


def _figure(fig: go.Figure, title: str, **layout: Any) -> str:
    fig.update_layout(title={"text": title, "x": 0}, **LAYOUT, **layout)
    fig.update_xaxes(gridcolor="#e6e9ef", zeroline=False)
    fig.update_yaxes(gridcolor="#e6e9ef", zeroline=False)
    return fig.to_json()


def frontier_chart(result: dict) -> str | None:
    """Time to train vs GPU count, one line per system, with the deadline and the chosen plan."""
    by_system = lookup(result, "training.frontier_by_system") or {}
    if not by_system and lookup(result, "training.frontier"):
        by_system = {lookup(result, "cluster.system") or "chosen system": lookup(result, "training.frontier")}
    if not by_system:
        return None
    fig = go.Figure()
    for system, points in sorted(by_system.items()):
        points = sorted(points, key=lambda point: point["gpus"])
        fig.add_trace(go.Scatter(
            x=[p["gpus"] for p in points], y=[p["days"] for p in points], mode="lines+markers", name=system,
            customdata=[[p.get("mfu", 0) * 100, p.get("days_ideal", p["days"])] for p in points],
            hovertemplate="%{x:,} GPUs: %{y:,.1f} days expected (%{customdata[1]:,.1f} ideal), "
                          "MFU %{customdata[0]:.1f}%<extra>" + system + "</extra>",
        ))
    deadline = lookup(result, "request.training.deadline_days")
    if deadline:
        # Shapes on a log axis are placed in log10 units.
        fig.add_hline(y=math.log10(deadline), line_dash="dash", line_color="#c62828",
                      annotation_text=f"deadline {deadline:g} d")
    chosen_gpus, chosen_days = lookup(result, "training.gpus"), lookup(result, "training.days")
    if chosen_gpus and chosen_days:
        fig.add_trace(go.Scatter(x=[chosen_gpus], y=[chosen_days], mode="markers", name="chosen plan",
                                 marker={"size": 14, "symbol": "star", "color": "#1d2430"}))
    return _figure(fig, "Time to train vs GPUs", xaxis_title="GPUs", yaxis_title="days (expected, with failures)",
                   xaxis_type="log", yaxis_type="log")


def power_per_rack_chart(result: dict) -> str | None:
    """kW per rack with the cooling thresholds (air, containment, rear door) drawn in."""
    racks = lookup(result, "racks") or lookup(result, "facility.racks")
    if not isinstance(racks, list) or not racks or not isinstance(racks[0], dict) or "kw" not in str(racks[0]):
        return None
    kw_key = next((key for key in racks[0] if key.endswith("_kw")), None)
    if kw_key is None:
        return None
    names = [str(rack.get("name") or rack.get("id") or index + 1) for index, rack in enumerate(racks)]
    fig = go.Figure(go.Bar(x=names, y=[rack[kw_key] for rack in racks], marker_color="#1f6feb", name="rack kW"))
    assumptions = result.get("assumptions") or {}
    for name, label in (("cooling_air_max_kw", "air"), ("cooling_containment_max_kw", "air + containment"),
                        ("cooling_rdhx_max_kw", "rear-door HX")):
        if name in assumptions:
            fig.add_hline(y=assumptions[name]["value"], line_dash="dot", annotation_text=f"{label} limit")
    return _figure(fig, "Power per rack", xaxis_title="rack", yaxis_title="kW")


def plan_charts(result: dict | None) -> dict[str, str]:
    """Every chart this plan has data for, keyed by a stable id used in the page."""
    if not result:
        return {}
    builders = {"frontier": frontier_chart, "power-per-rack": power_per_rack_chart}
    charts = {}
    for key, build in builders.items():
        figure = build(result)
        if figure:
            charts[key] = figure
    return charts
