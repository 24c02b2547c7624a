"""Request guards that every view shares: query strings no database may see, and failures users can report.

- NUL in a query string reaches PostgreSQL as a filter value and makes it raise (text cannot hold NUL); an
  unpaired surrogate cannot be encoded at all. Such a request is refused with 400 before any view runs, naming
  the parameter, in the API's JSON error shape under /api/ and as a page elsewhere.
- A body over the API's size limit is answered 413 under /api/, whichever cap stops it first.
- An unexpected exception is logged with a short reference id and answered with that id and no internal detail:
  JSON under /api/ (clients parse every answer), the 500 page elsewhere. The trace stays in the log.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import BadRequest, PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from .adapter import safe_text, unsafe_values
from .api.parsers import too_large_detail

logger = logging.getLogger("planner.errors")

API_PREFIX = "/api/"
CLIENT_ERRORS = (SuspiciousOperation, BadRequest, PermissionDenied, Http404)
CLIENT_ERROR_DETAIL = "the body is too large or malformed."


def error_reference() -> str:
    """A short id that ties a user's report to one log line (no internal detail in it)."""
    return secrets.token_hex(4)


class RequestGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        errors: dict[str, list[str]] = {}
        for key, values in request.GET.lists():
            if unsafe_values(key) or unsafe_values(values):
                name = safe_text(key)
                errors[f"query.{name}"] = [f"query parameter {name} must not contain NUL or unpaired surrogates"]
        if errors:
            detail = "The query string holds characters no field can take."
            if request.path.startswith(API_PREFIX):
                return JsonResponse({"detail": detail, "errors": errors}, status=400)
            return HttpResponse(detail, status=400, content_type="text/plain; charset=utf-8")
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, CLIENT_ERRORS):  # Django answers these itself (400, 403, 404)
            if request.path.startswith(API_PREFIX) and isinstance(exception, RequestDataTooBig):
                # Django's own cap (DATA_UPLOAD_MAX_MEMORY_SIZE, the API's limit) stops an oversized body before the
                # API's parser sees it; the API answers it as documented, 413, not as a malformed body.
                limit = settings.PLANNER_API_MAX_BODY_BYTES
                return JsonResponse({"detail": too_large_detail(None, limit)}, status=413)
            if request.path.startswith(API_PREFIX) and isinstance(exception, SuspiciousOperation | BadRequest):
                return JsonResponse({"detail": "Bad request: " + CLIENT_ERROR_DETAIL}, status=400)
            return None
        reference = error_reference()
        logger.exception("unhandled error on %s %s (reference %s)", request.method, request.path, reference)
        detail = f"Something went wrong on our side (reference {reference}); it has been logged."
        if request.path.startswith(API_PREFIX):
            return JsonResponse({"detail": detail, "reference": reference}, status=500)
        return render(request, "500.html", {"reference": reference}, status=500)
