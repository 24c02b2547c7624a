"""A training or inference plan's capex limit, checked against the plan's own priced capex.

Why here: the envelope's search (engine/envelope) prices every build it tries with the prices the run was given,
but the plan is priced afterwards, and possibly again with other prices (a what-if, a new snapshot, an uploaded
quote, a request without prices at run time). Whatever the search saw, the plan's `costs.onprem.capex_usd` is the
figure a buyer pays, so it is compared with the limit once more and the plan says plainly when it is above it, or
when it could not be checked (no sourced price for the GPU systems).
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from engine.result.envelope import EnvelopeLimit, EnvelopeSummary

from .money import usd_text

__all__ = ["capex_check", "priced_envelope"]


def capex_check(limit_usd: float | None, capex_usd: Decimal | None) -> str | None:
    """One sentence on the priced capex against the limit (None without a capex limit)."""
    if limit_usd is None:
        return None
    limit = usd_text(limit_usd)
    if capex_usd is None:
        return (
            f"The capex limit ({limit}) could not be checked: the plan's capex is not priced (its GPU systems have no "
            "sourced price), so this plan may not fit the envelope."
        )
    if float(capex_usd) > limit_usd * (1 + 1e-12):
        return (
            f"The priced capex, {usd_text(capex_usd)}, is above the capex limit of {limit}: this plan does not fit "
            "the envelope at these prices (the envelope's search priced its builds with the prices of the run)."
        )
    left = (limit_usd - float(capex_usd)) / limit_usd * 100.0
    return f"The priced capex, {usd_text(capex_usd)}, is within the capex limit of {limit} ({left:.1f} % left)."


def _row(row: EnvelopeLimit, capex_usd: Decimal | None) -> EnvelopeLimit:
    if row.key != "capex_usd" or capex_usd is None:
        return row
    used = float(capex_usd)
    headroom = row.limit - used
    return replace(row, used=used, headroom=headroom, headroom_percent=headroom / row.limit * 100.0)


def priced_envelope(
    envelope: EnvelopeSummary | None, limit_usd: float | None, capex_usd: Decimal | None
) -> EnvelopeSummary | None:
    """The plan's envelope section with its capex row filled from the priced capex and the check's sentence added;
    None when there is nothing to change (no envelope or no capex limit)."""
    sentence = capex_check(limit_usd, capex_usd)
    if envelope is None or sentence is None:
        return None
    fits = capex_usd is not None and float(capex_usd) <= (limit_usd or 0.0) * (1 + 1e-12)
    return replace(
        envelope,
        limits=tuple(_row(r, capex_usd) for r in envelope.limits),
        sentence=f"{envelope.sentence} {sentence}",
        within=envelope.within and fits,
    )
