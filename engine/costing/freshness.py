"""Warnings when a plan's cloud prices are old or assumed: the prices themselves are not changed, only flagged.

Why: one snapshot gathers price lists of very different ages (a Spot record from last week, a capacity-block
table from 2024, a neocloud price reported in a blog) and of different firmness (a list price, a public
estimate, a placeholder). A buyer must see which of the plan's cloud options rest on a price older than the
named parameter `cloud_price_stale_after_days`, or on an assumption, before signing anything.

The age is counted from `priced_on`, the day the plan was priced (the adapter passes today's date; tests fix
it); without it no age is computed and only assumed prices are flagged. One warning per (provider, source,
date, confidence), so the list stays readable however many rows share a price list.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from engine.result.costs import CloudRow

from .providers import provider_name

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


def _types(rows: Sequence[CloudRow]) -> str:
    names = sorted({row.instance_type for row in rows})
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def price_warnings(rows: Sequence[CloudRow], *, priced_on: date | None, stale_after_days: int) -> tuple[str, ...]:
    """One sentence per group of rows sharing (provider, source, date, confidence) that is old or assumed."""
    groups: dict[tuple[str, str, str, str], list[CloudRow]] = {}
    for row in rows:
        key = (row.provider or "aws", row.price_source or "", row.price_observed_at[:10], row.price_confidence or "")
        groups.setdefault(key, []).append(row)
    out = []
    for (provider, source, observed, confidence), members in sorted(groups.items()):
        age = price_age_days(observed, priced_on) if priced_on else None
        stale = age is not None and age > stale_after_days
        assumed = confidence == "assumption"
        if not stale and not assumed:
            continue
        what = f"{provider_name(provider)} prices for {_types(members)}"
        where = f" ({source})" if source else ""
        reasons = []
        if stale:
            reasons.append(
                f"dated {observed}, {age} days old when this plan was priced (over the {stale_after_days}-day limit, "
                f"parameter {STALE_PARAMETER})"
            )
        if assumed:
            reasons.append("an assumption, not a published price")
        out.append(f"{what}{where}: {' and '.join(reasons)}. Refresh or replace them before relying on these rows.")
    return tuple(out)
