"""Template filters: every number, unit and name shown for people (the rules live in planner.outputs.formatting,
shared with the view models, so the page, the compare table and the PDF format alike)."""

from __future__ import annotations

import json

from django import template
from django.utils.html import format_html

from planner.adapter import provider_name, purchase_name, term_name
from planner.outputs import formatting
from planner.outputs.plan_view import HEADLINES

register = template.Library()

# The headline figures' own labels title their explain entries too (one name per figure on the page).
_HEADLINE_LABELS = {path: text for text, path, _unit in HEADLINES}

UNIT_SUFFIXES = formatting.UNIT_SUFFIXES


@register.filter
def num(value):
    """1234567.891 -> '1,234,568'; 12.345 -> '12.3'; 0.4123 -> '0.412'; None -> '\u2013'; True -> 'yes'."""
    return formatting.number(value)


@register.filter
def usd(value):
    """Money: '$56.9M', '$796k', '$2.46' (three significant figures, the engine's one rule); None -> '\u2013'."""
    return formatting.money(value)


@register.filter
def kw(value):
    """A power in kW as '5.74 MW' or '812 kW'."""
    return formatting.power(value)


@register.filter
def pct(value, digits: int = 0):
    """A fraction as a percentage: 0.412 -> '41 %' (digits=1: '41.2 %'); None -> '\u2013'."""
    if value is None or isinstance(value, bool):
        return formatting.DASH
    try:
        return f"{float(value) * 100:.{int(digits)}f} %"
    except (TypeError, ValueError):
        return value


@register.filter
def product(value):
    """A catalog id of a system or GPU as its maker names it; other text unchanged."""
    return formatting.catalog_name(value)


@register.filter
def request_value(value, path: str):
    """A request input by its request path: a model preset by the model's name, a catalog id by its product."""
    return formatting.request_value(value, str(path))


@register.filter
def products(text):
    """Engine prose with every catalog id in it named as its product."""
    return formatting.products_named(text)


@register.filter
def show(value):
    """Any stored value for a person: no None, True/False, quotes or braces."""
    return formatting.human(value)


@register.filter
def field_text(value, key):
    """A stored field's value with its unit, by the field's name (`{{ value|field_text:key }}`): money, power and
    fractions as people read them."""
    return formatting.field_text(key, value)


@register.filter
def moved_rows(rows):
    """The sensitivity rows that move the build-or-rent difference at either end (a plan with no obtainable cloud
    option has no difference to move: every row would read as a dash)."""
    return [
        row
        for row in rows or ()
        if any(getattr(end, "cloud_minus_onprem_usd", None) is not None for end in (row.low, row.high))
    ]


@register.filter
def prose_words(text):
    """A short engine label with its snake_case enum names in words (`public_estimate` -> public estimate)."""
    return formatting.prose_words(text)


@register.filter
def figure_text(value, unit):
    """A headline figure by its unit (`{{ value|figure_text:row.unit }}`): $172M, 5.74 MW, 61.8 - 98.5."""
    return formatting.figure_text(value, unit)


@register.filter
def figure_title(path):
    """An explain entry's figure path as a title a reader understands."""
    return formatting.figure_title(str(path), _HEADLINE_LABELS)


@register.filter
def unit(key: str) -> str:
    """The unit a field name carries (design rule: units in names)."""
    return formatting.key_unit(key)


@register.filter
def label(key: str) -> str:
    """`step_time_s` -> 'step time' (the unit is shown beside the value)."""
    return formatting.key_label(key)


@register.filter
def words(value):
    """`air_containment` -> 'air containment' for enum-like text; anything else unchanged."""
    return formatting.words(value)


@register.filter
def nowrap(text):
    """Text that must not break across lines (a number with its unit)."""
    return format_html('<span class="nowrap">{}</span>', text)


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
def is_text(value) -> bool:
    """A name, not a figure (a product such as "In-row coolant distribution unit, 1,350 kW"): it may wrap inside a
    narrow card, where a number with its unit stays on one line."""
    return isinstance(value, str)


@register.filter
def is_prose(value) -> bool:
    """A sentence (a design's reason, a note), not a figure: it wraps like text instead of staying on one line."""
    return isinstance(value, str) and " " in value.strip()


@register.filter
def is_small_mapping(value) -> bool:
    """A dict of a few scalars (shown inline as pairs); bigger structures get their own views."""
    return (
        isinstance(value, dict)
        and len(value) <= 12
        and all(is_scalar(v) and not (isinstance(v, str) and len(v) > 60) for v in value.values())
    )


@register.filter
def split(value: str) -> list[str]:
    return str(value).split()


@register.filter
def field(form, name: str):
    """A bound field by name (templates cannot index a form with a variable)."""
    return form[name]


@register.filter
def provider(value: str) -> str:
    """A cloud row's provider id as the provider's own name (`aws` -> AWS, `gcp` -> Google Cloud)."""
    return provider_name(str(value or "aws"))


@register.filter
def instance(row) -> str:
    """A cloud row's or break-even row's instance as procurement and finance both read it: the provider's id with
    its GPUs in words ("p5.48xlarge (8 x H100 SXM5 80GB)"); the id alone for plans stored before rows carried them."""
    instance_type = str(getattr(row, "instance_type", "") or "")
    hardware = getattr(row, "hardware", None)
    return f"{instance_type} ({hardware})" if hardware else instance_type


@register.filter
def purchase(value: str) -> str:
    """A cloud row's purchase id in words (`on_demand` -> on-demand, `reserved_1y` -> 1-year reserved)."""
    return purchase_name(str(value or ""))


@register.filter
def price_warning_items(costs) -> list[dict[str, str]]:
    """A costs section's price warnings as {headline, text} pairs (page and PDF)."""
    return formatting.price_warning_items(
        getattr(costs, "price_warnings", None), getattr(costs, "price_warning_headlines", None)
    )


@register.filter
def term(row) -> str:
    """A cloud row's purchase as its provider sells it: a neocloud's reserved term is a contract ("3-year
    contract", as the options and the verdict name it), any other provider's as `purchase` words it."""
    return term_name(getattr(row, "provider", None), str(getattr(row, "purchase", "") or ""))


# The report lists every obtainable option and this many of those that cannot compete (the page and the JSON list all).
REPORT_EXCLUDED_OPTIONS = 5


@register.filter
def report_options(options) -> dict:
    """A plan's options as the PDF lists them: every obtainable one and the first few that cannot compete, in the
    stored order, with the count left out. A 90-day 70B plan has 42 options out of reach, four pages of the same
    few reasons; finance reads the ones in reach and why the nearest others are not."""
    options = list(options or ())
    excluded = [o for o in options if o.obtainable is False]
    keep = {id(o) for o in excluded[:REPORT_EXCLUDED_OPTIONS]}
    shown = [o for o in options if o.obtainable is not False or id(o) in keep]
    return {"shown": shown, "left_out": len(options) - len(shown), "excluded": len(excluded)}


@register.filter
def carbon_footnotes(carbon) -> list[str]:
    """The carbon table's notes and sources, each said once under the table: the method, how the on-prem and the
    cloud energy were counted, every grid intensity's source, and what "not recorded" means. The table repeated
    one sentence in a dozen rows and cited no source for its grid figures."""
    lines = [f"Method: {carbon.method}."]
    onprem = carbon.onprem
    if onprem is not None:
        lines.append(f"On-prem energy: {onprem.note} On-prem grid: {onprem.source}")
    counted = [row for row in carbon.cloud if row.grid_gco2e_per_kwh is not None]
    for note in dict.fromkeys(row.note for row in counted):
        lines.append(f"Cloud energy: {note}")
    for source in dict.fromkeys(row.source for row in counted if row.source):
        lines.append(f"Cloud grid: {source}")
    missing = [row.note for row in carbon.cloud if row.grid_gco2e_per_kwh is None]
    for note in dict.fromkeys(missing):
        lines.append(f"Not recorded: {note}.")
    return lines
