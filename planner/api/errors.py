"""One error shape for the whole API: {"detail": str, "errors": {field path: [messages]}}."""

from __future__ import annotations

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from planner.adapter import RequestInvalid
from planner.services import QueueFull


def exception_handler(exc, context):
    if isinstance(exc, RequestInvalid):
        count = sum(len(messages) for messages in exc.errors.values())
        return Response(
            {"detail": f"The plan request has {count} problem(s).", "errors": exc.errors},
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, QueueFull):
        return Response({"detail": str(exc)}, status=status.HTTP_429_TOO_MANY_REQUESTS, headers={"Retry-After": "60"})
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and "detail" not in response.data:
        # Serializer field errors: keep them under "errors" so clients read one shape.
        response.data = {"detail": "Invalid input.", "errors": response.data}
    return response
