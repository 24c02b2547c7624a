"""Fair use: one rate limit per kind of costly action, counted the same for the web pages and the API.

Plan creation (a form post, an API post, a re-run or a re-plan) queues engine work; an export renders a PDF. Each
scope is a DRF rate ("20/min") in REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], counted per user in the cache, with
the cache key DRF's ScopedRateThrottle uses, so a user who alternates between the form and the API draws on one
allowance. With several web processes the cache must be shared (CACHE_URL=redis://...) for the count to be exact;
the embedded default's per-process memory cache still bounds each process.
"""

from __future__ import annotations

from django.http import HttpRequest
from rest_framework.throttling import ScopedRateThrottle, SimpleRateThrottle

__all__ = ["EXPORT", "PLAN_CREATE", "WHATIF", "ScopedThrottle", "wait_seconds"]

PLAN_CREATE = "plan_create"
EXPORT = "export"
WHATIF = "whatif"  # re-costing a plan (a slider moved): cheap, but engine work, so counted like an export


class ScopedThrottle(SimpleRateThrottle):
    """A DRF throttle for one scope, keyed like ScopedRateThrottle (per user, else per client address)."""

    cache_format = ScopedRateThrottle.cache_format

    def __init__(self, scope: str) -> None:
        self.scope = scope
        super().__init__()

    def get_cache_key(self, request, view) -> str:
        user = getattr(request, "user", None)
        ident = user.pk if user is not None and user.is_authenticated else self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}


def wait_seconds(request: HttpRequest, scope: str) -> int | None:
    """Count one action of `scope` for this request's user: None when allowed, else the seconds to wait."""
    throttle = ScopedThrottle(scope)
    if throttle.allow_request(request, None):
        return None
    wait = throttle.wait()
    return max(1, round(wait)) if wait is not None else 1
