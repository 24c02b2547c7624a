"""One chart-neutral description of each plan chart, drawn by two renderers: plotly (the page) and matplotlib (the PDF).

A `ChartSpec` holds everything a reader sees: the series with their human names and colours, the axes with their
titles, units and tick labels, the reference lines (deadline, cooling limits, latency target) at their true data
values, and the hover text with units. The renderers only translate it, so the page and the PDF cannot disagree
about a value, a colour or a label. Ticks are chosen here (1-2-5 steps, units in the labels) rather than by either
library, because plotly's log ticks read "2 5 10 2 5 100" and matplotlib's would differ from plotly's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, NamedTuple

__all__ = [
    "PALETTE",
    "REFERENCE_COLOR",
    "SYMBOLS",
    "Axis",
    "ChartSpec",
    "RefLine",
    "Series",
    "SeriesStyle",
    "linear_ticks",
    "log_ticks",
    "money",
    "number",
    "series_style",
]

# Okabe & Ito, "Color Universal Design" (2008): eight colours told apart with every common colour-vision
# deficiency. Series take these in order; black is kept for reference lines and the chosen plan, and yellow
# (#F0E442, too pale on white for thin lines) is left out. A plan over every catalog system draws 9 frontier lines,
# so three more follow from Paul Tol's colour-blind-safe "muted" scheme (Tol, "Colour Schemes", SRON technical
# note SRON/EPS/TN/09-002, 2021): indigo, wine and olive, the three furthest from the seven above.
PALETTE: tuple[str, ...] = (
    *("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#7F7F7F"),
    *("#332288", "#882255", "#999933"),
)
REFERENCE_COLOR = "#000000"
# Colour is never the only difference (a reader who cannot tell two colours apart, or a grey print): each series
# also takes the next dash and the next marker symbol. The counts are coprime with the palette's, so the first
# 30 series differ in colour and dash and the first 18 differ in dash and marker, without colour. Star and
# diamond are kept for the chosen plan and the break-even markers.
DASHES: tuple[str, ...] = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS: tuple[str, ...] = (
    *("circle", "square", "triangle-up", "x", "triangle-down", "pentagon", "hexagon", "cross", "triangle-left"),
)

Kind = Literal["line", "bar", "marker"]
Dash = Literal["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]


@dataclass(frozen=True)
class Series:
    """One trace: `x`/`y` in data units; `hover` one text per point (values with units), `text` shown on bars."""

    name: str
    x: tuple[float | str, ...]
    y: tuple[float, ...]
    kind: Kind = "line"
    color: str = PALETTE[0]
    dash: Dash = "solid"
    hover: tuple[str, ...] = ()
    text: tuple[str, ...] = ()  # bars: a label beside each bar (outside its end)
    marker: str | None = None  # circle | star | diamond (points drawn on a line or alone)
    width: float = 2.0
    orientation: Literal["v", "h"] = "v"  # bars: "h" draws y as the categories and x as the values


@dataclass(frozen=True)
class Axis:
    """An axis with its title (unit included) and its ticks as (value, label) pairs in data units."""

    title: str
    log: bool = False
    ticks: tuple[tuple[float, str], ...] = ()
    range: tuple[float, float] | None = None  # data units (a log axis too); None = fit the data
    categories: tuple[str, ...] = ()  # a category axis, in this order


@dataclass(frozen=True)
class RefLine:
    """A horizontal (axis "y") or vertical (axis "x") line at a data value, named in the legend (never written across
    the plot, where it would strike through bars and their labels)."""

    axis: Literal["x", "y"]
    value: float
    name: str
    color: str = REFERENCE_COLOR
    dash: Dash = "dash"


@dataclass(frozen=True)
class ChartSpec:
    key: str  # the page's element id suffix, stable
    title: str
    x: Axis
    y: Axis
    series: tuple[Series, ...]
    lines: tuple[RefLine, ...] = ()
    note: str = ""  # one sentence under the chart: what is drawn and on what basis
    barmode: Literal["group", "stack"] = "group"
    height_px: int = 420


class SeriesStyle(NamedTuple):
    color: str
    dash: Dash
    marker: str


def series_style(index: int) -> SeriesStyle:
    """The colour, dash and marker symbol of the index-th series of a chart: every series of a chart has its own
    colour (up to len(PALETTE)), and its own dash and marker pair (up to 18), so none is told apart by colour
    alone."""
    dash: Dash = DASHES[index % len(DASHES)]  # type: ignore[assignment]
    return SeriesStyle(PALETTE[index % len(PALETTE)], dash, SYMBOLS[index % len(SYMBOLS)])


# ------------------------------------------------------------------------------------------ numbers and ticks


def number(value: float, digits: int = 3) -> str:
    """A value to `digits` significant figures with thousands separators ("1,024", "0.25", "3.2")."""
    if value == 0 or not math.isfinite(value):
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - magnitude)
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def money(usd: float, digits: int = 3) -> str:
    """US dollars in $k / $M / $B to `digits` significant figures ("$62.8M", "$950k", "$1.2B")."""
    sign = "-" if usd < 0 else ""
    usd = abs(usd)
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if usd >= scale:
            return f"{sign}${number(usd / scale, digits)}{suffix}"
    return f"{sign}${number(usd, digits)}"


def log_ticks(low: float, high: float, unit: str = "") -> tuple[tuple[float, str], ...]:
    """Ticks at 1, 2, 5 x 10^k covering [low, high], labelled with the unit ("20 d", "50 d", "100 d").

    With fewer than three such ticks inside the data, the two neighbours outside it are added so the axis always
    has a labelled tick below and above the data."""
    if low <= 0 or high <= 0:
        return ()
    low, high = min(low, high), max(low, high)
    values = []
    for exponent in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1):
        values.extend(m * 10.0**exponent for m in (1, 2, 5))
    inside = [v for v in values if low <= v * (1 + 1e-9) and v <= high * (1 + 1e-9)]
    if len(inside) < 3:
        below = [v for v in values if v < low]
        above = [v for v in values if v > high]
        inside = below[-1:] + inside + above[:1]
    suffix = f" {unit}" if unit else ""
    return tuple((v, f"{number(v)}{suffix}") for v in inside)


def nice_step(span: float, count: int = 6) -> float:
    """The 1-2-5 step that cuts `span` into at most about `count` intervals."""
    raw = span / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def linear_ticks(
    low: float, high: float, label=number, count: int = 6, step: float | None = None
) -> tuple[tuple[float, str], ...]:
    """Ticks at multiples of a 1-2-5 step from at or below `low` to at or above `high`, each labelled by `label`."""
    low, high = min(low, high, 0.0), max(low, high)
    if high == low:
        high = low + 1
    step = step or nice_step(high - low, count)
    first = math.floor(low / step + 1e-9)
    last = math.ceil(high / step - 1e-9)
    return tuple((i * step, label(i * step)) for i in range(first, last + 1))
