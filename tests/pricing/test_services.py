"""Loading the recorded snapshot (idempotent, one transaction, through the live fetch path) and live refresh."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from botocore.exceptions import StubAssertionError

from pricing.aws.recorded import fixtures_content_sha256, recorded_clients
from pricing.models import CloudOffer, PriceSnapshot
from pricing.selectors import cloud_offers_for_snapshot, price_snapshot_latest
from pricing.services import (
    FIXTURE_SOURCE,
    PriceRefreshError,
    fixture_snapshot_sha256,
    price_snapshot_load_fixtures,
    price_snapshot_refresh_live,
)
from tests.pricing.conftest import FIXTURES

pytestmark = pytest.mark.django_db


def _offer(snapshot, instance_type, region, purchase, az=""):
    return CloudOffer.objects.get(
        snapshot=snapshot, instance_type=instance_type, region=region, purchase=purchase, availability_zone_id=az
    )


def test_load_fixtures_stores_one_dated_snapshot_with_golden_prices():
    snapshot = price_snapshot_load_fixtures()
    assert snapshot.kind == PriceSnapshot.Kind.FIXTURE
    assert snapshot.source == FIXTURE_SOURCE
    assert snapshot.fetched_at == datetime(2026, 11, 9, tzinfo=UTC)
    assert snapshot.content_sha256 == fixture_snapshot_sha256(FIXTURES)
    assert price_snapshot_load_fixtures(market=None).content_sha256 == fixtures_content_sha256(FIXTURES)
    aws = CloudOffer.objects.filter(snapshot=snapshot, provider="aws")
    counts = {p: aws.filter(purchase=p).count() for p in ("on_demand", "spot", "reserved_1y", "reserved_3y")}
    # 6 priced types x 2 regions on-demand (p5e has none: CB only), 20 recorded spot zones, p5 RIs in 2 regions
    assert counts == {"on_demand": 12, "spot": 20, "reserved_1y": 2, "reserved_3y": 2}
    # capacity blocks: p5 (late-2024 table), p5e and p5en (January 2026 rates), us-east-1 only
    assert sorted(aws.filter(purchase="capacity_block").values_list("instance_type", flat=True)) == [
        "p5.48xlarge",
        "p5e.48xlarge",
        "p5en.48xlarge",
    ]
    golden = {
        "p5.48xlarge": Decimal("55.04"),
        "p4d.24xlarge": Decimal("21.957642"),
        "p5en.48xlarge": Decimal("63.296"),
        "g6e.48xlarge": Decimal("30.13118"),
        "p6-b200.48xlarge": Decimal("113.9328"),
    }
    for instance_type, usd_per_hour in golden.items():
        assert _offer(snapshot, instance_type, "us-east-1", "on_demand").usd_per_hour == usd_per_hour
    assert _offer(snapshot, "p5.48xlarge", "us-west-2", "on_demand").usd_per_hour == Decimal("55.04")
    block = _offer(snapshot, "p5.48xlarge", "us-east-1", "capacity_block")
    assert abs(block.usd_per_hour - Decimal("39.33")) <= Decimal("0.01")
    assert len(block.raw["offerings"]) == 2
    # recorded UpfrontFee for 1 instance x 24 h: 955.20 / 24 = 39.80 (p5e), 998.64 / 24 = 41.61 (p5en): the
    # January 2026 rates (+15 % over 34.61 and 36.18)
    assert _offer(snapshot, "p5e.48xlarge", "us-east-1", "capacity_block").usd_per_hour == Decimal("39.80")
    assert _offer(snapshot, "p5en.48xlarge", "us-east-1", "capacity_block").usd_per_hour == Decimal("41.61")


def test_each_aws_offer_is_dated_by_its_own_source():
    """Not one recent day for everything: each purchase option carries its source's date and confidence."""
    snapshot = price_snapshot_load_fixtures()

    def day(offer):
        return offer.observed_at.date().isoformat()

    on_demand = _offer(snapshot, "p5.48xlarge", "us-east-1", "on_demand")
    assert (day(on_demand), on_demand.confidence) == ("2026-11-09", "list_price")
    assert "Price List API" in on_demand.source
    block = _offer(snapshot, "p5.48xlarge", "us-east-1", "capacity_block")
    assert (day(block), block.confidence) == ("2024-12-01", "list_price")  # the late-2024 pricing page
    block_p5e = _offer(snapshot, "p5e.48xlarge", "us-east-1", "capacity_block")
    assert (day(block_p5e), block_p5e.confidence) == ("2026-01-01", "public_estimate")
    reserved = _offer(snapshot, "p5.48xlarge", "us-east-1", "reserved_3y")
    assert reserved.confidence == "assumption"  # no published RI figure was recorded
    # spot: the record's own Timestamp (fixtures/aws/assemble.py SPOT table)
    spot = _offer(snapshot, "p5.48xlarge", "us-east-1", "spot", az="use1-az1")
    assert spot.observed_at == datetime(2026, 11, 8, 21, 14, 5, tzinfo=UTC)
    assert len({o.observed_at for o in CloudOffer.objects.filter(snapshot=snapshot, provider="aws")}) > 3


def test_offers_carry_gpus_observed_at_and_raw():
    snapshot = price_snapshot_load_fixtures()
    p5 = _offer(snapshot, "p5.48xlarge", "us-east-1", "on_demand")
    assert (p5.provider, p5.gpus, p5.gpu_model) == ("aws", 8, "h100-sxm")
    assert p5.usd_per_gpu_hour == Decimal("6.88")  # cloud-pricing.md: p5 $6.88 per GPU-hour
    assert p5.observed_at == snapshot.fetched_at  # the on-demand source is the 2026-11-09 Price List reading
    assert p5.raw["priceDimension"]["unit"] == "Hrs"
    assert p5.raw["attributes"]["instanceType"] == "p5.48xlarge"
    assert not CloudOffer.objects.filter(snapshot=snapshot, provider="").exists()


def test_reserved_offers_are_the_lowest_effective_standard_option():
    snapshot = price_snapshot_load_fixtures()
    one_year = _offer(snapshot, "p5.48xlarge", "us-east-1", "reserved_1y")
    # 1 year standard All Upfront: 0 + 315000 / 8760 = 35.958904...
    assert one_year.usd_per_hour == Decimal("35.958904")
    assert one_year.raw["chosen"]["PurchaseOption"] == "All Upfront"
    assert len(one_year.raw["options"]) == 4
    three_year = _offer(snapshot, "p5.48xlarge", "us-east-1", "reserved_3y")
    assert three_year.usd_per_hour == Decimal("22.831050")  # 600000 / 26280


def test_spot_at_on_demand_is_flagged_capacity_constrained():
    snapshot = price_snapshot_load_fixtures()
    constrained = cloud_offers_for_snapshot(snapshot=snapshot, purchases=["spot"]).filter(capacity_constrained=True)
    assert [(o.instance_type, o.availability_zone_id) for o in constrained] == [
        ("p5.48xlarge", "use1-az5"),
        ("p5.48xlarge", "use1-az6"),
    ]
    assert all(o.usd_per_hour == Decimal("55.04") for o in constrained)
    assert "no spare capacity" in constrained[0].raw["capacity_note"]
    usable = cloud_offers_for_snapshot(
        snapshot=snapshot,
        instance_types=["p5.48xlarge"],
        regions=["us-east-1"],
        purchases=["spot"],
        include_constrained=False,
    )
    assert min(o.usd_per_hour for o in usable) == Decimal("14.25")
    assert usable.count() == 4


def test_loading_twice_does_not_duplicate():
    first = price_snapshot_load_fixtures()
    second = price_snapshot_load_fixtures(folder=FIXTURES)
    assert first.pk == second.pk
    assert PriceSnapshot.objects.count() == 1
    assert CloudOffer.objects.count() == 60  # 41 AWS + 6 Azure + 6 Google Cloud + 7 price-list records


def test_changed_fixtures_make_a_new_snapshot(tmp_path):
    folder = tmp_path / "aws"
    shutil.copytree(FIXTURES, folder)
    first = price_snapshot_load_fixtures(folder=folder)
    path = folder / "ec2" / "us-east-1" / "describe_capacity_block_offerings" / "p5.48xlarge.json"
    data = json.loads(path.read_text())
    data["pages"][0]["CapacityBlockOfferings"][0]["UpfrontFee"] = "900.00"
    path.write_text(json.dumps(data, indent=2))
    second = price_snapshot_load_fixtures(folder=folder)
    assert second.pk != first.pk
    assert _offer(second, "p5.48xlarge", "us-east-1", "capacity_block").usd_per_hour == Decimal("37.5")
    assert price_snapshot_latest().pk in {first.pk, second.pk}  # same fetched_at: the newer pk wins
    assert price_snapshot_latest().pk == second.pk


def test_readme_edits_do_not_change_the_content_hash(tmp_path):
    folder = tmp_path / "aws"
    shutil.copytree(FIXTURES, folder)
    before = fixtures_content_sha256(folder)
    (folder / "README.md").write_text("edited")
    assert fixtures_content_sha256(folder) == before


def test_load_is_one_transaction(monkeypatch):
    """If storing the offers fails, the snapshot row is rolled back too: no half-loaded snapshot."""

    def fail(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(CloudOffer.objects, "bulk_create", fail)
    with pytest.raises(RuntimeError, match="disk full"):
        price_snapshot_load_fixtures()
    assert PriceSnapshot.objects.count() == 0


def test_fixture_request_drift_is_caught(tmp_path):
    """The loader replays through the fetch code with expected_params: a recorded filter it no longer sends fails."""
    folder = tmp_path / "aws"
    shutil.copytree(FIXTURES, folder)
    path = folder / "pricing" / "get_products" / "us-east-1" / "p5.48xlarge.json"
    data = json.loads(path.read_text())
    data["request"]["Filters"][2]["Value"] = "Windows"
    path.write_text(json.dumps(data))
    with pytest.raises(StubAssertionError):
        price_snapshot_load_fixtures(folder=folder)
    assert PriceSnapshot.objects.count() == 0


def test_unconsumed_recorded_response_is_caught(tmp_path):
    folder = tmp_path / "aws"
    shutil.copytree(FIXTURES, folder)
    # The last query replayed; an extra page after one without NextToken is one the fetcher never asks for.
    path = folder / "ec2" / "us-west-2" / "describe_capacity_block_offerings" / "p5en.48xlarge.json"
    data = json.loads(path.read_text())
    data["pages"].append({"CapacityBlockOfferings": []})
    path.write_text(json.dumps(data))
    with pytest.raises(AssertionError, match="responses remaining"):
        price_snapshot_load_fixtures(folder=folder)
    assert PriceSnapshot.objects.count() == 0


def test_refresh_live_with_stubbed_clients_stores_a_live_snapshot():
    """The live path, fed the recorded responses: same offers, kind=live, dated now, never deduplicated."""
    snapshots = []
    for _ in range(2):
        with recorded_clients(FIXTURES) as (clients, manifest):
            snapshots.append(
                price_snapshot_refresh_live(
                    regions=manifest.regions,
                    instance_types=manifest.instance_types,
                    clients=clients,
                    capacity_block_types=manifest.capacity_block_types,
                )
            )
    first, second = snapshots
    assert first.pk != second.pk
    assert first.kind == PriceSnapshot.Kind.LIVE
    assert first.content_sha256 == second.content_sha256  # same prices, recognisably so
    assert (datetime.now(UTC) - first.fetched_at).total_seconds() < 60
    assert CloudOffer.objects.filter(snapshot=first).count() == 41  # AWS only: a live refresh asks AWS
    assert _offer(first, "p5.48xlarge", "us-east-1", "on_demand").usd_per_hour == Decimal("55.04")
    assert price_snapshot_latest(kind="live").pk == second.pk


def test_refresh_live_refuses_to_store_nothing(pricing_client, ec2_use1):
    from botocore.stub import Stubber

    from pricing.aws.fetch import AwsClients

    with Stubber(pricing_client) as p, Stubber(ec2_use1) as e:
        p.add_response("get_products", {"FormatVersion": "aws_v1", "PriceList": []})
        e.add_response("describe_spot_price_history", {"SpotPriceHistory": []})
        with pytest.raises(PriceRefreshError, match="no prices"):
            price_snapshot_refresh_live(
                regions=["us-east-1"],
                instance_types=["g6e.48xlarge"],
                clients=AwsClients(pricing=pricing_client, ec2={"us-east-1": ec2_use1}),
            )
    assert PriceSnapshot.objects.count() == 0
