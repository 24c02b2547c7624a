"""Shared SVG plumbing: a drawing with the stylesheet inlined, so files stand alone (no CDN, no links).

Every diagram is laid out for a width it is given, never wider: the page's diagram card (`PAGE_WIDTH_PX`) or the
A4 text column of the PDF (`PRINT_WIDTH_PX`), so nothing scrolls sideways or is scaled down. Text is never
smaller than `MIN_FONT_PX` (10 px): 9 px or more on the page, and 7.5 pt in the PDF, where one CSS px is 0.75 pt
and a drawing no wider than the column is printed at its own size. Text is laid out with `text_width_px`, a
deliberately generous estimate, so a label that would not fit its box is shortened or moved, never cut off.

svgwrite builds the document with xml.etree, so every text and attribute (plan names, part names, rack ids) is
escaped on output: a hostile string shows as text, never as markup.
"""

from __future__ import annotations

from importlib import resources

import svgwrite

# The diagram card's content box on the page (main 1,200 px, less its padding and the card's) and the PDF's text
# column: A4 210 mm less 2 x 14 mm margins = 182 mm = 688 CSS px at 96 px per inch.
PAGE_WIDTH_PX = 1100
PRINT_WIDTH_PX = 680
# A4 297 mm less 16 + 18 mm margins = 263 mm = 994 px; a printed drawing stays below this with room for a heading.
PRINT_HEIGHT_PX = 900
MIN_FONT_PX = 10
# Average advance of DejaVu Sans (the PDF's font, and wider than most system UI fonts) per em, rounded up.
_EM_ADVANCE = 0.62

COOLING_NAMES = {
    "air": "air",
    "air_containment": "air + containment",
    "rdhx": "rear-door HX",
    "liquid": "direct liquid",
}
ROLE_NAMES = {"compute": "Compute", "network": "Network", "management": "Management"}


def new_drawing(width: float, height: float, title: str) -> svgwrite.Drawing:
    # class "cp" scopes the inlined stylesheet: inside a page it must not restyle the page's own elements.
    drawing = svgwrite.Drawing(
        size=(f"{width:.0f}px", f"{height:.0f}px"),
        viewBox=f"0 0 {width:.0f} {height:.0f}",
        profile="full",
        debug=False,  # no attribute validation: data-* and aria-* attributes are ours, and validation is slow
        class_="cp",
        role="img",
    )
    drawing["aria-label"] = title
    drawing.defs.add(drawing.style(resources.files("planner.outputs.svg").joinpath("style.css").read_text()))
    drawing.set_desc(title=title)
    return drawing


def fmt(value: float | int) -> str:
    return f"{value:,.0f}" if float(value).is_integer() or abs(value) >= 100 else f"{value:,.1f}"


def text_width_px(text: str, font_px: float = MIN_FONT_PX) -> float:
    """An upper estimate of the drawn width of `text` (DejaVu Sans averages under 0.62 em per character)."""
    return len(text) * font_px * _EM_ADVANCE


def fitting(candidates: list[str], width_px: float, font_px: float = MIN_FONT_PX) -> str | None:
    """The first text that fits `width_px`, or None when none does (the caller then draws it elsewhere)."""
    return next((text for text in candidates if text_width_px(text, font_px) <= width_px), None)


def cooling_name(method: str) -> str:
    return COOLING_NAMES.get(method, method.replace("_", " "))


def plural(count: int, word: str) -> str:
    """'1 rack', '678 racks', '8 leaf switches'."""
    if count == 1:
        return f"{fmt(count)} {word}"
    return f"{fmt(count)} {word}{'es' if word.endswith(('ch', 'sh', 's', 'x')) else 's'}"


def wrap(text: str, width_px: float, font_px: float = MIN_FONT_PX) -> list[str]:
    """`text` broken at spaces into lines no wider than `width_px` (a single long word keeps its own line)."""
    lines: list[str] = []
    for word in text.split():
        if lines and text_width_px(f"{lines[-1]} {word}", font_px) <= width_px:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines
