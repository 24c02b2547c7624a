"""The Prices page: the snapshot's date and age by the one freshness rule, which prices are old, the scheduled
refresh, and the staff-only refresh action (recorded fixtures, never the network)."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
from django.utils import timezone

from pricing.freshness import snapshot_freshness, stale_after_days
from pricing.models import PriceSnapshot
from pricing.refresh import refresh_schedule

pytestmark = pytest.mark.django_db


@pytest.fixture
def snapshot():
    from pricing.services import price_snapshot_load_fixtures

    return price_snapshot_load_fixtures()


def test_the_bundled_snapshot_is_not_stale_by_the_sourced_rule(snapshot):
    # fixtures/aws/manifest.json says observed_at 2026-11-09; the sourced limit is 180 days
    # (fixtures/prices/parameters.json cloud_price_stale_after_days). On 2026-11-26 it is 17 days old: not stale,
    # where the old 7-day setting marked every plan stale from 2026-11-17 on.
    assert snapshot.fetched_at.date() == date(2026, 11, 9)
    assert stale_after_days() == 180
    fresh = snapshot_freshness(snapshot, today=date(2026, 11, 26))
    assert fresh["age_days"] == 17 and fresh["stale"] is False
    assert "2026-11-09, 17 days ago" in fresh["sentence"] and "bundled recorded prices" in fresh["sentence"]
    later = snapshot_freshness(snapshot, today=date(2026, 11, 9) + timedelta(days=181))
    assert later["stale"] is True and "older than the 180-day limit" in later["sentence"]


def test_old_prices_are_named_by_provider(snapshot):
    # A price dated before 2026-05-30 is more than 180 days old on 2026-11-26: count them independently.
    cutoff = timezone.make_aware(datetime(2026, 5, 30))
    expected = {}
    for offer in snapshot.offers.all():
        if offer.observed_at < cutoff:
            expected[offer.provider] = expected.get(offer.provider, 0) + 1
    fresh = snapshot_freshness(snapshot, today=date(2026, 11, 26))
    assert {p["provider"]: p["old"] for p in fresh["providers"] if p["old"]} == expected
    assert expected  # the recorded market has list prices from 2024-2025 (capacity blocks, neoclouds)
    for provider, count in expected.items():
        assert f"{provider}: {count} of" in fresh["sentence"]


def test_a_setting_still_overrides_the_limit(settings):
    settings.PLANNER_PRICE_STALE_AFTER_DAYS = 7
    assert stale_after_days() == 7


def test_schedule_from_the_beat_entry(settings, snapshot):
    settings.CELERY_BEAT_SCHEDULE = {
        "refresh-prices": {"task": "pricing.refresh_prices", "schedule": timedelta(hours=24)}
    }
    live = PriceSnapshot.objects.create(kind="live", source="AWS", fetched_at=timezone.now())
    PriceSnapshot.objects.filter(pk=live.pk).update(created_at=timezone.make_aware(datetime(2026, 11, 26, 6, 0)))
    live.refresh_from_db()
    schedule = refresh_schedule(now=timezone.make_aware(datetime(2026, 11, 26, 12, 0)), last_live=live)
    assert schedule.next_at == timezone.make_aware(datetime(2026, 11, 27, 6, 0))
    assert "every 24 h" in schedule.sentence and "2026-11-27 06:00" in schedule.sentence
    settings.CELERY_BEAT_SCHEDULE = {}
    assert refresh_schedule(now=timezone.now(), last_live=live).next_at is None


def test_prices_page_shows_date_age_and_schedule(alice_client, snapshot):
    page = alice_client.get("/prices/").content.decode()
    assert "2026-11-09" in page and 'id="price-ages"' in page and 'id="schedule"' in page
    assert "Refresh prices" not in page and "only staff" in page


def test_refresh_is_staff_only_and_uses_the_recorded_prices(client, user, django_user_model):
    client.force_login(user)
    assert client.post("/prices/refresh/").status_code == 403
    assert not PriceSnapshot.objects.exists()
    staff = django_user_model.objects.create_user(username="ops", password="x" * 20, is_staff=True)
    client.force_login(staff)
    assert "Refresh prices" in client.get("/prices/").content.decode()
    response = client.post("/prices/refresh/", follow=True)
    snapshot = PriceSnapshot.objects.get()
    assert snapshot.kind == "fixture" and snapshot.fetched_at.date() == date(2026, 11, 9)
    assert "Reloaded the bundled recorded prices" in response.content.decode()


def test_refresh_needs_csrf(user):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    user.is_staff = True
    user.save()
    client.force_login(user)
    assert client.post("/prices/refresh/").status_code == 403
    assert not PriceSnapshot.objects.exists()
