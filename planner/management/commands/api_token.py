"""`manage.py api_token <username>`: make (or replace) a user's API token and print the key once.

Keys are stored as digests (planner.models.ApiToken), so this, like the account page, is the only time the key
can be read; `--revoke` removes the token instead.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from planner import services


class Command(BaseCommand):
    help = "Make or replace a user's API token (printed once), or revoke it."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--revoke", action="store_true", help="Remove the user's token instead.")

    def handle(self, *args, username: str, revoke: bool, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user named {username!r}")
        if revoke:
            removed = services.api_token_revoke(user=user)
            self.stdout.write(f"revoked {removed} token(s) of {username}")
            return
        self.stdout.write(services.api_token_issue(user=user))
