"""Plotly figures for the plan page, built server-side from the stored plan (through `PlanView`).

Each builder returns a figure as JSON (or None when the plan lacks the data), and the page
draws it with the plotly.min.js served from static/vendor. Building figures here keeps the
numbers and their labels in Python, next to the plan view, not in page scripts. Builders read only the
view: every figure is the one the plan stored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from planner.adapter import PlanResult
from planner.outputs.plan_view import PlanView, plan_view

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


def frontier_chart(view: PlanView) -> str | None:
    """Time to train vs GPU count, one line per system, with the deadline and the chosen plan."""
    frontier = view.frontier
    if frontier is None:
        return None
    fig = go.Figure()
    for system, points in sorted(frontier.by_system.items()):
        points = sorted(points, key=lambda point: point.gpus)
        fig.add_trace(
            go.Scatter(
                x=[p.gpus for p in points],
                y=[p.days for p in points],
                mode="lines+markers",
                name=system,
                customdata=[[p.mfu * 100, p.days_ideal] for p in points],
                hovertemplate="%{x:,} GPUs: %{y:,.1f} days expected (%{customdata[1]:,.1f} ideal), "
                "MFU %{customdata[0]:.1f}%<extra>" + system + "</extra>",
            )
        )
    deadline = frontier.deadline_days
    if deadline:
        # Shapes on a log axis are placed in log10 units.
        fig.add_hline(
            y=math.log10(deadline), line_dash="dash", line_color="#c62828", annotation_text=f"deadline {deadline:g} d"
        )
    if frontier.chosen_gpus and frontier.chosen_days:
        fig.add_trace(
            go.Scatter(
                x=[frontier.chosen_gpus],
                y=[frontier.chosen_days],
                mode="markers",
                name="chosen plan",
                marker={"size": 14, "symbol": "star", "color": "#1d2430"},
            )
        )
    return _figure(
        fig,
        "Time to train vs GPUs",
        xaxis_title="GPUs",
        yaxis_title="days (expected, with failures)",
        xaxis_type="log",
        yaxis_type="log",
    )


def power_per_rack_chart(view: PlanView) -> str | None:
    """kW of each distinct rack build, with the cooling thresholds (air, containment, rear door) drawn in."""
    racks = view.racks
    if racks is None:
        return None
    builds: dict[tuple, dict] = {}
    for rack in racks.racks:
        key = (rack.role, round(rack.kw, 1), rack.cooling)
        builds.setdefault(key, {"count": 0, "ids": []})
        builds[key]["count"] += 1
        builds[key]["ids"].append(rack.id)
    keys = sorted(builds, key=lambda key: -key[1])
    fig = go.Figure(
        go.Bar(
            x=[f"{role} {kw:g} kW ({cooling})" for role, kw, cooling in keys],
            y=[kw for _, kw, _ in keys],
            text=[f"x {builds[key]['count']}" for key in keys],
            textposition="outside",
            marker_color="#1f6feb",
            hovertemplate="%{y:.1f} kW per rack, %{text} racks<extra></extra>",
            name="kW per rack",
        )
    )
    for label, kw in racks.cooling_thresholds_kw:
        fig.add_hline(y=kw, line_dash="dot", line_color="#9a6700", annotation_text=f"{label} up to {kw:g} kW")
    if racks.rack_budget_kw:
        fig.add_hline(
            y=racks.rack_budget_kw, line_color="#c62828", annotation_text=f"rack budget {racks.rack_budget_kw:g} kW"
        )
    return _figure(fig, "Power per rack and cooling thresholds", yaxis_title="kW per rack", showlegend=False)


def cost_over_time_chart(view: PlanView) -> str | None:
    """Cumulative cost, on-prem vs each cloud option, with where on-prem becomes cheaper."""
    cumulative = view.cost_over_time
    if cumulative is None:
        return None
    months = list(cumulative.months)
    fig = go.Figure()
    for series in cumulative.series:
        dash = "solid" if series.option == "onprem" else "dot"
        fig.add_trace(
            go.Scatter(
                x=months,
                y=[float(usd) for usd in series.usd],
                mode="lines",
                name=series.label,
                line={"dash": dash},
                hovertemplate="month %{x}: $%{y:,.0f}<extra>" + series.label + "</extra>",
            )
        )
    onprem = next((s for s in cumulative.series if s.option == "onprem"), None)
    if onprem:
        for series in cumulative.series:
            if series is onprem:
                continue
            # Where the stored on-prem line first meets the stored cloud line: read off the two series.
            crossing = next(
                (m for m, own, rent in zip(months, onprem.usd, series.usd, strict=False) if m > 0 and own <= rent), None
            )
            if crossing is not None:
                fig.add_trace(
                    go.Scatter(
                        x=[crossing],
                        y=[float(onprem.usd[months.index(crossing)])],
                        mode="markers",
                        marker={"size": 11, "symbol": "diamond"},
                        name=f"break-even vs {series.label}: month {crossing}",
                    )
                )
    return _figure(
        fig,
        f"Cost over time at {float(cumulative.utilization) * 100:.0f}% utilisation",
        xaxis_title="months",
        yaxis_title="cumulative USD",
    )


def cost_breakdown_chart(view: PlanView) -> str | None:
    """Capex by BOM category (the stored extended prices) plus install, and yearly opex by kind."""
    breakdown = view.cost_breakdown
    by_category, opex = breakdown.capex_by_category_usd, breakdown.opex_by_kind_usd_per_year
    if not by_category and not opex:
        return None
    fig = go.Figure()
    for category, usd in sorted(by_category.items(), key=lambda item: -item[1]):
        fig.add_trace(
            go.Bar(
                x=["capex"], y=[float(usd)], name=category, hovertemplate="%{y:$,.0f}<extra>" + category + "</extra>"
            )
        )
    for kind, usd in opex.items():
        if usd > 0:
            fig.add_trace(
                go.Bar(
                    x=["opex per year"],
                    y=[float(usd)],
                    name=f"opex: {kind}",
                    hovertemplate="%{y:$,.0f}<extra>" + kind + "</extra>",
                )
            )
    return _figure(fig, "Cost breakdown", barmode="stack", yaxis_title="USD")


def throughput_latency_chart(view: PlanView) -> str | None:
    """Tokens/s per GPU vs time per output token as the batch grows, with the TPOT target."""
    curve = view.serving_curve
    if curve is None:
        return None
    fig = go.Figure(
        go.Scatter(
            x=list(curve.tpot_ms),
            y=list(curve.tokens_per_s_per_gpu),
            mode="lines+markers",
            name="operating points",
            text=[f"batch {batch}" for batch in curve.batches],
            hovertemplate="%{text}: %{x:.1f} ms/token, %{y:,.0f} tok/s per GPU<extra></extra>",
        )
    )
    if curve.tpot_target_ms:
        fig.add_vline(
            x=curve.tpot_target_ms,
            line_dash="dash",
            line_color="#c62828",
            annotation_text=f"TPOT target {curve.tpot_target_ms:g} ms",
        )
    return _figure(
        fig,
        "Throughput vs latency (one replica)",
        xaxis_title="time per output token (ms)",
        yaxis_title="output tokens/s per GPU",
    )


def plan_charts(result: Mapping[str, Any] | PlanResult | PlanView | None) -> dict[str, str]:
    """Every chart this plan has data for, keyed by a stable id used in the page."""
    view = plan_view(result)
    if not view:
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
        figure = build(view)
        if figure:
            charts[key] = figure
    return charts
