"""Display helpers: numbers with thousands separators and sensible rounding; units from names."""

from __future__ import annotations

import json
import math
from decimal import Decimal, InvalidOperation

from django import template

register = template.Library()

# Longest suffix first, so `tokens_per_s` reads "/s", not "s".
UNIT_SUFFIXES = {
    "_per_gpu_gib": "GiB/GPU",
    "_tflops_per_gpu": "TFLOP/s per GPU",
    "_per_s": "/s",
    "_gib": "GiB",
    "_tb": "TB",
    "_gbps": "GB/s",
    "_kw": "kW",
    "_ms": "ms",
    "_days": "days",
    "_usd": "USD",
    "_tflops": "TFLOP/s",
    "_w": "W",
    "_s": "s",
}


@register.filter
def num(value):
    """1234567.891 -> '1,234,568'; 12.345 -> '12.35'; 0.41 -> '0.41'; text passes through."""
    if isinstance(value, str | Decimal):
        # Money arrives as Decimal or a Decimal string ("1234567.50"): format it, leave other text alone.
        try:
            number = Decimal(value)
        except InvalidOperation:
            return value
        if not number.is_finite():
            return str(value)
        return f"{number:,.0f}" if abs(number) >= 100 else f"{number:,.2f}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    magnitude = abs(value)
    if magnitude >= 1e15:  # FLOP totals: digits past the third are noise to a reader
        mantissa, exponent = f"{value:.3e}".split("e")
        return f"{float(mantissa):.3g}e{int(exponent)}"
    if isinstance(value, int) or magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:,.1f}"
    return f"{value:.3g}"


@register.filter
def unit(key: str) -> str:
    """The unit a field name carries (design rule: units in names)."""
    for suffix, label in UNIT_SUFFIXES.items():
        if str(key).endswith(suffix):
            return label
    return ""


@register.filter
def label(key: str) -> str:
    """`step_time_s` -> 'step time' (the unit is shown beside the value)."""
    text = str(key)
    for suffix in UNIT_SUFFIXES:
        if text.endswith(suffix) and len(text) > len(suffix):
            text = text[: -len(suffix)]
            break
    return text.replace("_", " ")


@register.filter
def is_mapping(value) -> bool:
    return isinstance(value, dict)


@register.filter
def pretty_json(value) -> str:
    return json.dumps(value, indent=2, sort_keys=True)


@register.filter
def is_scalar(value) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


@register.filter
def is_small_mapping(value) -> bool:
    """A dict of a few scalars (shown inline as pairs); bigger structures get their own views."""
    return (
        isinstance(value, dict)
        and len(value) <= 12
        and all(is_scalar(v) and not (isinstance(v, str) and len(v) > 60) for v in value.values())
    )


@register.filter
def words(value):
    """`air_containment` -> 'air containment' for enum-like text; anything else unchanged."""
    return value.replace("_", " ") if isinstance(value, str) and "_" in value and " " not in value else value


@register.filter
def split(value: str) -> list[str]:
    return str(value).split()


@register.filter
def field(form, name: str):
    """A bound field by name (templates cannot index a form with a variable)."""
    return form[name]
