"""Tokens made before keys were hashed keep working after the migration, and no plaintext key is left."""

from __future__ import annotations

import hashlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("planner", "0003_run_delivery_tracking"), ("authtoken", "0004_alter_tokenproxy_options")]
AFTER = [("planner", "0004_api_token_hashed")]


@pytest.mark.django_db(transaction=True)
def test_plaintext_tokens_become_digests():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    user = old.get_model("auth", "User").objects.create(username="legacy", password="!")
    old.get_model("authtoken", "Token").objects.create(key="0123456789abcdef0123456789abcdef01234567", user=user)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    stored = new.get_model("planner", "ApiToken").objects.get(user_id=user.pk)
    assert stored.digest == hashlib.sha256(b"0123456789abcdef0123456789abcdef01234567").hexdigest()
    assert stored.prefix == "01234567"
    assert not new.get_model("authtoken", "Token").objects.exists()

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # back to the newest schema for the other tests
