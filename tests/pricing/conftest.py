"""Pricing test helpers: the recorded fixtures, Stubber-ready clients, and a guard that fails any network use."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from pricing.aws.recorded import botocore_value, stubbed_client

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "aws"


def recorded(relative: str) -> dict:
    """One recorded query file from fixtures/aws (request + pages, timestamps still ISO strings)."""
    return json.loads((FIXTURES / relative).read_text())


def page_for(client, operation: str, page: dict) -> dict:
    """A recorded page converted to what boto3 returns (timestamps as datetimes) for `client`'s operation."""
    api_name = client.meta.method_to_api_mapping[operation]
    shape = client.meta.service_model.operation_model(api_name).output_shape
    return botocore_value(page, shape)


@pytest.fixture
def pricing_client():
    return stubbed_client("pricing", "us-east-1")


@pytest.fixture
def ec2_use1():
    return stubbed_client("ec2", "us-east-1")


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Every pricing test runs offline: any socket connect is recorded, refused, and fails the test."""
    attempts: list[object] = []

    def refuse(self, address, *args, **kwargs):
        attempts.append(address)
        raise OSError(f"network access attempted in a test: {address!r}")

    def refuse_create(address, *args, **kwargs):
        attempts.append(address)
        raise OSError(f"network access attempted in a test: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse_create)
    yield attempts
    assert not attempts, f"tests must not touch the network; tried {attempts}"
