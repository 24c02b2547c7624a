"""Shared fixtures: users, logged-in clients and the minimal requests from design.md."""

from __future__ import annotations

import copy
import os
import shutil

import pytest

from tests.samples import INFERENCE_REQUEST, TRAINING_REQUEST


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
