"""Warnings when a plan's cloud prices are old or assumed: the prices themselves are not changed, only flagged.

Why: one snapshot gathers price lists of very different ages (a Spot record from last week, a capacity-block
table from 2024, a neocloud price reported in a blog) and of different firmness (a list price, a public
estimate, a placeholder). A buyer must see which of the plan's cloud options rest on a price older than the
named parameter `cloud_price_stale_after_days`, or on an assumption, before signing anything.

The age is counted from `priced_on`, the day the plan was priced (the adapter passes today's date; tests fix
it); without it no age is computed and only assumed prices are flagged. One warning per provider, naming each
(instance type, purchase) once, so the list stays readable however many rows and sizings share a price list.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from engine.result.costs import CloudRow

from .providers import detailed, provider_name, row_gpus, row_hardware, term_name

__all__ = ["DEFAULT_STALE_AFTER_DAYS", "STALE_PARAMETER", "price_age_days", "price_warnings"]

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


def price_warnings(rows: Sequence[CloudRow], *, priced_on: date | None, stale_after_days: int) -> tuple[str, ...]:
    """One sentence per provider whose rows rest on old or assumed prices, naming each (type, purchase) once;
    each row's own source stays on the row (`price_source`)."""
    old: dict[str, dict[str, str]] = {}
    assumed: dict[str, dict[str, None]] = {}
    for row in rows:
        provider = row.provider or "aws"
        hardware = row_hardware(row)
        gpus = row_gpus(row)
        what = f"{detailed(hardware, gpus if gpus != hardware else None)} {term_name(row.provider, row.purchase)}"
        observed = row.price_observed_at[:10]
        age = price_age_days(observed, priced_on) if priced_on else None
        if age is not None and age > stale_after_days:
            old.setdefault(provider, {})[what] = f"{what} (dated {observed}, {age} days old)"
        if row.price_confidence == "assumption":
            assumed.setdefault(provider, {})[what] = None
    out = []
    for provider in sorted(set(old) | set(assumed)):
        parts = []
        if provider in old:
            parts.append(
                f"prices older than {stale_after_days} days (the cost parameter for stale cloud prices): "
                + _listed(list(old[provider].values()))
            )
        if provider in assumed:
            parts.append("assumptions, not published prices: " + _listed(list(assumed[provider])))
        out.append(
            f"{provider_name(provider)} {' and '.join(parts)}. Refresh or replace them before relying on these rows."
        )
    return tuple(out)
