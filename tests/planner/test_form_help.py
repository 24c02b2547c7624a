"""The new-plan form's help texts are written for the person filling it: no request paths (`hardware.system`),
snake_case field names (`deadline_days`) or API URLs (`GET /api/catalog/`), which the schema's descriptions carry
for API clients (they stay in the OpenAPI schema)."""

from __future__ import annotations

import html
import re

import pytest

pytestmark = pytest.mark.django_db

HELP = re.compile(r'class="help"[^>]*>(.*?)</', re.S)
API_WORDS = re.compile(r"GET /api|\b[a-z]+(?:_[a-z0-9]+)+\b|\b[a-z]+\.[a-z_]{2,}\b")


def test_form_help_names_fields_by_their_labels(alice_client):
    page = alice_client.get("/plans/new/").content.decode()
    texts = [html.unescape(text).strip() for text in HELP.findall(page)]
    assert len(texts) > 20
    leaks = {text: API_WORDS.findall(text) for text in texts if API_WORDS.search(text)}
    assert leaks == {}
    assert "Finish within this many days (at least 0.01, about 15 minutes); give this or a fixed GPU count" in page


def test_the_api_schema_keeps_the_field_names(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").content.decode()
    assert "give this or gpus, not both" in schema
