"""Login throttling (issue 15): 40 wrong passwords then the right one used to sign in. Now failures are counted
per client address and per username; past the limit even the right password is refused for the cool-off."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

WRONG = {"username": "alice", "password": "wrong"}
RIGHT = {"username": "alice", "password": "correct-horse-battery"}


def test_the_right_password_is_refused_after_the_failure_limit(client, user, settings):
    url = reverse("login")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert client.post(url, WRONG).status_code == 200  # the form again, with its error
    locked = client.post(url, WRONG)
    assert locked.status_code == 429
    after = client.post(url, RIGHT)
    assert after.status_code == 429 and b"Too many failed sign-ins" in after.content
    assert "_auth_user_id" not in client.session


def test_the_limit_follows_the_username_across_addresses(client, user, settings):
    url = reverse("login")
    for index in range(settings.AXES_FAILURE_LIMIT):
        client.post(url, WRONG, REMOTE_ADDR=f"10.0.0.{index + 1}")
    assert client.post(url, RIGHT, REMOTE_ADDR="10.0.1.1").status_code == 429


def test_the_admin_login_is_throttled_too(client, user, settings):
    url = "/admin/login/"
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(url, WRONG)
    assert client.post(url, RIGHT).status_code == 429


def test_a_success_below_the_limit_signs_in_and_resets_the_count(client, user, settings):
    url = reverse("login")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        client.post(url, WRONG)
    assert client.post(url, RIGHT).status_code == 302
    client.logout()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        client.post(url, WRONG)
    assert client.post(url, RIGHT).status_code == 302  # the success reset the count
