"""Shared fixtures: users, logged-in clients and the minimal requests from design.md."""

from __future__ import annotations

import copy

import pytest

from tests.samples import INFERENCE_REQUEST, TRAINING_REQUEST


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
