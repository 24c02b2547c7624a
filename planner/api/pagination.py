"""Limit/offset pagination that rejects malformed values instead of silently ignoring them."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination


class StrictLimitOffsetPagination(LimitOffsetPagination):
    max_limit = 500

    def paginate_queryset(self, queryset, request, view=None):
        errors = {}
        for name in (self.limit_query_param, self.offset_query_param):
            values = request.query_params.getlist(name)
            if len(values) > 1:
                errors[name] = ["give it at most once"]
            elif values and not (values[0].isdigit() and values[0].isascii()):
                errors[name] = ["must be a whole number >= 0"]
        if errors:
            raise ValidationError(errors)
        return super().paginate_queryset(queryset, request, view)
