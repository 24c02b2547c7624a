"""Writes for the pricing app: store price snapshots and their cloud offers (HackSoft services).

Both entry points end in `_snapshot_store`, which writes one `PriceSnapshot` and all of its `CloudOffer`s in a
single transaction, so a plan never sees a half-loaded snapshot. Both also run the same fetch code
(`pricing.aws.fetch.AwsPriceFetcher`): live with real boto3 clients, offline with Stubber-backed clients that
replay `fixtures/aws/`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .aws.fetch import AwsClients, AwsPriceFetcher, aws_clients_from_default_chain
from .aws.offers import OfferRecord, json_safe
from .aws.recorded import fixtures_content_sha256, recorded_clients
from .models import CloudOffer, ComponentPrice, CostParameter, PriceSnapshot, SpotAdvisorBand
from .reference import price_references_load
from .selectors import GRID_INTENSITY, price_snapshot_by_content

__all__ = [
    "FIXTURES_AWS_DIR",
    "FIXTURE_SOURCE",
    "LIVE_SOURCE",
    "PriceRefreshError",
    "ReferenceLoadReport",
    "component_price_edit",
    "price_references_load_fixtures",
    "price_snapshot_load_fixtures",
    "price_snapshot_refresh_live",
]

FIXTURES_AWS_DIR = Path(settings.BASE_DIR) / "fixtures" / "aws"
FIXTURE_SOURCE = "AWS recorded responses (fixtures/aws)"
LIVE_SOURCE = "AWS Price List API and EC2 (live)"


class PriceRefreshError(Exception):
    """A refresh that produced nothing usable; raised instead of storing an empty snapshot."""


def price_snapshot_load_fixtures(*, folder: Path | str | None = None, source: str | None = None) -> PriceSnapshot:
    """Load the recorded AWS responses as a `fixture` snapshot; loading the same files again returns the first.

    The responses are replayed through the live fetch code (see `pricing.aws.recorded`), so the offline
    snapshot is exactly what a live refresh would have stored had AWS answered that way. `fetched_at` is the
    manifest's `observed_at`, never the load time: the prices are as old as their sources.
    """
    folder = Path(folder) if folder is not None else FIXTURES_AWS_DIR
    content_sha256 = fixtures_content_sha256(folder)
    existing = price_snapshot_by_content(content_sha256=content_sha256, kind=PriceSnapshot.Kind.FIXTURE)
    if existing is not None:
        return existing
    with recorded_clients(folder) as (clients, manifest):
        records = AwsPriceFetcher(clients, now=lambda: manifest.observed_at).collect(
            regions=manifest.regions,
            instance_types=manifest.instance_types,
            capacity_block_types=manifest.capacity_block_types,
            capacity_block_instance_count=manifest.capacity_block_instance_count,
            capacity_block_duration_hours=manifest.capacity_block_duration_hours,
        )
    return _snapshot_store(
        kind=PriceSnapshot.Kind.FIXTURE,
        source=source or FIXTURE_SOURCE,
        fetched_at=manifest.observed_at,
        content_sha256=content_sha256,
        records=records,
        notes=manifest.source,
        reuse_same_content=True,
    )


def price_snapshot_refresh_live(
    *,
    regions: Sequence[str],
    instance_types: Sequence[str],
    clients: AwsClients | None = None,
    capacity_block_types: Sequence[str] | None = None,
) -> PriceSnapshot:
    """Fetch current prices from AWS and store them as a new `live` snapshot.

    `clients` defaults to boto3's standard credential chain (raises botocore's NoCredentialsError if there
    is none); tests pass Stubber-attached clients. Every live refresh is stored, even if the prices did not
    change, because the snapshot's date is itself information ("prices as of ...").
    """
    regions, instance_types = list(regions), list(instance_types)
    if not regions or not instance_types:
        raise ValueError("refresh needs at least one region and one instance type")
    if clients is None:
        clients = aws_clients_from_default_chain(regions)
    fetched_at = timezone.now()
    fetcher = AwsPriceFetcher(clients)
    records = fetcher.collect(regions=regions, instance_types=instance_types, capacity_block_types=capacity_block_types)
    if not records:
        raise PriceRefreshError(f"AWS returned no prices for {', '.join(instance_types)} in {', '.join(regions)}")
    notes = [f"regions: {', '.join(regions)}", f"instance types: {', '.join(instance_types)}", *fetcher.warnings]
    return _snapshot_store(
        kind=PriceSnapshot.Kind.LIVE,
        source=LIVE_SOURCE,
        fetched_at=fetched_at,
        content_sha256=_records_sha256(records),
        records=records,
        notes="\n".join(notes),
        reuse_same_content=False,
    )


def _records_sha256(records: Sequence[OfferRecord]) -> str:
    """A hash of the normalised prices, so two live snapshots with identical prices can be recognised."""
    canonical = [
        [r.instance_type, r.region, r.availability_zone_id, r.purchase, str(r.usd_per_hour), r.capacity_constrained]
        for r in records
    ]
    return hashlib.sha256(json.dumps(canonical, separators=(",", ":")).encode()).hexdigest()


def _snapshot_store(
    *,
    kind: str,
    source: str,
    fetched_at: datetime,
    content_sha256: str,
    records: Sequence[OfferRecord],
    notes: str,
    reuse_same_content: bool,
) -> PriceSnapshot:
    """One transaction: the snapshot row and every offer, or nothing.

    The same-content check is repeated inside the transaction so two concurrent loads cannot both insert
    (on SQLite the IMMEDIATE transaction mode serialises them; elsewhere the window is tiny and harmless).
    """
    with transaction.atomic():
        if reuse_same_content:
            existing = price_snapshot_by_content(content_sha256=content_sha256, kind=kind)
            if existing is not None:
                return existing
        snapshot = PriceSnapshot.objects.create(
            kind=kind, source=source, fetched_at=fetched_at, content_sha256=content_sha256, notes=notes
        )
        CloudOffer.objects.bulk_create(
            CloudOffer(
                snapshot=snapshot,
                provider="aws",
                instance_type=record.instance_type,
                region=record.region,
                availability_zone_id=record.availability_zone_id,
                purchase=record.purchase,
                usd_per_hour=record.usd_per_hour,
                gpus=record.gpus,
                gpu_model=record.gpu_model,
                capacity_constrained=record.capacity_constrained,
                observed_at=fetched_at,
                raw=json_safe(record.raw),
            )
            for record in records
        )
    return snapshot


# ------------------------------------------------------------------------------- on-prem price references


@dataclass(frozen=True)
class ReferenceLoadReport:
    created: int
    updated: int
    unchanged: int
    kept_local_edits: int

    def __str__(self) -> str:
        return (
            f"{self.created} created, {self.updated} updated, {self.unchanged} unchanged, "
            f"{self.kept_local_edits} kept (edited in the admin)"
        )


def price_references_load_fixtures(*, folder: Path | str | None = None) -> ReferenceLoadReport:
    """Load fixtures/prices/ into ComponentPrice, CostParameter and SpotAdvisorBand; idempotent.

    Rows are matched on their natural key. A row edited in the admin (`locally_edited`) is never overwritten;
    any other row is brought back to the fixture's values, so `make install` after a fixture change updates it.
    """
    refs = price_references_load(folder)
    counts = {"created": 0, "updated": 0, "unchanged": 0, "kept_local_edits": 0}

    def upsert(model: type, key: dict, values: dict) -> None:
        row = model.objects.filter(**key).first()
        if row is None:
            model.objects.create(**key, **values)
            counts["created"] += 1
        elif row.locally_edited:
            counts["kept_local_edits"] += 1
        elif any(getattr(row, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(row, name, value)
            row.save()
            counts["updated"] += 1
        else:
            counts["unchanged"] += 1

    with transaction.atomic():
        for part in refs.parts:
            upsert(
                ComponentPrice,
                {"part_number": part.part_number, "catalog_id": part.catalog_id},
                {
                    "description": part.description,
                    "category": part.category,
                    "unit_price_usd": part.unit_price_usd,
                    "source": part.source,
                    "as_of": part.as_of,
                    "confidence": part.confidence,
                },
            )
        for name, param in refs.parameters.items():
            upsert(
                CostParameter,
                {"name": name, "scope": ""},
                {
                    "value": param.value,
                    "unit": param.unit,
                    "source": param.source,
                    "as_of": param.as_of,
                    "confidence": param.confidence,
                },
            )
        for scope, param in refs.carbon.items():
            upsert(
                CostParameter,
                {"name": GRID_INTENSITY, "scope": scope},
                {
                    "value": param.value,
                    "unit": param.unit,
                    "source": param.source,
                    "as_of": param.as_of,
                    "confidence": param.confidence,
                },
            )
        for band in refs.spot_bands:
            upsert(
                SpotAdvisorBand,
                {"region": band.region, "instance_type": band.instance_type},
                {
                    "band": band.band,
                    "savings_percent": band.savings_percent,
                    "as_of": band.as_of,
                    "source": band.source,
                },
            )
    return ReferenceLoadReport(**counts)


def component_price_edit(*, price: ComponentPrice, unit_price_usd: Decimal, source: str, as_of: str) -> ComponentPrice:
    """An admin edit: store it and mark the row so fixture reloads leave it alone."""
    price.unit_price_usd = unit_price_usd
    price.source = source
    price.as_of = as_of
    price.locally_edited = True
    price.save()
    return price
