"""How old a price snapshot is, told in words, by the same rule the plan's price warnings use.

Why every plan used to start "stale": a snapshot was stale after `PLANNER_PRICE_STALE_AFTER_DAYS` (7 days, an
unsourced setting), while the plan's own warnings (engine/costing/freshness.py) flag a price only when it is older
than the sourced parameter `cloud_price_stale_after_days` (180 days). The bundled snapshot is dated by its newest
source (fixtures/aws/manifest.json: 2026-11-09), so from 2026-11-17 on every plan priced with it carried a "stale"
badge and a cloud note, whatever the age of the prices it actually used, and nothing could make it fresh: loading
the same files again gives the same date. Now both use the one parameter, and what is shown is the age of the data
and which prices are old, by provider.
"""

from __future__ import annotations

from datetime import date, timedelta

from django.conf import settings
from django.db.models import Count, Max, Min, Q
from django.utils import timezone

__all__ = ["STALE_PARAMETER", "snapshot_freshness", "stale_after_days"]

# The named cost parameter (fixtures/prices/parameters.json), also read by engine/costing/freshness.py.
STALE_PARAMETER = "cloud_price_stale_after_days"
_FALLBACK_DAYS = 180  # only if neither the table nor the fixture file has the parameter


def stale_after_days() -> int:
    """Days after which a price is old: PLANNER_PRICE_STALE_AFTER_DAYS when set (> 0), else the parameter
    `cloud_price_stale_after_days` (the editable table, else the fixture file)."""
    override = int(getattr(settings, "PLANNER_PRICE_STALE_AFTER_DAYS", 0) or 0)
    if override > 0:
        return override
    from .models import CostParameter
    from .references import price_references_load

    row = CostParameter.objects.filter(name=STALE_PARAMETER, scope="").values_list("value", flat=True).first()
    if row is not None:
        return int(row)
    record = price_references_load().parameters.get(STALE_PARAMETER)
    return int(record.value) if record is not None else _FALLBACK_DAYS


def snapshot_freshness(snapshot, *, today: date | None = None) -> dict:
    """The snapshot's date and age, the limit, and per provider how many of its prices are older than the limit
    (with the oldest date), with one sentence that says it plainly."""
    today = today or timezone.now().date()
    limit = stale_after_days()
    observed = snapshot.fetched_at.date()
    age = (today - observed).days
    cutoff = timezone.make_aware(timezone.datetime.combine(today - timedelta(days=limit), timezone.datetime.min.time()))
    rows = (
        snapshot.offers.values("provider")
        .annotate(
            prices=Count("id"),
            old=Count("id", filter=Q(observed_at__lt=cutoff)),
            oldest=Min("observed_at"),
            newest=Max("observed_at"),
        )
        .order_by("provider")
    )
    providers = [
        {**row, "oldest": row["oldest"].date() if row["oldest"] else None, "newest": row["newest"].date()}
        for row in rows
    ]
    old = [p for p in providers if p["old"]]
    sentence = f"The prices were observed on {observed.isoformat()}, {age} day{'s' if age != 1 else ''} ago" + (
        f" (older than the {limit}-day limit)." if age > limit else f", within the {limit}-day limit."
    )
    if snapshot.kind == "fixture":
        sentence += (
            " They are the bundled recorded prices: loading them again does not make them newer; a live refresh "
            "(AWS credentials) or updated fixture files do."
        )
    if old:
        listed = "; ".join(f"{p['provider']}: {p['old']} of {p['prices']} (oldest {p['oldest']})" for p in old)
        sentence += f" Prices older than {limit} days, by provider: {listed}."
    return {
        "observed_on": observed,
        "age_days": age,
        "stale_after_days": limit,
        "stale": age > limit,
        "providers": providers,
        "sentence": sentence,
    }
