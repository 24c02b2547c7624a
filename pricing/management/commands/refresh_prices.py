"""`manage.py refresh_prices`: fetch current AWS GPU prices with boto3 and store them as a live snapshot."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from pricing.aws.fetch import aws_clients_from_default_chain
from pricing.aws.instances import DEFAULT_INSTANCE_TYPES, DEFAULT_REGIONS
from pricing.selectors import cloud_offer_counts
from pricing.services import PriceRefreshError, price_snapshot_refresh_live

NO_CREDENTIALS_HELP = (
    "No AWS credentials found. refresh_prices uses boto3's standard credential chain; provide credentials in "
    "one of these ways:\n"
    "  - environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN for temporary "
    "credentials);\n"
    "  - a profile: AWS_PROFILE=<name> with ~/.aws/credentials or ~/.aws/config (`aws configure`, "
    "`aws sso login`);\n"
    "  - an IAM role for the EC2 instance, ECS task or EKS pod running this command.\n"
    "The identity needs pricing:GetProducts, ec2:DescribeSpotPriceHistory and "
    "ec2:DescribeCapacityBlockOfferings. To use the bundled offline prices instead, run `manage.py load_prices`."
)


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

    def handle(self, *args, regions: list[str] | None, instance_types: list[str] | None, **options) -> None:
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

        regions = list(dict.fromkeys(regions or DEFAULT_REGIONS))
        instance_types = list(dict.fromkeys(instance_types or DEFAULT_INSTANCE_TYPES))
        try:
            clients = aws_clients_from_default_chain(regions)
            snapshot = price_snapshot_refresh_live(regions=regions, instance_types=instance_types, clients=clients)
        except NoCredentialsError as error:
            raise CommandError(NO_CREDENTIALS_HELP) from error
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "?")
            raise CommandError(f"AWS refused the request ({code}): {error}") from error
        except (BotoCoreError, PriceRefreshError) as error:
            raise CommandError(f"Price refresh failed: {error}") from error
        counts = cloud_offer_counts(snapshot=snapshot)
        self.stdout.write(
            self.style.SUCCESS(f"Stored live price snapshot #{snapshot.pk} ({snapshot.fetched_at:%Y-%m-%d %H:%M} UTC).")
        )
        self.stdout.write(
            f"{sum(counts.values())} offers: " + ", ".join(f"{purchase} {n}" for purchase, n in counts.items())
        )
