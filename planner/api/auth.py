"""API authentication by hashed token: `Authorization: Token <key>`, the key checked against its stored digest."""

from __future__ import annotations

import hashlib

from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from planner.models import ApiToken


def token_digest(key: str) -> str:
    """The stored form of a key (planner.models.ApiToken)."""
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()


class HashedTokenAuthentication(TokenAuthentication):
    """DRF's token scheme and header, looked up by digest instead of by the key itself."""

    model = ApiToken

    def authenticate_credentials(self, key: str):
        token = ApiToken.objects.select_related("user").filter(digest=token_digest(key)).first()
        if token is None:
            raise AuthenticationFailed("Invalid token.")
        if not token.user.is_active:
            raise AuthenticationFailed("User inactive or deleted.")
        return (token.user, token)
