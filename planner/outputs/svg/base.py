"""Shared SVG plumbing: a drawing with the stylesheet inlined, so files stand alone (no CDN, no links)."""

from __future__ import annotations

from importlib import resources

import svgwrite


def new_drawing(width: float, height: float, title: str) -> svgwrite.Drawing:
    # class "cp" scopes the inlined stylesheet: inside a page it must not restyle the page's own elements.
    drawing = svgwrite.Drawing(
        size=(f"{width}px", f"{height}px"), viewBox=f"0 0 {width} {height}", profile="full", class_="cp"
    )
    drawing.defs.add(drawing.style(resources.files("planner.outputs.svg").joinpath("style.css").read_text()))
    drawing.set_desc(title=title)
    return drawing


def fmt(value: float | int) -> str:
    return f"{value:,.0f}" if float(value).is_integer() or abs(value) >= 100 else f"{value:,.1f}"
