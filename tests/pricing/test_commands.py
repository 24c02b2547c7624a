"""`load_prices` and `refresh_prices` from the command line."""

from __future__ import annotations

from decimal import Decimal

import boto3
import botocore.session
import pytest
from django.core.management import ManagementUtility, call_command
from django.core.management.base import CommandError

from pricing.aws import fetch
from pricing.aws.recorded import recorded_clients
from pricing.models import CloudOffer, PriceSnapshot
from tests.pricing.conftest import FIXTURES


@pytest.mark.django_db
def test_load_prices_twice_loads_once(capsys):
    call_command("load_prices")
    out = capsys.readouterr().out
    assert "Loaded price snapshot #" in out
    assert "AWS recorded responses (fixtures/aws) with recorded Azure, Google Cloud and neocloud price lists" in out
    assert "observed 2026-11-09" in out
    # AWS 41 (on-demand 6 types x 2 regions, 20 spot zones, p5 reserved 1y/3y x 2 regions, p5 Savings Plans 1y/3y
    # in us-east-1, capacity blocks for p5, p5e, p5en in us-east-1) + Azure 6 (H100: on-demand, spot, 1y, 3y;
    # H200: on-demand, 1y) + Google Cloud 6 (5 machine types on-demand, A3 High 1y commitment) + 7 price-list
    # records = 60
    assert (
        "60 offers: on_demand 24, spot 21, reserved_1y 6, reserved_3y 4, savings_plan_1y 1, savings_plan_3y 1, "
        "capacity_block 3" in out
    )

    call_command("load_prices")
    out = capsys.readouterr().out
    assert "already holds these files" in out and "nothing loaded" in out
    assert PriceSnapshot.objects.count() == 1
    assert CloudOffer.objects.count() == 60


@pytest.mark.django_db
def test_load_prices_verbose_lists_offers(capsys):
    call_command("load_prices", verbosity=2)
    out = capsys.readouterr().out
    assert "p5.48xlarge" in out and "55.040000 USD/h" in out
    assert out.count("(no spare capacity)") == 2


@pytest.mark.django_db
def test_load_prices_rejects_a_folder_without_manifest(tmp_path):
    with pytest.raises(CommandError, match=r"no manifest\.json"):
        call_command("load_prices", "--folder", str(tmp_path))


@pytest.fixture
def no_aws_credentials(monkeypatch, tmp_path):
    """An environment where boto3's whole default chain comes up empty, without any network lookup."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(name, "")
    for name in (
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_ROLE_ARN",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("BOTO_CONFIG", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance-metadata (169.254.169.254) probe
    monkeypatch.setenv("HOME", str(tmp_path))

    def no_clients(*args, **kwargs):
        raise AssertionError("no AWS client may be created without credentials")

    # The factory must stop before building clients; if it did not, these would fail the test.
    monkeypatch.setattr(boto3.session.Session, "client", no_clients)
    monkeypatch.setattr(botocore.session.Session, "create_client", no_clients)


@pytest.mark.django_db
def test_refresh_prices_without_credentials_exits_nonzero(no_aws_credentials, no_network, capsys):
    utility = ManagementUtility(["manage.py", "refresh_prices", "--region", "us-east-1", "--region", "us-west-2"])
    with pytest.raises(SystemExit) as exit_info:
        utility.execute()
    assert exit_info.value.code != 0
    err = capsys.readouterr().err
    assert "No AWS credentials found" in err
    assert "AWS_ACCESS_KEY_ID" in err and "AWS_PROFILE" in err and "load_prices" in err
    assert no_network == []  # checked again by the fixture at teardown


@pytest.mark.django_db
def test_refresh_prices_without_credentials_via_call_command(no_aws_credentials):
    with pytest.raises(CommandError, match="No AWS credentials found") as error_info:
        call_command("refresh_prices", "--instance-type", "p5.48xlarge")
    assert error_info.value.returncode == 1


@pytest.mark.django_db
def test_refresh_prices_with_stubbed_clients(monkeypatch, capsys):
    """The command end to end, with the client factory swapped for Stubber-backed clients."""
    with recorded_clients(FIXTURES) as (clients, manifest):
        seen = {}

        def factory(regions, **kwargs):
            seen["regions"] = list(regions)
            return clients

        monkeypatch.setattr("pricing.management.commands.refresh_prices.aws_clients_from_default_chain", factory)
        # The recording queries Capacity Blocks for p5.48xlarge only; the command's default would add p4d,
        # p5en and p6-b200, so pin the recorded set for this test.
        monkeypatch.setattr(fetch, "CAPACITY_BLOCK_TYPES", frozenset(manifest.capacity_block_types))
        args = ["refresh_prices"]
        for region in manifest.regions:
            args += ["--region", region]
        for instance_type in manifest.instance_types:
            args += ["--instance-type", instance_type]
        call_command(*args)
    out = capsys.readouterr().out
    assert seen["regions"] == ["us-east-1", "us-west-2"]
    assert "Stored live price snapshot #" in out
    snapshot = PriceSnapshot.objects.get(kind=PriceSnapshot.Kind.LIVE)
    offer = CloudOffer.objects.get(
        snapshot=snapshot,
        instance_type="p5.48xlarge",
        region="us-east-1",
        purchase="spot",
        availability_zone_id="use1-az1",
    )
    assert offer.usd_per_hour == Decimal("14.25")


@pytest.mark.django_db
def test_refresh_prices_reports_aws_errors(monkeypatch):
    from botocore.stub import Stubber

    from pricing.aws.fetch import AwsClients
    from pricing.aws.recorded import stubbed_client

    pricing_client = stubbed_client("pricing", "us-east-1")
    stub = Stubber(pricing_client)
    stub.add_client_error("get_products", service_error_code="AccessDeniedException", http_status_code=403)
    clients = AwsClients(pricing=pricing_client, ec2={"us-east-1": stubbed_client("ec2", "us-east-1")})
    monkeypatch.setattr(
        "pricing.management.commands.refresh_prices.aws_clients_from_default_chain", lambda regions, **kw: clients
    )
    with stub, pytest.raises(CommandError, match="AccessDeniedException"):
        call_command("refresh_prices", "--region", "us-east-1", "--instance-type", "p5.48xlarge")
    assert PriceSnapshot.objects.count() == 0
