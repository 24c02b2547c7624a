"""Warnings when a plan's cloud prices are old or assumed: the prices themselves are not changed, only flagged.

Why: one snapshot gathers price lists of very different ages (a Spot record from last week, a capacity-block
table from 2024, a neocloud price reported in a blog) and of different firmness (a list price, a public
estimate, a placeholder). A buyer must see which of the plan's cloud options rest on a price older than the
named parameter `cloud_price_stale_after_days`, or on an assumption, before signing anything. Each warning comes
twice: a full sentence naming every option, and a short headline (provider, what is wrong, how many) to scan.

The age is counted from `priced_on`, the day the plan was priced (the adapter passes today's date; tests fix
it); without it no age is computed and only assumed prices are flagged. One warning per provider, naming each
(instance type, purchase) once, so the list stays readable however many rows and sizings share a price list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from engine.result.costs import CloudRow

from .providers import detailed, provider_name, row_gpus, row_hardware, term_name

__all__ = [
    "DEFAULT_STALE_AFTER_DAYS",
    "STALE_PARAMETER",
    "price_age_days",
    "price_warning_headlines",
    "price_warnings",
]

STALE_PARAMETER = "cloud_price_stale_after_days"
# Used only when the parameter table lacks the row (hand-built inputs); the sourced value is in the table.
DEFAULT_STALE_AFTER_DAYS = 180


def price_age_days(observed_at: str, priced_on: date) -> int | None:
    """Whole days from the price's own date to the pricing day; None when either is unknown or unreadable."""
    if not observed_at:
        return None
    try:
        observed = date.fromisoformat(observed_at[:10])
    except ValueError:
        return None
    return (priced_on - observed).days


def _listed(items: Sequence[str], limit: int = 6) -> str:
    shown = list(items[:limit])
    return "; ".join(shown) + (f"; and {len(items) - limit} more" if len(items) > limit else "")


@dataclass
class _Flagged:
    """One provider's rows on old or assumed prices: each (type, purchase) once, with its date and age if old."""

    old: dict[str, tuple[str, int]] = field(default_factory=dict)  # what -> (dated, age in days)
    assumed: dict[str, None] = field(default_factory=dict)  # what, in first-seen order


def _flag(rows: Sequence[CloudRow], priced_on: date | None, stale_after_days: int) -> dict[str, _Flagged]:
    """Provider -> its flagged rows, in provider order."""
    flagged: dict[str, _Flagged] = {}
    for row in rows:
        provider = row.provider or "aws"
        hardware = row_hardware(row)
        gpus = row_gpus(row)
        what = f"{detailed(hardware, gpus if gpus != hardware else None)} {term_name(row.provider, row.purchase)}"
        observed = row.price_observed_at[:10]
        age = price_age_days(observed, priced_on) if priced_on else None
        if age is not None and age > stale_after_days:
            flagged.setdefault(provider, _Flagged()).old[what] = (observed, age)
        if row.price_confidence == "assumption":
            flagged.setdefault(provider, _Flagged()).assumed[what] = None
    return {provider: flagged[provider] for provider in sorted(flagged)}


def price_warnings(rows: Sequence[CloudRow], *, priced_on: date | None, stale_after_days: int) -> tuple[str, ...]:
    """One sentence per provider whose rows rest on old or assumed prices, naming each (type, purchase) once;
    each row's own source stays on the row (`price_source`)."""
    out = []
    for provider, flags in _flag(rows, priced_on, stale_after_days).items():
        parts = []
        if flags.old:
            parts.append(
                f"prices older than {stale_after_days} days (the cost parameter for stale cloud prices): "
                + _listed([f"{what} (dated {dated}, {age} days old)" for what, (dated, age) in flags.old.items()])
            )
        if flags.assumed:
            parts.append("assumptions, not published prices: " + _listed(list(flags.assumed)))
        out.append(
            f"{provider_name(provider)} {' and '.join(parts)}. Refresh or replace them before relying on these rows."
        )
    return tuple(out)


def price_warning_headlines(
    rows: Sequence[CloudRow], *, priced_on: date | None, stale_after_days: int
) -> tuple[str, ...]:
    """The same warnings, one short line each, in the same order: which provider, what is wrong and, when one
    option is concerned, which ("CoreWeave: 8 x H100 SXM5 80GB on-demand price is 695 days old"). A reader scans
    these; the full sentence (`price_warnings`) names every option."""
    out = []
    for provider, flags in _flag(rows, priced_on, stale_after_days).items():
        parts = []
        if len(flags.old) == 1:
            ((what, (_dated, age)),) = flags.old.items()
            parts.append(f"{what} price is {age} days old")
        elif flags.old:
            oldest = max(age for _dated, age in flags.old.values())
            parts.append(f"{len(flags.old)} prices over {stale_after_days} days old (oldest {oldest} days)")
        if len(flags.assumed) == 1:
            parts.append(f"{next(iter(flags.assumed))} price is an assumption")
        elif flags.assumed:
            parts.append(f"{len(flags.assumed)} prices are assumptions, not published")
        out.append(f"{provider_name(provider)}: {'; '.join(parts)}")
    return tuple(out)
