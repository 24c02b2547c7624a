"""Plotly figures for the plan page, built server-side from the plan JSON.

Each builder returns a figure as JSON (or None when the plan lacks the data), and the page
draws it with the plotly.min.js served from static/vendor. Building figures here keeps the
numbers and their labels in Python, next to the presenters, not in page scripts.
"""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go

from planner.presenters import lookup

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
    """kW of each distinct rack build, with the cooling thresholds (air, containment, rear door) drawn in."""
    layout = lookup(result, "racks.layout")
    if not layout:
        return None
    builds: dict[tuple, dict] = {}
    for rack in layout:
        key = (rack.get("role"), round(float(rack.get("kw", 0)), 1), rack.get("cooling"))
        builds.setdefault(key, {"count": 0, "ids": []})
        builds[key]["count"] += 1
        builds[key]["ids"].append(rack["id"])
    keys = sorted(builds, key=lambda key: -key[1])
    fig = go.Figure(go.Bar(
        x=[f"{role} {kw:g} kW ({cooling})" for role, kw, cooling in keys], y=[kw for _, kw, _ in keys],
        text=[f"x {builds[key]['count']}" for key in keys], textposition="outside", marker_color="#1f6feb",
        hovertemplate="%{y:.1f} kW per rack, %{text} racks<extra></extra>", name="kW per rack",
    ))
    assumptions = result.get("assumptions") or {}
    for name, label in (("cooling_air_max_kw", "air"), ("cooling_containment_max_kw", "air + containment"),
                        ("cooling_rdhx_max_kw", "rear-door HX")):
        if name in assumptions:
            fig.add_hline(y=assumptions[name]["value"], line_dash="dot", line_color="#9a6700",
                          annotation_text=f"{label} up to {assumptions[name]['value']:g} kW")
    budget = lookup(result, "request.hardware.rack_kw")
    if budget:
        fig.add_hline(y=budget, line_color="#c62828", annotation_text=f"rack budget {budget:g} kW")
    return _figure(fig, "Power per rack and cooling thresholds", yaxis_title="kW per rack", showlegend=False)


def cost_over_time_chart(result: dict) -> str | None:
    """Cumulative cost, on-prem vs each cloud option, with where on-prem becomes cheaper."""
    cumulative = lookup(result, "costs.comparison.cumulative")
    if not cumulative or not cumulative.get("series"):
        return None
    months = cumulative["months"]
    fig = go.Figure()
    for series in cumulative["series"]:
        values = [float(value) for value in series["usd"]]
        dash = "solid" if series.get("option") == "onprem" else "dot"
        fig.add_trace(go.Scatter(x=months, y=values, mode="lines", name=series["label"], line={"dash": dash},
                                 hovertemplate="month %{x}: $%{y:,.0f}<extra>" + series["label"] + "</extra>"))
    onprem = next((s for s in cumulative["series"] if s.get("option") == "onprem"), None)
    if onprem:
        for series in cumulative["series"]:
            if series is onprem:
                continue
            crossing = next((m for m, own, rent in zip(months, onprem["usd"], series["usd"], strict=False)
                             if m > 0 and float(own) <= float(rent)), None)
            if crossing is not None:
                fig.add_trace(go.Scatter(x=[crossing], y=[float(onprem["usd"][months.index(crossing)])],
                                         mode="markers", marker={"size": 11, "symbol": "diamond"},
                                         name=f"break-even vs {series['label']}: month {crossing}"))
    return _figure(fig, f"Cost over time at {float(cumulative.get('utilization', 0)) * 100:.0f}% utilisation",
                   xaxis_title="months", yaxis_title="cumulative USD")


def cost_breakdown_chart(result: dict) -> str | None:
    """Capex by BOM category and yearly opex by kind."""
    bom = result.get("bom") or []
    opex = lookup(result, "costs.onprem.opex_breakdown_usd_per_year") or {}
    by_category: dict[str, float] = {}
    for line in bom:
        if line.get("extended_price_usd"):
            by_category[line.get("category", "other")] = by_category.get(line.get("category", "other"), 0.0) + float(
                line["extended_price_usd"])
    install = lookup(result, "costs.onprem.install_usd")
    if install:
        by_category["install"] = float(install)
    if not by_category and not opex:
        return None
    fig = go.Figure()
    for category, usd in sorted(by_category.items(), key=lambda item: -item[1]):
        fig.add_trace(go.Bar(x=["capex"], y=[usd], name=category,
                             hovertemplate="%{y:$,.0f}<extra>" + category + "</extra>"))
    for kind, usd in opex.items():
        if float(usd) > 0:
            fig.add_trace(go.Bar(x=["opex per year"], y=[float(usd)], name=f"opex: {kind}",
                                 hovertemplate="%{y:$,.0f}<extra>" + kind + "</extra>"))
    return _figure(fig, "Cost breakdown", barmode="stack", yaxis_title="USD")


def throughput_latency_chart(result: dict) -> str | None:
    """Tokens/s per GPU vs time per output token as the batch grows, with the TPOT target."""
    curve = lookup(result, "inference.curve")
    if not curve:
        return None
    fig = go.Figure(go.Scatter(
        x=[point["tpot_ms"] for point in curve], y=[point["tokens_per_s_per_gpu"] for point in curve],
        mode="lines+markers", name="operating points", text=[f"batch {point['batch']}" for point in curve],
        hovertemplate="%{text}: %{x:.1f} ms/token, %{y:,.0f} tok/s per GPU<extra></extra>",
    ))
    target = lookup(result, "request.inference.tpot_ms")
    if target:
        fig.add_vline(x=target, line_dash="dash", line_color="#c62828", annotation_text=f"TPOT target {target:g} ms")
    return _figure(fig, "Throughput vs latency (one replica)", xaxis_title="time per output token (ms)",
                   yaxis_title="output tokens/s per GPU")


def plan_charts(result: dict | None) -> dict[str, str]:
    """Every chart this plan has data for, keyed by a stable id used in the page."""
    if not result:
        return {}
    builders = {
        "cost-over-time": cost_over_time_chart,
        "cost-breakdown": cost_breakdown_chart,
        "frontier": frontier_chart,
        "throughput-latency": throughput_latency_chart,
        "power-per-rack": power_per_rack_chart,
    }
    charts = {}
    for key, build in builders.items():
        figure = build(result)
        if figure:
            charts[key] = figure
    return charts
