"""The scheduled price refresh: a thin task over the refresh service; failures keep the last snapshot."""

from __future__ import annotations

import importlib

import pytest
from botocore.exceptions import NoCredentialsError

from pricing import tasks
from pricing.models import PriceSnapshot

pytestmark = pytest.mark.django_db


def test_refresh_task_stores_a_snapshot_through_the_service(monkeypatch):
    calls = {}

    class Snapshot:
        pk = 42

    def refresh(**kwargs):
        calls.update(kwargs)
        return Snapshot()

    monkeypatch.setattr("pricing.aws.fetch.aws_clients_from_default_chain", lambda regions: "clients")
    monkeypatch.setattr("pricing.services.price_snapshot_refresh_live", refresh)
    assert tasks.refresh_prices_task.apply(kwargs={"regions": ["us-east-1"]}).get() == {"stored": True, "snapshot": 42}
    assert calls["regions"] == ["us-east-1"] and calls["clients"] == "clients" and calls["instance_types"]


def test_refresh_task_without_credentials_stores_nothing(monkeypatch):
    def no_credentials(regions):
        raise NoCredentialsError()

    monkeypatch.setattr("pricing.aws.fetch.aws_clients_from_default_chain", no_credentials)
    before = PriceSnapshot.objects.count()
    outcome = tasks.refresh_prices_task.apply().get()
    assert outcome["stored"] is False and "NoCredentialsError" in outcome["error"]
    assert PriceSnapshot.objects.count() == before


def test_beat_schedule_is_off_unless_asked(monkeypatch):
    from config.settings import base

    try:
        monkeypatch.delenv("PLANNER_PRICE_REFRESH_EVERY_H", raising=False)
        assert set(importlib.reload(base).CELERY_BEAT_SCHEDULE) == {"sweep-runs"}  # the lost-run sweep only
        monkeypatch.setenv("PLANNER_PRICE_REFRESH_EVERY_H", "6")
        schedule = importlib.reload(base).CELERY_BEAT_SCHEDULE["refresh-prices"]
        assert schedule["task"] == "pricing.refresh_prices" and schedule["schedule"].total_seconds() == 6 * 3600
    finally:
        monkeypatch.undo()
        importlib.reload(base)
