"""`manage.py load_prices`: the offline prices: recorded AWS responses (fixtures/aws) as a price snapshot, and the
on-prem references (fixtures/prices: component prices, costing parameters, carbon intensities, spot bands)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from pricing.models import PriceSnapshot
from pricing.reference_services import price_references_load_fixtures
from pricing.references import FIXTURES_PRICES_DIR
from pricing.selectors import cloud_offer_counts, cloud_offers_for_snapshot, price_snapshot_by_content
from pricing.services import (
    FIXTURES_AWS_DIR,
    fixture_snapshot_sha256,
    price_snapshot_load_fixtures,
)


class Command(BaseCommand):
    help = (
        "Load the recorded AWS price responses (fixtures/aws) as a price snapshot, replayed through the live "
        "fetch code, and the on-prem price references (fixtures/prices). Running it again with unchanged files "
        "does nothing; rows edited in the admin are kept."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--folder", type=Path, default=FIXTURES_AWS_DIR, help=f"Recorded responses (default {FIXTURES_AWS_DIR})."
        )
        parser.add_argument(
            "--references",
            type=Path,
            default=FIXTURES_PRICES_DIR,
            help=f"On-prem price references (default {FIXTURES_PRICES_DIR}).",
        )

    def handle(self, *args, folder: Path, references: Path = FIXTURES_PRICES_DIR, verbosity: int = 1, **options):
        if not (folder / "manifest.json").is_file():
            raise CommandError(f"{folder} has no manifest.json; is it a recorded-responses folder?")
        try:
            report = price_references_load_fixtures(folder=references)
        except (OSError, ValueError, KeyError) as error:
            raise CommandError(f"could not load the price references in {references}: {error}") from error
        self.stdout.write(f"Price references ({references.name}): {report}.")
        already = price_snapshot_by_content(
            content_sha256=fixture_snapshot_sha256(folder), kind=PriceSnapshot.Kind.FIXTURE
        )
        snapshot = price_snapshot_load_fixtures(folder=folder)
        counts = cloud_offer_counts(snapshot=snapshot)
        total = sum(counts.values())
        summary = ", ".join(f"{purchase} {n}" for purchase, n in counts.items())
        if already is not None:
            self.stdout.write(
                f"Price snapshot #{snapshot.pk} already holds these files ({total} offers); nothing loaded."
            )
            return
        self.stdout.write(
            self.style.SUCCESS(
                f"Loaded price snapshot #{snapshot.pk}: {snapshot.source}, observed {snapshot.fetched_at:%Y-%m-%d}."
            )
        )
        self.stdout.write(f"{total} offers: {summary}")
        if verbosity >= 2:
            for offer in cloud_offers_for_snapshot(snapshot=snapshot):
                flag = "  (no spare capacity)" if offer.capacity_constrained else ""
                zone = offer.availability_zone_id or "-"
                self.stdout.write(
                    f"  {offer.instance_type:18} {offer.region:10} {zone:9} {offer.purchase:15} "
                    f"{offer.usd_per_hour:>12} USD/h{flag}"
                )
