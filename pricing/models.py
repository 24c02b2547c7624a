"""Dated price snapshots; every price a plan uses belongs to exactly one snapshot."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

__all__ = ["PriceSnapshot"]


class PriceSnapshot(models.Model):
    """A set of prices fetched (or loaded from recorded fixtures) at one moment.

    Plans keep the snapshot they were priced with, so a plan reopened next month shows the
    same numbers, and can say that newer prices exist.
    """

    class Kind(models.TextChoices):
        FIXTURE = "fixture", "Recorded fixture"
        LIVE = "live", "Fetched live"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    source = models.CharField(max_length=255, help_text="Where the prices came from (API, file, document).")
    fetched_at = models.DateTimeField(help_text="When the prices were observed at their source.")
    created_at = models.DateTimeField(auto_now_add=True)
    content_sha256 = models.CharField(max_length=64, blank=True, help_text="Hash of the raw inputs, to skip re-loads.")
    notes = models.TextField(blank=True)

    class Meta:
        ordering = ["-fetched_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.source} @ {self.fetched_at:%Y-%m-%d}"

    @property
    def is_stale(self) -> bool:
        return timezone.now() - self.fetched_at > timedelta(days=settings.PLANNER_PRICE_STALE_AFTER_DAYS)

    def summary_dict(self) -> dict:
        """The `price_snapshot` block of a plan (design.md contract)."""
        return {
            "id": self.pk,
            "source": self.source,
            "kind": self.kind,
            "fetched_at": self.fetched_at.isoformat(),
            "stale": self.is_stale,
        }
