"""The "Refresh prices" action and the schedule it sits beside.

A refresh makes a new shared snapshot (every user's new plans are priced with it), so the page offers it to staff
only. Offline (the default, PLANNER_PRICE_REFRESH_LIVE false) it reloads the bundled recorded prices and the
on-prem references from fixtures/ (what `manage.py load_prices` does): quick, no network, and honest about being
the recorded data. Live, it queues the same Celery task the beat schedule runs (`pricing.refresh_prices`, AWS
credentials on the workers), so a slow or failed fetch never holds the web request.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings

from .models import PriceSnapshot

__all__ = ["RefreshOutcome", "RefreshSchedule", "price_refresh", "refresh_schedule"]

BEAT_ENTRY = "refresh-prices"  # the CELERY_BEAT_SCHEDULE key (config/settings/base.py)


@dataclass(frozen=True)
class RefreshSchedule:
    """`every` is None when no refresh is scheduled; `next_at` is estimated from the last live snapshot."""

    every: timedelta | None
    next_at: datetime | None
    sentence: str


def refresh_schedule(*, now: datetime, last_live: PriceSnapshot | None) -> RefreshSchedule:
    """The scheduled refresh as the beat schedule defines it, and when the next one should come."""
    entry = (getattr(settings, "CELERY_BEAT_SCHEDULE", {}) or {}).get(BEAT_ENTRY)
    every = entry.get("schedule") if entry else None
    if not isinstance(every, timedelta):
        return RefreshSchedule(
            None,
            None,
            "No refresh is scheduled (PLANNER_PRICE_REFRESH_EVERY_H is 0): prices change only when someone "
            "refreshes them here or with manage.py refresh_prices.",
        )
    hours = every.total_seconds() / 3600
    if last_live is None:
        return RefreshSchedule(every, None, f"Scheduled every {hours:g} h; no live refresh has succeeded yet.")
    next_at = last_live.created_at + every
    while next_at < now:  # a missed run (beat down, AWS refused) is retried at the next tick
        next_at += every
    return RefreshSchedule(every, next_at, f"Scheduled every {hours:g} h; next about {next_at:%Y-%m-%d %H:%M} UTC.")


@dataclass(frozen=True)
class RefreshOutcome:
    snapshot: PriceSnapshot | None
    queued: bool
    message: str


def price_refresh() -> RefreshOutcome:
    """Run the refresh the site is configured for (see the module docstring)."""
    if getattr(settings, "PLANNER_PRICE_REFRESH_LIVE", False):
        from .tasks import refresh_prices_task

        refresh_prices_task.delay()
        return RefreshOutcome(None, True, "Live price refresh queued: a new snapshot appears here when it finishes.")
    from .reference_services import price_references_load_fixtures
    from .services import price_snapshot_load_fixtures

    price_references_load_fixtures()
    snapshot = price_snapshot_load_fixtures()
    return RefreshOutcome(
        snapshot,
        False,
        f"Reloaded the bundled recorded prices: snapshot #{snapshot.pk}, observed "
        f"{snapshot.fetched_at:%Y-%m-%d}. These are recorded prices; a live refresh needs AWS credentials "
        "(PLANNER_PRICE_REFRESH_LIVE).",
    )
