"""A JSON parser that refuses oversized bodies with 413 before reading them."""

from __future__ import annotations

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser

TOO_MANY_DIGITS = "JSON parse error - a number is too long: no field takes a number of more than 4,300 digits."


def too_large_detail(size: int | None, limit: int) -> str:
    """The one wording of a 413, whichever cap stops the body (this parser's or Django's own, planner/middleware.py):
    its size when the request declared it."""
    size_text = f" ({size:,} bytes)" if size is not None else ""
    return f"Request body too large{size_text}; the limit is {limit:,} bytes."


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "Request body too large."
    default_code = "payload_too_large"


class BoundedJSONParser(JSONParser):
    """JSONParser with a size cap (PLANNER_API_MAX_BODY_BYTES).

    A plan request is a few hundred bytes; refusing megabyte bodies up front keeps a client
    bug (or abuse) from tying up a web worker parsing them.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.PLANNER_API_MAX_BODY_BYTES
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        if declared and str(declared).isdigit() and int(declared) > limit:
            raise PayloadTooLarge(too_large_detail(int(declared), limit))
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as exc:  # e.g. thousands of nested brackets: malformed for our purposes
            raise ParseError("JSON parse error - nested too deeply.") from exc
        except ParseError as exc:
            # Python refuses integers of more than 4,300 digits with a message about its own settings; say what is
            # wrong with the body instead.
            if "integer string conversion" in str(exc.detail):
                raise ParseError(TOO_MANY_DIGITS) from None
            raise
