"""Filters of the API plan list (django-filter): workload, status, system, created_after, created_before.

A filter given empty or malformed is a 400 naming the parameter, never "no filter": a client that
sends `?system=` meant something, and silently listing every plan would hide its mistake. The
fields below therefore tell "absent" (the widget reads None) from "present but empty" ("").
"""

from __future__ import annotations

from datetime import UTC, datetime

import django_filters
from django import forms
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field

from planner.choices import RunStatus, Workload
from planner.models import Plan
from planner.selectors import plans_with_status

WHEN_INVALID = "must be an ISO 8601 date or date-time between 1970 and 9999"


class _PresentField(forms.Field):
    """A query parameter that is absent (None, no filter) or must hold a usable value."""

    def clean(self, value):
        if value is None:
            return None
        return super().clean(value)


class WorkloadField(_PresentField):
    def to_python(self, value):
        if value not in Workload.values:
            *first, last = Workload.values
            raise forms.ValidationError(f"must be {', '.join(first)} or {last}")
        return value


class StatusField(_PresentField):
    def to_python(self, value):
        if value not in RunStatus.values:
            raise forms.ValidationError(f"must be one of {', '.join(RunStatus.values)}")
        return value


class NonEmptyField(_PresentField):
    def to_python(self, value):
        if not value:
            raise forms.ValidationError("must not be empty")
        return value


class WhenField(_PresentField):
    """An ISO 8601 date (midnight) or date-time; naive values are UTC."""

    def to_python(self, value) -> datetime:
        return parse_when(value)


def parse_when(raw: str) -> datetime:
    """The instant `raw` names, aware; forms.ValidationError when it is malformed or outside 1970-9999."""
    invalid = forms.ValidationError(WHEN_INVALID)
    try:
        value = parse_datetime(raw)
        if value is None and (day := parse_date(raw)) is not None:
            value = datetime(day.year, day.month, day.day)
    except ValueError as exc:  # well-formed but impossible: 2024-02-30, 25:00
        raise invalid from exc
    # Databases differ at the edges of the calendar (PostgreSQL rejects some offsets in year 16):
    # plans exist only in this era, so anything far outside it is a client error, not a query.
    if value is None or not 1970 <= value.year <= 9999:
        raise invalid
    try:
        return value.astimezone(UTC) if timezone.is_aware(value) else timezone.make_aware(value, UTC)
    except OverflowError as exc:
        raise invalid from exc


@extend_schema_field({"type": "string", "enum": list(Workload.values)})
class WorkloadFilter(django_filters.Filter):
    field_class = WorkloadField


@extend_schema_field({"type": "string", "enum": list(RunStatus.values)})
class StatusFilter(django_filters.Filter):
    """The status of the plan's newest run (what `status` in each listed plan says)."""

    field_class = StatusField

    def filter(self, qs, value):
        return qs if value is None else plans_with_status(qs, value)


@extend_schema_field(OpenApiTypes.STR)  # a path into the result JSON: no model field to read the type from
class NonEmptyFilter(django_filters.Filter):
    field_class = NonEmptyField


@extend_schema_field(OpenApiTypes.DATETIME)
class WhenFilter(django_filters.Filter):
    field_class = WhenField


class PlanFilter(django_filters.FilterSet):
    workload = WorkloadFilter(field_name="workload")
    status = StatusFilter(help_text="Status of the plan's latest run: succeeded, infeasible (with a reason), failed...")
    system = NonEmptyFilter(field_name="result__cluster__system", help_text="Catalog system id of the planned cluster.")
    created_after = WhenFilter(field_name="created_at", lookup_expr="gte")
    created_before = WhenFilter(field_name="created_at", lookup_expr="lt")

    class Meta:
        model = Plan
        fields: list[str] = []
