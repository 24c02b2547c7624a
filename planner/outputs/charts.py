"""The plan's charts as chart-neutral specs (`chart_spec.ChartSpec`), one per question a reader asks.

- How long does training take on how many GPUs of each system, and where is the deadline? (frontier)
- What does each option cost over time, and when does owning pay off against each rental? (cost over time)
- What does the money go to? (cost breakdown)
- How much power does each rack draw against the limits of each cooling method? (power per rack)
- How much throughput does a replica give at what latency? (serving)

Every figure is read from the stored plan through `PlanView` (the typed result); nothing here re-derives physics or
money. The page draws the specs with plotly (`chart_plotly`), the PDF with matplotlib (`chart_static`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from planner.adapter import PlanResult
from planner.outputs.chart_spec import (
    PALETTE,
    REFERENCE_COLOR,
    Axis,
    ChartSpec,
    RefLine,
    Series,
    linear_ticks,
    log_ticks,
    money,
    number,
    series_style,
)
from planner.outputs.formatting import money as page_money  # figures as the page writes them: "$1.00M"
from planner.outputs.plan_view import PlanView, plan_view
from planner.outputs.view_models import FrontierPoint

__all__ = ["PageChart", "chart_specs", "plan_charts"]

# Stored keys -> the words a reader knows.
COOLING_NAMES = {
    "air": "air",
    "air_containment": "air + containment",
    "rdhx": "rear-door heat exchanger",
    "liquid": "direct liquid",
}
# Each cooling method keeps one colour: its racks' bars and its limit line.
COOLING_COLORS = {"air": PALETTE[0], "air_containment": PALETTE[2], "rdhx": PALETTE[1], "liquid": PALETTE[3]}
# The assumption behind each limit line (the view's cooling thresholds, in the same order) -> its method.
THRESHOLD_METHODS = ("air", "air_containment", "rdhx")
PURCHASE_NAMES = {
    "on_demand": "on-demand",
    "reserved_1y": "1-year reserved",
    "reserved_3y": "3-year reserved",
    "capacity_block": "capacity block",
    "savings_plan_1y": "1-year savings plan",
    "savings_plan_3y": "3-year savings plan",
    "spot": "spot",
}
OPEX_NAMES = {
    "energy_usd": "energy",
    "colocation_usd": "colocation",
    "maintenance_usd": "maintenance",
    "staff_usd": "staff",
    "insurance_usd": "insurance",
}


def system_name(system_id: str) -> str:
    """A catalog id as it is printed on the product ("dgx-h100" -> "DGX H100", "gb200-nvl72" -> "GB200 NVL72")."""
    return " ".join(part.upper() for part in system_id.split("-")) if system_id else "chosen system"


def human(key: str) -> str:
    """A stored key in words ("air_containment" -> "air containment"), for keys without a name above."""
    return key.replace("_", " ")


def _log_axis(title: str, values: list[float], unit: str = "") -> Axis:
    """A log axis whose 1-2-5 ticks and range cover every value (data, reference lines)."""
    low, high = min(values), max(values)
    ticks = log_ticks(low, high, unit)
    first, last = (ticks[0][0], ticks[-1][0]) if ticks else (low, high)
    pad = 1.08
    return Axis(title, log=True, ticks=ticks, range=(min(low, first) / pad, max(high, last) * pad))


def _linear_axis(title: str, values: list[float], label=number, step: float | None = None) -> Axis:
    ticks = linear_ticks(min(values), max(values), label, step=step)
    return Axis(title, ticks=ticks, range=(ticks[0][0], ticks[-1][0]))


# ------------------------------------------------------------------------------------------ the charts


def frontier_spec(view: PlanView) -> ChartSpec | None:
    """Expected days to train vs GPUs, one line per system, the chosen plan and the deadline at its true value."""
    frontier = view.frontier
    if frontier is None:
        return None
    series, xs, ys = [], [], []
    for index, (system, points) in enumerate(sorted(frontier.by_system.items())):
        points = sorted(points, key=lambda point: point.gpus)
        style = series_style(index)
        name = system_name(system)
        series.append(
            Series(
                name=name,
                x=tuple(float(p.gpus) for p in points),
                y=tuple(p.days for p in points),
                color=style.color,
                dash=style.dash,
                marker=style.marker,
                hover=tuple(
                    f"{name}: {p.gpus:,} GPUs, {number(p.days)} days expected "
                    f"({number(p.days_ideal)} days steady state), MFU {p.mfu * 100:.0f}%"
                    f"{_batch_hover(p, frontier.requested_batch_sequences)}"
                    for p in points
                ),
            )
        )
        xs += [p.gpus for p in points]
        ys += [p.days for p in points]
    if frontier.chosen_gpus and frontier.chosen_days:
        label = f"chosen plan: {frontier.chosen_gpus:,} GPUs, {number(frontier.chosen_days)} days"
        series.append(
            Series(
                label,
                (float(frontier.chosen_gpus),),
                (frontier.chosen_days,),
                kind="marker",
                color=REFERENCE_COLOR,
                marker="star",
                hover=(label,),
            )
        )
        xs.append(frontier.chosen_gpus)
        ys.append(frontier.chosen_days)
    lines = ()
    if frontier.deadline_days:
        lines = (RefLine("y", float(frontier.deadline_days), f"deadline {number(frontier.deadline_days)} days"),)
        ys.append(frontier.deadline_days)
    return ChartSpec(
        key="frontier",
        title="Time to train vs GPUs, per system",
        x=_log_axis("GPUs (log scale)", xs),
        y=_log_axis("days to train (log scale)", ys, "d"),
        series=tuple(series),
        lines=lines,
        note="Each point is the best layout the search found for that GPU count; days are the expected whole run, "
        "failures and restarts included. Where no layout at a count trains the requested batch exactly, the point "
        "trains on the nearest batch one can (its label says which); a larger batch runs more efficiently, so such a "
        "point can come out faster than a larger count that trains the batch as requested.",
    )


def _batch_hover(point: FrontierPoint, requested: int | None) -> str:
    """The point's batch when it is not the one requested (a count no layout divides it at)."""
    if not point.batch_sequences or not requested or point.batch_sequences == requested:
        return ""
    change = point.batch_sequences / requested - 1.0
    return f", batch {point.batch_sequences:,} sequences ({change:+.1%} on the {requested:,} requested)"


def cost_over_time_spec(view: PlanView) -> ChartSpec | None:
    """Cumulative spend of owning vs renting the same work, month by month, with each break-even month."""
    comparison = view.costs.comparison if view.costs else None
    cumulative = comparison.cumulative if comparison else None
    if cumulative is None or not cumulative.series:
        return None
    months = tuple(float(m) for m in cumulative.months)
    series, markers, values = [], [], []
    for index, stored in enumerate(cumulative.series):
        usd = tuple(float(v) for v in stored.usd)
        values += usd
        name = "On-prem: capex, then running costs" if stored.option == "onprem" else stored.label
        color, dash, _marker = series_style(index)  # a line of 36-120 months: no marker on every point
        series.append(
            Series(
                name,
                months,
                usd,
                color=color,
                dash=dash,
                width=3.0 if stored.option == "onprem" else 2.0,
                hover=tuple(f"{name}, month {m:.0f}: {money(v)} spent" for m, v in zip(months, usd, strict=True)),
            )
        )
        month = stored.break_even_month  # None for on-prem, a rental never overtaken, a plan stored before
        if month is not None:
            at_usd = _on_line(months, usd, month)
            # The legend names only the month (a long option name would run off the chart); the marker's colour is
            # its option's line, and the hover names the option in full.
            label = f"owning pays off: month {month:.1f}"
            markers.append(
                Series(
                    label,
                    (month,),
                    (at_usd,),
                    kind="marker",
                    color=color,
                    marker="diamond",
                    hover=(f"{label} vs {name}, {money(at_usd)} spent either way",),
                )
            )
    return ChartSpec(
        key="cost-over-time",
        title=f"Cumulative cost over {len(months) // 12} years at {float(cumulative.utilization):.0%} utilisation",
        x=_linear_axis("months from purchase", list(months), lambda m: f"{m:.0f}", step=12.0),
        y=_linear_axis("cumulative spend (USD)", values, money),
        series=tuple(series + markers),
        note=(
            f"The same work as the owned {cumulative.gpus:,} GPUs, each cloud option at its cheapest obtainable row; "
            "running costs nominal (escalated), no discounting."
        ),
    )


def _on_line(months: tuple[float, ...], usd: tuple[float, ...], month: float) -> float:
    """The stored line's value at a fractional month (where to draw the marker; both lines meet there)."""
    whole = min(int(month), len(months) - 2)
    share = month - months[whole]
    return usd[whole] + (usd[whole + 1] - usd[whole]) * share


def cost_breakdown_spec(view: PlanView) -> ChartSpec | None:
    """What owning costs over the horizon, item by item: capex by BOM category, then each running cost summed over
    the stored yearly cash flows of the horizon (nominal). The bars add up to the plan's stored TCO."""
    capex = {human(k): float(v) for k, v in view.cost_breakdown.capex_by_category_usd.items()}
    onprem = view.costs.onprem if view.costs else None
    finance = onprem.finance if onprem else None
    # The cash flows run over the useful life; the horizon (the TCO's years) may be shorter.
    years = min(onprem.years, len(finance.cash_flows)) if finance else 0
    running: dict[str, float] = {}
    for flow in finance.cash_flows[:years] if finance else ():
        for key, name in OPEX_NAMES.items():
            running[name] = running.get(name, 0.0) + float(getattr(flow, key))
    running = {k: v for k, v in running.items() if v > 0}
    if not capex and not running:
        return None
    parts = [("capex", name, usd) for name, usd in sorted(capex.items(), key=lambda item: -item[1])]
    parts += [("running", name, usd) for name, usd in sorted(running.items(), key=lambda item: -item[1])]
    labels = tuple(f"{name} ({'capex' if kind == 'capex' else f'{years} years'})" for kind, name, _ in parts)
    series = []
    for index, (kind, title) in enumerate((("capex", "capex (paid up front)"), ("running", "running costs"))):
        chosen = [(label, usd) for label, (k, _, usd) in zip(labels, parts, strict=True) if k == kind]
        if chosen:
            series.append(
                Series(
                    title if kind == "capex" else f"{title} over {years} years (nominal)",
                    tuple(usd for _, usd in chosen),
                    tuple(label for label, _ in chosen),
                    kind="bar",
                    orientation="h",
                    color=PALETTE[index],
                    text=tuple(page_money(usd) for _, usd in chosen),  # the page's "$1.00M", not "$1M"
                    hover=tuple(f"{label}: {money(usd, 4)}" for label, usd in chosen),
                )
            )
    values = [usd for _, _, usd in parts]
    total = sum(values)
    x = _linear_axis("USD", [0.0, max(values) * 1.18], money)  # room for the labels beside the bars
    return ChartSpec(
        key="cost-breakdown",
        title=f"Cost of owning over {years} years: {page_money(total)}" if years else f"Capex: {page_money(total)}",
        x=x,
        y=Axis("", categories=labels),
        series=tuple(series),
        height_px=max(300, 60 + 28 * len(parts)),
        note="Capex by bill-of-materials category, then each running cost summed over the horizon's cash flows.",
    )


def power_per_rack_spec(view: PlanView) -> ChartSpec | None:
    """kW of each distinct rack build, coloured by its cooling method, with each method's limit and the rack budget
    as lines named in the legend (no text across the bars)."""
    racks = view.racks
    if racks is None:
        return None
    builds: dict[tuple[str, float, str], int] = {}
    for rack in racks.racks:
        key = (rack.role, round(rack.kw, 1), rack.cooling)
        builds[key] = builds.get(key, 0) + 1
    keys = sorted(builds, key=lambda key: (-key[1], key[0]))
    categories = tuple(
        f"{builds[key]:,} {role} rack{'s' if builds[key] > 1 else ''} at {kw:g} kW"
        for key in keys
        for role, kw, _ in (key,)
    )
    series = []
    for cooling in dict.fromkeys(key[2] for key in keys):
        mine = [(category, key) for category, key in zip(categories, keys, strict=True) if key[2] == cooling]
        name = COOLING_NAMES.get(cooling, human(cooling))
        series.append(
            Series(
                f"racks cooled by {name}",
                tuple(key[1] for _, key in mine),
                tuple(category for category, _ in mine),
                kind="bar",
                orientation="h",
                color=COOLING_COLORS.get(cooling, PALETTE[4]),
                hover=tuple(f"{category}, cooled by {name}" for category, _ in mine),
            )
        )
    lines = [
        RefLine("x", kw, f"{label} cooling limit {kw:g} kW", color=COOLING_COLORS[method], dash="dot")
        for (label, kw), method in zip(racks.cooling_thresholds_kw, THRESHOLD_METHODS, strict=False)
    ]
    if racks.rack_budget_kw:
        lines.append(RefLine("x", float(racks.rack_budget_kw), f"rack power budget {racks.rack_budget_kw:g} kW"))
    top = max([key[1] for key in keys] + [line.value for line in lines])
    return ChartSpec(
        key="power-per-rack",
        title="Power per rack vs cooling limits",
        x=_linear_axis("kW per rack", [0.0, top * 1.05], lambda kw: f"{kw:g} kW"),
        y=Axis("", categories=categories),
        series=tuple(series),
        lines=tuple(lines),
        barmode="stack",
        height_px=max(300, 140 + 30 * len(categories)),
        note="One bar per distinct rack build, coloured by its cooling; each dotted line is the most power per rack "
        "that cooling method removes.",
    )


def throughput_latency_spec(view: PlanView) -> ChartSpec | None:
    """Output tokens/s per GPU vs time per output token as the batch grows, the planned point and the TPOT target."""
    curve = view.serving_curve
    if curve is None:
        return None
    xs, ys = [float(v) for v in curve.tpot_ms], [float(v) for v in curve.tokens_per_s_per_gpu]
    series = [
        Series(
            "one replica as the batch grows",
            tuple(xs),
            tuple(ys),
            marker="circle",
            hover=tuple(
                f"batch {b}: {number(x)} ms per output token, {number(y)} tokens/s per GPU"
                for b, x, y in zip(curve.batches, xs, ys, strict=True)
            ),
        )
    ]
    lines = []
    inference = view.result.inference if view.result else None
    if inference is not None and inference.tpot_ms:
        # The plan's own operating point, on the latency axis (its tokens/s is the fleet's, not this curve's).
        lines.append(
            RefLine(
                "x",
                float(inference.tpot_ms),
                f"planned: batch {inference.batch} per replica, {number(inference.tpot_ms)} ms per token",
                color=PALETTE[1],
                dash="dot",
            )
        )
        xs.append(float(inference.tpot_ms))
    if curve.tpot_target_ms:
        lines.append(RefLine("x", float(curve.tpot_target_ms), f"target {number(curve.tpot_target_ms)} ms per token"))
        xs.append(float(curve.tpot_target_ms))
    return ChartSpec(
        key="throughput-latency",
        title="Throughput vs latency, one replica",
        x=_linear_axis("time per output token (ms)", xs, lambda v: f"{number(v)} ms"),
        y=_linear_axis("output tokens/s per GPU", [0.0, *ys], number),
        series=tuple(series),
        lines=tuple(lines),
        note="Each point is one batch size per replica.",
    )


BUILDERS = (cost_over_time_spec, cost_breakdown_spec, frontier_spec, throughput_latency_spec, power_per_rack_spec)


def chart_specs(result: Mapping[str, Any] | PlanResult | PlanView | None) -> list[ChartSpec]:
    """Every chart this plan has data for, in page order."""
    view = plan_view(result)
    if not view:
        return []
    return [spec for build in BUILDERS if (spec := build(view)) is not None]


@dataclass(frozen=True)
class PageChart:
    """One chart as the page shows it: its title (the element's accessible name), the note under it and the plotly
    figure (data + layout, as plain JSON values for `json_script`)."""

    title: str
    note: str
    figure: dict[str, Any]


def plan_charts(result: Mapping[str, Any] | PlanResult | PlanView | None) -> dict[str, PageChart]:
    """The page's charts: chart key -> title, note and plotly figure."""
    from planner.outputs.chart_plotly import figure

    return {spec.key: PageChart(spec.title, spec.note, figure(spec)) for spec in chart_specs(result)}
