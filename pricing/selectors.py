"""Reads of price snapshots, cloud offers and on-prem references (HackSoft selectors: no writes here).

What a plan is priced with leaves here as plain `pricing.records` (`price_book_for_snapshot`); the engine's
costing types are built from them only in `planner.adapter`.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, QuerySet

from .models import CloudInstanceType, CloudOffer, ComponentPrice, PriceSnapshot, SpotAdvisorBand
from .models import CostParameter as CostParameterRow
from .records import CloudPriceRecord, ParameterRecord, PartPriceRecord, PriceBook, PriceReferences, SpotBandRecord
from .references import price_references_load

__all__ = [
    "GRID_INTENSITY",
    "cloud_instance_gpus_for_snapshot",
    "cloud_offer_counts",
    "cloud_offers_for_snapshot",
    "cloud_prices_for_snapshot",
    "price_book_for_snapshot",
    "price_references_current",
    "price_snapshot_by_content",
    "price_snapshot_latest",
    "price_snapshot_note",
]

GRID_INTENSITY = "grid_gco2e_per_kwh"  # CostParameter.name of the carbon intensities (scope = site or region)


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


def cloud_instance_gpus_for_snapshot(*, snapshot: PriceSnapshot) -> dict[str, tuple[int, str]]:
    """(whole GPUs, catalog GPU id) per instance type from the snapshot's stored specs (describe_instance_types
    + overrides); types whose spec has no catalog GPU, and snapshots stored without specs, are absent."""
    rows = CloudInstanceType.objects.filter(snapshot=snapshot, gpus__gt=0).exclude(gpu_model="")
    return {
        instance_type: (gpus, model)
        for instance_type, gpus, model in rows.values_list("instance_type", "gpus", "gpu_model")
    }


def cloud_prices_for_snapshot(*, snapshot: PriceSnapshot) -> tuple[CloudPriceRecord, ...]:
    """The snapshot's offers as price records, each with the GPU count and catalog model of the snapshot's stored
    spec of its type; where the snapshot has no spec for a type, the offer's own figures (the curated
    `pricing.aws.instances` table at load time) stand in. An offer without its own observation time carries the
    snapshot's."""
    observed = snapshot.fetched_at.isoformat()
    spec_gpus = cloud_instance_gpus_for_snapshot(snapshot=snapshot)
    return tuple(
        CloudPriceRecord(
            instance_type=o.instance_type,
            region=o.region,
            purchase=o.purchase,
            usd_per_hour=o.usd_per_hour,
            gpus=spec_gpus.get(o.instance_type, (o.gpus, o.gpu_model))[0],
            gpu_model=spec_gpus.get(o.instance_type, (o.gpus, o.gpu_model))[1],
            availability_zone_id=o.availability_zone_id,
            capacity_constrained=o.capacity_constrained,
            observed_at=o.observed_at.isoformat() if o.observed_at else observed,
            provider=o.provider,
            source=o.source,
            confidence=o.confidence,
        )
        for o in cloud_offers_for_snapshot(snapshot=snapshot)
    )


def price_snapshot_note(*, snapshot: PriceSnapshot | None) -> str:
    """What a plan priced with `snapshot` must say about it: nothing when fresh, else why cloud prices are
    missing or old."""
    if snapshot is None:
        return "No price snapshot is loaded (run `manage.py load_prices`): cloud options are not priced."
    if snapshot.is_stale:
        return (
            f"Cloud prices are from snapshot #{snapshot.pk} observed {snapshot.fetched_at:%Y-%m-%d} "
            f"({snapshot.age_days} days old): older than the freshness limit; refresh prices and re-price."
        )
    return ""


def price_references_current() -> PriceReferences:
    """The on-prem references from the editable tables; where a table is still empty (a database that never ran
    `load_prices`), the fixture files stand in for it, so a plan is never priced against nothing. The files are
    read only when a table is empty."""
    fallback: PriceReferences | None = None

    def files() -> PriceReferences:
        nonlocal fallback
        if fallback is None:
            fallback = price_references_load()
        return fallback

    parts = (
        tuple(
            PartPriceRecord(
                part_number=r.part_number,
                catalog_id=r.catalog_id,
                unit_price_usd=r.unit_price_usd,
                source=r.source,
                as_of=r.as_of,
                confidence=r.confidence,
                description=r.description,
                category=r.category,
            )
            for r in ComponentPrice.objects.all()
        )
        or files().parts
    )
    param_rows = list(CostParameterRow.objects.all())
    parameters = {
        r.name: ParameterRecord(r.name, r.value, r.unit, r.source, r.as_of, r.confidence)
        for r in param_rows
        if not r.scope
    }
    # A parameter added to the fixture after the table was loaded (issue 14's finance terms) stands in from the
    # file until `load_prices` runs, so a plan never misses one.
    parameters = {**files().parameters, **parameters}
    carbon = {
        r.scope: ParameterRecord(f"{r.name}.{r.scope}", r.value, r.unit, r.source, r.as_of, r.confidence)
        for r in param_rows
        if r.name == GRID_INTENSITY and r.scope
    } or dict(files().carbon)
    bands = (
        tuple(
            SpotBandRecord(r.region, r.instance_type, r.band, r.savings_percent, r.as_of, r.source)
            for r in SpotAdvisorBand.objects.all()
        )
        or files().spot_bands
    )
    return PriceReferences(parts=parts, parameters=parameters, carbon=carbon, spot_bands=bands)


def price_book_for_snapshot(*, snapshot: PriceSnapshot | None) -> PriceBook:
    """Every price a plan is costed with: `snapshot`'s cloud offers (none without one), the current on-prem
    references and the snapshot note. Plain pricing records; `planner.adapter` turns them into costing inputs."""
    return PriceBook(
        cloud_prices=cloud_prices_for_snapshot(snapshot=snapshot) if snapshot is not None else (),
        references=price_references_current(),
        snapshot_note=price_snapshot_note(snapshot=snapshot),
    )
