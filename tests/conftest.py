"""Shared fixtures: users, logged-in clients and the minimal requests from design.md."""

from __future__ import annotations

import copy
import os
import shutil

import pytest

from tests.samples import INFERENCE_REQUEST, TRAINING_REQUEST

# The scale-out pass (`make test-scaleout`: PostgreSQL + Redis) re-runs only the tests that reach the database or
# the broker; the rest (pure functions, subprocess smoke tests that strip DATABASE_URL, mocked health checks) ran
# in `make test` already and would check nothing new on PostgreSQL.
SCALEOUT_PASS = os.environ.get("PLANNER_TEST_SCALEOUT") == "1"
DATABASE_FIXTURES = frozenset({"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback"})
BROKER_MARKS = ("redis",)


def _reaches_database_or_broker(item: pytest.Item) -> bool:
    """A django_db mark, a database fixture (directly or through another fixture, e.g. `django_user_model`), or a
    mark for a real broker."""
    if item.get_closest_marker("django_db") or any(item.get_closest_marker(mark) for mark in BROKER_MARKS):
        return True
    return bool(DATABASE_FIXTURES.intersection(getattr(item, "fixturenames", ())))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In the scale-out pass, deselect (and so report) the tests that touch neither the database nor the broker."""
    if not SCALEOUT_PASS:
        return
    kept = [item for item in items if _reaches_database_or_broker(item)]
    dropped = [item for item in items if not _reaches_database_or_broker(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session", autouse=True)
def _remove_session_var_dir():
    """Delete this session's var/test/run-<pid> folder (database, broker queue) at the end."""
    yield
    from django.conf import settings

    if f"run-{os.getpid()}" == settings.VAR_DIR.name:
        shutil.rmtree(settings.VAR_DIR, ignore_errors=True)


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    """API throttles count in the cache; user ids repeat from test to test, so each test starts clean."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture
def training_request() -> dict:
    return copy.deepcopy(TRAINING_REQUEST)


@pytest.fixture
def inference_request() -> dict:
    return copy.deepcopy(INFERENCE_REQUEST)


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="alice", password="correct-horse-battery")


@pytest.fixture
def other_user(django_user_model):
    return django_user_model.objects.create_user(username="mallory", password="correct-horse-battery")


@pytest.fixture
def alice_client(client, user):
    client.force_login(user)
    return client
