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
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .aws.fetch import AwsClients, AwsPriceFetcher, aws_clients_from_default_chain
from .aws.offers import OfferRecord, json_safe
from .aws.recorded import fixtures_content_sha256, offers_sourced, recorded_clients
from .aws.specs import ResolvedSpec, instance_specs_resolve, instance_type_patterns
from .azure.fetch import AzurePriceFetcher, GetJson, urllib_get_json
from .azure.parse import AZURE_PROVIDER
from .market import MarketFolders, market_content_sha256, market_recorded_offers
from .models import CloudInstanceType, CloudOffer, PriceSnapshot
from .selectors import price_snapshot_by_content, price_snapshot_latest

__all__ = [
    "AZURE_LIVE_SOURCE",
    "FIXTURES_AWS_DIR",
    "FIXTURE_SOURCE",
    "LIVE_SOURCE",
    "MARKET_FOLDERS",
    "PriceRefreshError",
    "fixture_snapshot_sha256",
    "price_snapshot_load_fixtures",
    "price_snapshot_refresh_azure",
    "price_snapshot_refresh_live",
]

FIXTURES_AWS_DIR = Path(settings.BASE_DIR) / "fixtures" / "aws"
MARKET_FOLDERS = MarketFolders.under(Path(settings.BASE_DIR) / "fixtures")
FIXTURE_SOURCE = "AWS recorded responses (fixtures/aws) with recorded Azure, Google Cloud and neocloud price lists"
LIVE_SOURCE = "AWS Price List API and EC2 (live)"


class PriceRefreshError(Exception):
    """A refresh that produced nothing usable; raised instead of storing an empty snapshot."""


def fixture_snapshot_sha256(folder: Path, *, market: MarketFolders | None = MARKET_FOLDERS) -> str:
    """The key of the snapshot these recorded files make: the AWS folder's hash, combined with the recorded
    market files' hash when they are loaded with it (a changed price anywhere makes a new snapshot)."""
    content_sha256 = fixtures_content_sha256(Path(folder))
    if market is None:
        return content_sha256
    return hashlib.sha256((content_sha256 + market_content_sha256(market)).encode()).hexdigest()


def price_snapshot_load_fixtures(
    *, folder: Path | str | None = None, source: str | None = None, market: MarketFolders | None = MARKET_FOLDERS
) -> PriceSnapshot:
    """Load the recorded AWS responses, and (unless `market` is None) the recorded Azure, Google Cloud and
    neocloud prices, as one `fixture` snapshot; loading the same files again returns the first.

    The AWS responses are replayed through the live fetch code (see `pricing.aws.recorded`), the Azure pages
    through the live Azure fetcher, so the offline snapshot is what a live refresh would have stored had the
    providers answered that way. `fetched_at` is the AWS manifest's `observed_at`, never the load time; every
    offer keeps its own source's date.
    """
    folder = Path(folder) if folder is not None else FIXTURES_AWS_DIR
    content_sha256 = fixture_snapshot_sha256(folder, market=market)
    existing = price_snapshot_by_content(content_sha256=content_sha256, kind=PriceSnapshot.Kind.FIXTURE)
    if existing is not None:
        return existing
    with recorded_clients(folder) as (clients, manifest):
        fetcher = AwsPriceFetcher(clients, now=lambda: manifest.observed_at)
        records = fetcher.collect(
            regions=manifest.regions,
            instance_types=manifest.instance_types,
            capacity_block_types=manifest.capacity_block_types,
            capacity_block_instance_count=manifest.capacity_block_instance_count,
            capacity_block_duration_hours=manifest.capacity_block_duration_hours,
        )
        records = offers_sourced(records, manifest.offer_sources)
        if market is not None:
            records = [*records, *market_recorded_offers(market)]
        specs: list[ResolvedSpec] = []
        if manifest.spec_region:  # folders recorded before specs existed have none: offers keep the curated GPUs
            specs = instance_specs_resolve(
                fetcher.instance_types(region=manifest.spec_region, patterns=manifest.spec_patterns)
            )
    return _snapshot_store(
        kind=PriceSnapshot.Kind.FIXTURE,
        source=source or FIXTURE_SOURCE,
        fetched_at=manifest.observed_at,
        content_sha256=content_sha256,
        records=records,
        specs=specs,
        notes="\n".join([manifest.source, *_spec_warnings(specs)]),
        reuse_same_content=True,
    )


def price_snapshot_refresh_live(
    *,
    regions: Sequence[str],
    instance_types: Sequence[str],
    clients: AwsClients | None = None,
    capacity_block_types: Sequence[str] | None = None,
    spec_patterns: Sequence[str] | None = None,
) -> PriceSnapshot:
    """Fetch current prices from AWS and store them as a new `live` snapshot; the other providers' offers of the
    latest snapshot are carried into it unchanged (each keeps its own source and date).

    GPU specs come from one `describe_instance_types` query in the first region, filtered by instance-type
    wildcards (`spec_patterns`, default: the GPU families plus the requested types' families). If AWS
    refuses that query the prices are still stored and the offers keep the curated GPU table; the snapshot's
    notes say so.

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
    patterns = spec_patterns or instance_type_patterns(instance_types)
    specs = _live_specs(fetcher, region=regions[0], patterns=patterns)
    carried, carried_note = _carried_offers(refreshed="aws")
    records = [*records, *carried]
    notes = [f"regions: {', '.join(regions)}", f"instance types: {', '.join(instance_types)}", *fetcher.warnings]
    notes += carried_note
    notes += _spec_warnings(specs)
    return _snapshot_store(
        kind=PriceSnapshot.Kind.LIVE,
        source=LIVE_SOURCE,
        fetched_at=fetched_at,
        content_sha256=_records_sha256(records),
        records=records,
        specs=specs,
        notes="\n".join(notes),
        reuse_same_content=False,
    )


AZURE_LIVE_SOURCE = "Azure Retail Prices API (live)"


def price_snapshot_refresh_azure(*, regions: Sequence[str], get_json: GetJson | None = None) -> PriceSnapshot:
    """Fetch current Azure GPU prices and store them as a new `live` snapshot that also carries every other
    provider's offers from the latest snapshot unchanged (each keeps its own source and date), so plans priced
    with it still see the whole market.

    `get_json` defaults to the standard-library getter (network: only when a user runs `refresh_prices
    --azure`); tests pass a `RecordedPages` getter. Raises PriceRefreshError when Azure returns no GPU prices.
    """
    regions = list(dict.fromkeys(regions))
    if not regions:
        raise ValueError("an Azure refresh needs at least one region (e.g. eastus)")
    fresh = AzurePriceFetcher(get_json or urllib_get_json).collect(regions=regions)
    if not fresh:
        raise PriceRefreshError(f"Azure returned no GPU VM prices in {', '.join(regions)}")
    carried, carried_note = _carried_offers(refreshed=AZURE_PROVIDER)
    records = [*fresh, *carried]
    notes = [f"Azure regions: {', '.join(regions)}", *carried_note]
    return _snapshot_store(
        kind=PriceSnapshot.Kind.LIVE,
        source=AZURE_LIVE_SOURCE,
        fetched_at=timezone.now(),
        content_sha256=_records_sha256(records),
        records=records,
        notes="\n".join(notes),
        reuse_same_content=False,
    )


def _carried_offers(*, refreshed: str) -> tuple[list[OfferRecord], list[str]]:
    """Every other provider's offers of the latest snapshot, unchanged (own source, date and confidence), so a
    refresh of one provider does not drop the rest of the market from the plans priced after it."""
    base = price_snapshot_latest()
    if base is None:
        return [], []
    carried = [_offer_record(o) for o in base.offers.exclude(provider=refreshed)]
    if not carried:
        return [], []
    return carried, [f"other providers' offers carried unchanged from snapshot #{base.pk} ({base.source})"]


def _offer_record(offer: CloudOffer) -> OfferRecord:
    """A stored offer as a record again (to carry it into a new snapshot with its own source and date)."""
    return OfferRecord(
        instance_type=offer.instance_type,
        region=offer.region,
        availability_zone_id=offer.availability_zone_id,
        purchase=offer.purchase,
        usd_per_hour=offer.usd_per_hour,
        gpus=offer.gpus,
        gpu_model=offer.gpu_model,
        capacity_constrained=offer.capacity_constrained,
        raw=offer.raw,
        provider=offer.provider,
        source=offer.source,
        observed_at=offer.observed_at.isoformat(),
        confidence=offer.confidence,
    )


def _live_specs(fetcher: AwsPriceFetcher, *, region: str, patterns: Sequence[str]) -> list[ResolvedSpec]:
    from botocore.exceptions import ClientError

    try:
        return instance_specs_resolve(fetcher.instance_types(region=region, patterns=patterns))
    except ClientError as error:
        fetcher.warnings.append(f"instance type specs unavailable ({error}); GPUs per type from the curated table")
        return []


def _observed_at(text: str, *, default: datetime) -> datetime:
    """An offer's source date (ISO date or timestamp; a bare date is midnight UTC), else the snapshot's date."""
    if not text:
        return default
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _spec_warnings(specs: Sequence[ResolvedSpec]) -> list[str]:
    return [warning for spec in specs for warning in spec.warnings]


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
    specs: Sequence[ResolvedSpec] = (),
) -> PriceSnapshot:
    """One transaction: the snapshot row, every offer and every instance type spec, or nothing.

    An offer takes its GPU count and model from the snapshot's spec of its type when that spec maps to a catalog
    GPU, else keeps the curated table's (`pricing.aws.instances`), so a snapshot's offers and specs agree.

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
        gpus_by_type = {s.instance_type: (s.spec.gpus, s.gpu_model) for s in specs if s.gpu_model and s.spec.gpus}

        def curated(record: OfferRecord) -> tuple[int, str]:
            return (record.gpus, record.gpu_model)

        CloudOffer.objects.bulk_create(
            CloudOffer(
                snapshot=snapshot,
                provider=record.provider,
                source=record.source or source,
                confidence=record.confidence,
                instance_type=record.instance_type,
                region=record.region,
                availability_zone_id=record.availability_zone_id,
                purchase=record.purchase,
                usd_per_hour=record.usd_per_hour,
                gpus=gpus_by_type.get(record.instance_type, curated(record))[0],
                gpu_model=gpus_by_type.get(record.instance_type, curated(record))[1],
                capacity_constrained=record.capacity_constrained,
                observed_at=_observed_at(record.observed_at, default=fetched_at),
                raw=json_safe(record.raw),
            )
            for record in records
        )
        CloudInstanceType.objects.bulk_create(
            CloudInstanceType(
                snapshot=snapshot,
                provider="aws",
                instance_type=s.instance_type,
                gpus=s.spec.gpus,
                gpu_fraction=s.spec.gpu_fraction,
                gpu_model=s.gpu_model,
                gpu_name=s.spec.gpu_name or "",
                gpu_manufacturer=s.spec.gpu_manufacturer or "",
                gpu_memory_mib=s.spec.gpu_memory_mib,
                gpu_memory_gib=s.gpu_memory_gib,
                vcpus=s.spec.vcpus,
                memory_mib=s.spec.memory_mib,
                efa_max_interfaces=s.spec.efa_max_interfaces,
                overridden_fields=list(s.overridden),
                overrides_version=s.overrides_version,
                raw=json_safe(s.api.raw),
            )
            for s in specs
        )
    return snapshot
