"""CloudOffer's constraints and choices, the selectors, and the admin pages."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.db import IntegrityError

from pricing.aws import offers
from pricing.models import CloudOffer, PriceSnapshot
from pricing.selectors import price_snapshot_by_content, price_snapshot_latest
from pricing.services import price_snapshot_load_fixtures

pytestmark = pytest.mark.django_db


def _snapshot(**kwargs) -> PriceSnapshot:
    defaults = {"kind": PriceSnapshot.Kind.LIVE, "source": "test", "fetched_at": datetime(2026, 11, 1, tzinfo=UTC)}
    return PriceSnapshot.objects.create(**{**defaults, **kwargs})


def _offer(snapshot, **kwargs) -> CloudOffer:
    defaults = {
        "instance_type": "p5.48xlarge",
        "region": "us-east-1",
        "purchase": CloudOffer.Purchase.ON_DEMAND,
        "usd_per_hour": Decimal("55.04"),
        "gpus": 8,
        "observed_at": snapshot.fetched_at,
    }
    return CloudOffer.objects.create(snapshot=snapshot, **{**defaults, **kwargs})


def test_purchase_choices_match_the_pure_constants():
    assert tuple(CloudOffer.Purchase.values) == offers.PURCHASE_OPTIONS


def test_one_offer_per_snapshot_type_region_zone_purchase():
    snapshot = _snapshot()
    _offer(snapshot)
    _offer(snapshot, availability_zone_id="use1-az1", purchase=CloudOffer.Purchase.SPOT, usd_per_hour=Decimal("14.25"))
    _offer(_snapshot(), usd_per_hour=Decimal("60"))  # same key, other snapshot: fine
    with pytest.raises(IntegrityError):
        _offer(snapshot, usd_per_hour=Decimal("1"))


def test_usd_per_hour_keeps_six_decimals():
    offer = _offer(_snapshot(), usd_per_hour=Decimal("21.957642"))
    offer.refresh_from_db()
    assert offer.usd_per_hour == Decimal("21.957642")
    assert str(offer) == "p5.48xlarge on_demand us-east-1: $21.957642/h"


def test_usd_per_gpu_hour_handles_zero_gpus():
    assert _offer(_snapshot(), gpus=0).usd_per_gpu_hour is None


def test_selectors_latest_and_by_content():
    older = _snapshot(fetched_at=datetime(2026, 1, 1, tzinfo=UTC), content_sha256="a" * 64)
    newer = _snapshot(fetched_at=datetime(2026, 6, 1, tzinfo=UTC), kind=PriceSnapshot.Kind.FIXTURE)
    assert price_snapshot_latest() == newer
    assert price_snapshot_latest(kind=PriceSnapshot.Kind.LIVE) == older
    assert price_snapshot_by_content(content_sha256="a" * 64) == older
    assert price_snapshot_by_content(content_sha256="") is None


def test_admin_lists_snapshots_and_offers(admin_client):
    snapshot = price_snapshot_load_fixtures()
    response = admin_client.get("/admin/pricing/pricesnapshot/")
    assert response.status_code == 200
    assert b"AWS recorded responses" in response.content
    response = admin_client.get("/admin/pricing/cloudoffer/?purchase__exact=capacity_block")
    assert response.status_code == 200
    assert b"p5.48xlarge" in response.content
    offer = CloudOffer.objects.filter(snapshot=snapshot).first()
    assert admin_client.get(f"/admin/pricing/cloudoffer/{offer.pk}/change/").status_code == 200
