"""`manage.py refresh_prices`: fetch current AWS GPU prices with boto3 (or, with --azure, Azure's from the public
Retail Prices API) and store them as a live snapshot."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from pricing.aws.fetch import aws_clients_from_default_chain
from pricing.aws.instances import DEFAULT_INSTANCE_TYPES, DEFAULT_REGIONS
from pricing.selectors import cloud_offer_counts, price_snapshot_latest
from pricing.services import (
    PriceRefreshError,
    price_snapshot_load_fixtures,
    price_snapshot_refresh_azure,
    price_snapshot_refresh_live,
)

NO_CREDENTIALS_HELP = (
    "No AWS credentials found. refresh_prices uses boto3's standard credential chain; provide credentials in "
    "one of these ways:\n"
    "  - environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN for temporary "
    "credentials);\n"
    "  - a profile: AWS_PROFILE=<name> with ~/.aws/credentials or ~/.aws/config (`aws configure`, "
    "`aws sso login`);\n"
    "  - an IAM role for the EC2 instance, ECS task or EKS pod running this command.\n"
    "The identity needs pricing:GetProducts, ec2:DescribeSpotPriceHistory, ec2:DescribeCapacityBlockOfferings, "
    "ec2:DescribeInstanceTypes and savingsplans:DescribeSavingsPlansOfferingRates. To use the bundled offline "
    "prices instead, run `manage.py load_prices`."
)

EXPIRED_CODES = frozenset({"ExpiredToken", "ExpiredTokenException", "RequestExpired", "TokenRefreshRequired"})
THROTTLED_CODES = frozenset(
    {"Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequestsException", "RequestThrottled"}
)


def last_good_snapshot_note() -> str:
    """What plans keep using after a failed refresh (nothing is stored on failure)."""
    last = price_snapshot_latest()
    if last is None:
        return "No price snapshot is stored yet; run `manage.py load_prices` for the bundled offline prices."
    stale = " (stale: plans priced with it say so)" if last.is_stale else ""
    return (
        f"Nothing was stored; the last good snapshot #{last.pk} ({last.source}, observed "
        f"{last.fetched_at:%Y-%m-%d}, {last.age_days} days old){stale} stays in use."
    )


def client_error_message(error) -> str:
    code = error.response.get("Error", {}).get("Code", "?")
    if code in EXPIRED_CODES:
        return (
            f"AWS credentials have expired ({code}). Renew them (`aws sso login`, a fresh session token, or "
            "the role's credentials) and run refresh_prices again."
        )
    if code in THROTTLED_CODES:
        return (
            f"AWS throttled the price requests ({code}) even after botocore's retries. Wait a few minutes, or "
            "refresh fewer regions/instance types at a time."
        )
    return f"AWS refused the request ({code}): {error}"


class Command(BaseCommand):
    help = "Fetch current on-demand, reserved, spot and Capacity Block prices from AWS (needs AWS credentials)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--region",
            action="append",
            dest="regions",
            metavar="REGION",
            help=f"AWS region to price; repeat for several (default: {' '.join(DEFAULT_REGIONS)}).",
        )
        parser.add_argument(
            "--instance-type",
            action="append",
            dest="instance_types",
            metavar="TYPE",
            help=f"Instance type to price; repeat for several (default: {' '.join(DEFAULT_INSTANCE_TYPES)}).",
        )
        parser.add_argument(
            "--azure",
            action="store_true",
            help="Refresh Azure GPU prices from the public Azure Retail Prices API (no credentials) instead of AWS.",
        )
        parser.add_argument(
            "--azure-region",
            action="append",
            dest="azure_regions",
            metavar="REGION",
            help="Azure region to price with --azure; repeat for several (default: eastus).",
        )
        parser.add_argument(
            "--from-dir",
            type=Path,
            dest="from_dir",
            metavar="DIR",
            help="Load recorded responses from DIR (the fixtures/aws layout, with manifest.json) instead of AWS.",
        )

    def handle(
        self,
        *args,
        regions: list[str] | None,
        instance_types: list[str] | None,
        from_dir: Path | None = None,
        azure: bool = False,
        azure_regions: list[str] | None = None,
        **options,
    ) -> None:
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

        if from_dir is not None:
            self._from_dir(from_dir)
            return
        if azure:
            self._azure(azure_regions or ["eastus"])
            return

        regions = list(dict.fromkeys(regions or DEFAULT_REGIONS))
        instance_types = list(dict.fromkeys(instance_types or DEFAULT_INSTANCE_TYPES))
        try:
            clients = aws_clients_from_default_chain(regions)
            snapshot = price_snapshot_refresh_live(regions=regions, instance_types=instance_types, clients=clients)
        except NoCredentialsError as error:
            raise CommandError(f"{NO_CREDENTIALS_HELP}\n{last_good_snapshot_note()}") from error
        except ClientError as error:
            raise CommandError(f"{client_error_message(error)}\n{last_good_snapshot_note()}") from error
        except (BotoCoreError, PriceRefreshError) as error:
            raise CommandError(f"Price refresh failed: {error}\n{last_good_snapshot_note()}") from error
        counts = cloud_offer_counts(snapshot=snapshot)
        self.stdout.write(
            self.style.SUCCESS(f"Stored live price snapshot #{snapshot.pk} ({snapshot.fetched_at:%Y-%m-%d %H:%M} UTC).")
        )
        self.stdout.write(
            f"{sum(counts.values())} offers: " + ", ".join(f"{purchase} {n}" for purchase, n in counts.items())
        )

    def _azure(self, regions: list[str]) -> None:
        """Azure's public price API: network only here, when a user runs the command."""
        try:
            snapshot = price_snapshot_refresh_azure(regions=regions)
        except (OSError, ValueError, PriceRefreshError) as error:  # URLError is an OSError
            raise CommandError(f"Azure price refresh failed: {error}\n{last_good_snapshot_note()}") from error
        counts = cloud_offer_counts(snapshot=snapshot)
        self.stdout.write(
            self.style.SUCCESS(
                f"Stored live price snapshot #{snapshot.pk} with Azure prices for {', '.join(regions)}: "
                f"{sum(counts.values())} offers in all: " + ", ".join(f"{p} {n}" for p, n in counts.items())
            )
        )

    def _from_dir(self, folder: Path) -> None:
        if not (folder / "manifest.json").is_file():
            raise CommandError(f"{folder} has no manifest.json; --from-dir needs the fixtures/aws layout.")
        try:
            snapshot = price_snapshot_load_fixtures(
                folder=folder, source=f"AWS recorded responses ({folder})", market=None
            )
        except (OSError, ValueError, KeyError, AssertionError) as error:
            raise CommandError(f"Could not load {folder}: {error}\n{last_good_snapshot_note()}") from error
        counts = cloud_offer_counts(snapshot=snapshot)
        self.stdout.write(
            self.style.SUCCESS(
                f"Price snapshot #{snapshot.pk} from {folder} (observed {snapshot.fetched_at:%Y-%m-%d}): "
                f"{sum(counts.values())} offers: " + ", ".join(f"{purchase} {n}" for purchase, n in counts.items())
            )
        )
