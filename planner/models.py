"""Plans, their runs, and the liveness record of the workers that execute them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse

from .choices import FINISHED_STATUSES, RunStatus, Workload

__all__ = ["ApiIdempotencyKey", "CatalogRelease", "HealthProbe", "Plan", "PlanRun", "WorkerHeartbeat"]


class CatalogRelease(models.Model):
    """A version of the hardware catalog (engine/data/catalog) seen by `load_catalog`.

    The engine reads the catalog files directly; this row records which versions existed and
    when, so a plan's `catalog_version` can be traced to its load and record counts.
    """

    version = models.CharField(max_length=64, unique=True)
    loaded_at = models.DateTimeField(auto_now=True)
    counts = models.JSONField(default=dict, help_text="Records per kind, e.g. {'gpus': 8}.")

    class Meta:
        ordering = ["-loaded_at"]

    def __str__(self) -> str:
        return self.version


class Plan(models.Model):
    """One planning request and, once a run succeeds, its result (the plan JSON)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="plans")
    name = models.CharField(max_length=200)
    workload = models.CharField(max_length=16, choices=Workload.choices)
    request = models.JSONField(help_text="The validated plan request (design.md contract).")
    result = models.JSONField(null=True, blank=True, help_text="The plan produced by the latest successful run.")
    catalog_version = models.CharField(max_length=64, blank=True)
    price_snapshot = models.ForeignKey(
        "pricing.PriceSnapshot", null=True, blank=True, on_delete=models.PROTECT, related_name="plans"
    )
    parent = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="children",
        help_text="The plan this one was re-planned, duplicated or saved from (what-if), if any.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["owner", "-created_at"])]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("planner:plan_detail", args=[self.pk])


class PlanRun(models.Model):
    """One execution of a plan's request by a worker, with live progress.

    A worker writes `progress_percent`, `stage` and `heartbeat_at` after every engine stage;
    a run whose heartbeat stops is found by the sweeper and re-queued or failed, so no run is
    left `running` forever.
    """

    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    progress_percent = models.PositiveSmallIntegerField(default=0)
    stage = models.CharField(max_length=64, blank=True, default="queued")
    attempts = models.PositiveSmallIntegerField(default=0, help_text="How many times a worker started this run.")
    sends = models.PositiveSmallIntegerField(default=0, help_text="How many task messages were published for it.")
    sent_at = models.DateTimeField(null=True, blank=True, help_text="When the latest task message was published.")
    claimed_by = models.CharField(max_length=255, blank=True, help_text="Task id of the delivery that claimed it.")
    worker = models.CharField(
        max_length=255, blank=True, help_text="The worker process that claimed it (its WorkerHeartbeat.hostname)."
    )
    error = models.TextField(blank=True)
    reason = models.TextField(
        blank=True, help_text="Why the target cannot be met, in words, when the run finished infeasible."
    )
    queued_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    engine_s = models.FloatField(null=True, blank=True, help_text="Seconds spent in the sizing engine.")

    class Meta:
        ordering = ["-queued_at", "-pk"]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]

    def __str__(self) -> str:
        return f"run {self.pk} of plan {self.plan_id} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED_STATUSES

    @property
    def wall_s(self) -> float | None:
        """Seconds from the worker starting the run to its end, when both are known."""
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None

    def status_dict(self) -> dict:
        """The one small dict the run page, the status view and the API all show."""
        return {
            "run_id": self.pk,
            "plan_id": self.plan_id,
            "status": self.status,
            "progress_percent": self.progress_percent,
            "stage": self.stage,
            "attempts": self.attempts,
            "error": self.error,
            "reason": self.reason,
            "queued_at": self.queued_at.isoformat() if self.queued_at else None,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "heartbeat_at": self.heartbeat_at.isoformat() if self.heartbeat_at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "engine_s": self.engine_s,
            "wall_s": self.wall_s,
            "finished": self.is_finished,
        }


class WorkerHeartbeat(models.Model):
    """The last time each Celery worker process said it was alive, and when it last made progress.

    `hostname` names one process incarnation (node name plus a boot id), so a worker restarted under the same
    node name is a new row and the runs its predecessor claimed are seen to have lost their worker.
    """

    hostname = models.CharField(max_length=255, unique=True)
    seen_at = models.DateTimeField()
    pid = models.PositiveIntegerField(null=True, blank=True)
    progress_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Last time a task started or finished here, or the worker idled with nothing queued.",
    )
    busy = models.BooleanField(default=False, help_text="Had reserved or running tasks at the last heartbeat.")

    class Meta:
        ordering = ["-seen_at"]

    def __str__(self) -> str:
        return self.hostname


class HealthProbe(models.Model):
    """One row per probe name that /healthz rewrites, proving the database accepts and commits writes."""

    name = models.CharField(max_length=64, unique=True)
    written_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.name


class ApiIdempotencyKey(models.Model):
    """Maps a client's Idempotency-Key to the plan its first request created.

    A retried POST with the same key and body returns that plan instead of creating another;
    the same key with a different body is refused, since the client has mixed up its keys.
    """

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    request_sha256 = models.CharField(max_length=64)
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "key"], name="idempotency_key_unique_per_owner")]

    def __str__(self) -> str:
        return self.key


class ApiToken(models.Model):
    """A user's API token, stored as its SHA-256 digest: the key itself is shown once, when it is made.

    A copy of the database (a backup, a leaked file) then holds nothing that opens the API. SHA-256 without salt
    is enough here, unlike for passwords: keys are 256 random bits, so there is nothing to guess or precompute,
    and an unsalted digest can be looked up by equality with a unique index.
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_token")
    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8, help_text="The key's first characters, to tell tokens apart.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.prefix}…"


class VendorQuote(models.Model):
    """A vendor's (or cloud's) quotation one user uploaded: its unit prices override the catalog references in that
    user's plans, shown with the price basis "quote" and this record's who/when/source in every BOM line."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="quotes")
    vendor = models.CharField(max_length=200, help_text="Who quoted (vendor, reseller or cloud).")
    reference = models.CharField(max_length=255, help_text="The quotation's number or document title.")
    quoted_on = models.DateField(help_text="The date on the quotation.")
    filename = models.CharField(max_length=255, blank=True)
    uploaded_at = models.DateTimeField(auto_now_add=True)
    active = models.BooleanField(default=True, help_text="Only active quotes price new runs.")

    class Meta:
        ordering = ["-uploaded_at", "-pk"]
        indexes = [models.Index(fields=["owner", "-uploaded_at"])]

    def __str__(self) -> str:
        return f"{self.vendor} {self.reference} ({self.quoted_on})"


class VendorQuoteLine(models.Model):
    """One quoted unit price, keyed like a component price: a BOM part number or a catalog id."""

    quote = models.ForeignKey(VendorQuote, on_delete=models.CASCADE, related_name="lines")
    row = models.PositiveIntegerField(help_text="Row of the uploaded file (header = row 1).")
    part = models.CharField(max_length=128, help_text="BOM part number or catalog id.")
    description = models.CharField(max_length=255, blank=True)
    unit_price_usd = models.DecimalField(max_digits=14, decimal_places=2)

    class Meta:
        ordering = ["quote", "row"]

    def __str__(self) -> str:
        return f"{self.part}: ${self.unit_price_usd}"
