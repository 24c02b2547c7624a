"""Reads of price snapshots and cloud offers (HackSoft selectors: no writes here)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, QuerySet

from .models import CloudOffer, PriceSnapshot

__all__ = [
    "cloud_offer_counts",
    "cloud_offers_for_snapshot",
    "price_snapshot_by_content",
    "price_snapshot_latest",
]


def price_snapshot_latest(*, kind: str | None = None) -> PriceSnapshot | None:
    """The most recently *observed* snapshot (not the most recently loaded), optionally of one kind."""
    snapshots = PriceSnapshot.objects.all()
    if kind is not None:
        snapshots = snapshots.filter(kind=kind)
    return snapshots.order_by("-fetched_at", "-pk").first()


def price_snapshot_by_content(*, content_sha256: str, kind: str | None = None) -> PriceSnapshot | None:
    """The snapshot built from exactly these inputs, if one was stored (what makes fixture loads idempotent)."""
    if not content_sha256:
        return None
    snapshots = PriceSnapshot.objects.filter(content_sha256=content_sha256)
    if kind is not None:
        snapshots = snapshots.filter(kind=kind)
    return snapshots.order_by("pk").first()


def cloud_offers_for_snapshot(
    *,
    snapshot: PriceSnapshot,
    instance_types: Iterable[str] | None = None,
    regions: Iterable[str] | None = None,
    purchases: Iterable[str] | None = None,
    include_constrained: bool = True,
) -> QuerySet[CloudOffer]:
    """A snapshot's offers, optionally narrowed; ordered by type, region, purchase, AZ ID."""
    offers = CloudOffer.objects.filter(snapshot=snapshot)
    if instance_types is not None:
        offers = offers.filter(instance_type__in=list(instance_types))
    if regions is not None:
        offers = offers.filter(region__in=list(regions))
    if purchases is not None:
        offers = offers.filter(purchase__in=list(purchases))
    if not include_constrained:
        offers = offers.filter(capacity_constrained=False)
    return offers.order_by("instance_type", "region", "purchase", "availability_zone_id")


def cloud_offer_counts(*, snapshot: PriceSnapshot) -> dict[str, int]:
    """Number of offers per purchase option, in the CloudOffer.Purchase order (for command and admin output)."""
    counts = dict(
        CloudOffer.objects.filter(snapshot=snapshot).values_list("purchase").annotate(n=Count("pk")).order_by()
    )
    return {purchase: counts[purchase] for purchase in CloudOffer.Purchase.values if purchase in counts}
