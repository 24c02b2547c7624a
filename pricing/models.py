"""Dated price snapshots; every price a plan uses belongs to exactly one snapshot."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from django.db import models
from django.utils import timezone

__all__ = ["CloudInstanceType", "CloudOffer", "ComponentPrice", "CostParameter", "PriceSnapshot", "SpotAdvisorBand"]


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
        """Older than the one freshness limit (pricing/freshness.py: the parameter cloud_price_stale_after_days,
        the same rule the plan's price warnings use)."""
        from .freshness import stale_after_days

        return timezone.now() - self.fetched_at > timedelta(days=stale_after_days())

    @property
    def age_days(self) -> int:
        return max(0, (timezone.now() - self.fetched_at).days)

    def summary_dict(self) -> dict:
        """The `price_snapshot` block of a plan (design.md contract)."""
        return {
            "id": self.pk,
            "source": self.source,
            "kind": self.kind,
            "fetched_at": self.fetched_at.isoformat(),
            "stale": self.is_stale,
            "age_days": self.age_days,
        }


class CloudOffer(models.Model):
    """What one cloud instance costs per hour under one purchase option, as observed in one snapshot.

    Any provider (`aws`, `azure`, `gcp`, `lambda`, ...): each offer keeps its own primary source, that source's
    date (`observed_at`) and a confidence label, because one snapshot gathers price lists of different ages.

    Keyed by availability-zone *ID* (`use1-az4`), never the name: AZ names are shuffled per AWS account.
    Regional prices (on-demand, reserved, capacity block) leave `availability_zone_id` blank. `raw` keeps the
    trimmed source item (Price List term, spot record, capacity block offerings) so a surprising figure can be
    traced back to what AWS said. Reserved rows hold the *effective* hourly price (upfront fee spread over the
    term); Capacity Block rows the cheapest offering's upfront fee per instance-hour.
    """

    class Purchase(models.TextChoices):
        # Values shared with the Django-free pricing.aws.offers constants (a test keeps them in step).
        ON_DEMAND = "on_demand", "On-demand"
        SPOT = "spot", "Spot"
        RESERVED_1Y = "reserved_1y", "Reserved, 1 year"
        RESERVED_3Y = "reserved_3y", "Reserved, 3 years"
        SAVINGS_PLAN_1Y = "savings_plan_1y", "Savings Plan, 1 year"
        SAVINGS_PLAN_3Y = "savings_plan_3y", "Savings Plan, 3 years"
        CAPACITY_BLOCK = "capacity_block", "Capacity Block"

    snapshot = models.ForeignKey(PriceSnapshot, on_delete=models.CASCADE, related_name="offers")
    provider = models.CharField(max_length=16, default="aws")
    instance_type = models.CharField(max_length=64)
    region = models.CharField(max_length=32)
    availability_zone_id = models.CharField(max_length=32, blank=True, help_text="Blank for regional prices.")
    purchase = models.CharField(max_length=16, choices=Purchase.choices)
    usd_per_hour = models.DecimalField(max_digits=14, decimal_places=6, help_text="USD per instance-hour.")
    gpus = models.PositiveSmallIntegerField(default=0, help_text="GPUs per instance.")
    gpu_model = models.CharField(max_length=64, blank=True, help_text="Catalog GPU id where the catalog has it.")
    capacity_constrained = models.BooleanField(
        default=False,
        help_text="Spot quoted at (or above) the on-demand price: AWS has no spare capacity in this zone.",
    )
    observed_at = models.DateTimeField(help_text="The source's own date for this price (not when it was loaded).")
    source = models.TextField(blank=True, help_text="The primary source: title and date of the price list or API.")
    confidence = models.CharField(
        max_length=16,
        default="list_price",
        help_text="list_price, quote, public_estimate or assumption: how firm the price is.",
    )
    raw = models.JSONField(default=dict, blank=True, help_text="The trimmed source item.")

    class Meta:
        ordering = ["instance_type", "region", "purchase", "availability_zone_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["snapshot", "instance_type", "region", "availability_zone_id", "purchase"],
                name="cloud_offer_unique_per_snapshot",
            )
        ]  # its index, led by (snapshot, instance_type, region), also serves the planner's lookups

    def __str__(self) -> str:
        where = f"{self.region}/{self.availability_zone_id}" if self.availability_zone_id else self.region
        return f"{self.instance_type} {self.purchase} {where}: ${self.usd_per_hour}/h"

    @property
    def usd_per_gpu_hour(self) -> Decimal | None:
        return self.usd_per_hour / self.gpus if self.gpus else None


class CloudInstanceType(models.Model):
    """GPU specs of one instance type as stored with one snapshot: `describe_instance_types` + curated overrides.

    `raw` is AWS's `InstanceTypeInfo` as returned (errors included); the other fields are after the versioned
    override table of `pricing.aws.specs`, and `overridden_fields` lists each correction with AWS's value, the
    curated one, the reason and the source. `gpu_model` is the catalog GPU id costing matches plans on;
    `gpu_memory_gib` the marketing memory per GPU (AWS's MiB sit below it), `gpu_memory_mib` what AWS reports.
    """

    snapshot = models.ForeignKey(PriceSnapshot, on_delete=models.CASCADE, related_name="instance_types")
    provider = models.CharField(max_length=16, default="aws")
    instance_type = models.CharField(max_length=64)
    gpus = models.PositiveSmallIntegerField(default=0, help_text="Whole GPUs per instance.")
    gpu_fraction = models.DecimalField(
        max_digits=6, decimal_places=4, null=True, blank=True, help_text="Share of one GPU (fractional types)."
    )
    gpu_model = models.CharField(max_length=64, blank=True, help_text="Catalog GPU id where the catalog has it.")
    gpu_name = models.CharField(max_length=64, blank=True)
    gpu_manufacturer = models.CharField(max_length=64, blank=True)
    gpu_memory_mib = models.PositiveIntegerField(null=True, blank=True, help_text="Per GPU, as AWS reports it.")
    gpu_memory_gib = models.PositiveIntegerField(null=True, blank=True, help_text="Per GPU, marketing figure.")
    vcpus = models.PositiveIntegerField(null=True, blank=True)
    memory_mib = models.PositiveBigIntegerField(null=True, blank=True)
    efa_max_interfaces = models.PositiveSmallIntegerField(default=0)
    overridden_fields = models.JSONField(default=list, blank=True, help_text="Corrections applied to AWS's data.")
    overrides_version = models.CharField(max_length=32, blank=True)
    raw = models.JSONField(default=dict, blank=True, help_text="AWS's InstanceTypeInfo, unmodified.")

    class Meta:
        ordering = ["instance_type"]
        constraints = [
            models.UniqueConstraint(
                fields=["snapshot", "instance_type"], name="cloud_instance_type_unique_per_snapshot"
            )
        ]

    def __str__(self) -> str:
        return f"{self.instance_type}: {self.gpus} x {self.gpu_model or self.gpu_name or 'no GPU'}"


class Confidence(models.TextChoices):
    LIST_PRICE = "list_price", "List price or quotation"
    PUBLIC_ESTIMATE = "public_estimate", "Public estimate"
    ASSUMPTION = "assumption", "Assumption"


class _Reference(models.Model):
    """Shared fields of the editable on-prem price references loaded from fixtures/prices/."""

    source = models.TextField(help_text="Where the figure comes from (document, quotation, judgement).")
    as_of = models.CharField(max_length=32, help_text="Date of the source (ISO date).")
    confidence = models.CharField(max_length=16, choices=Confidence.choices)
    locally_edited = models.BooleanField(
        default=False,
        help_text="Set when edited in the admin: `load_prices` then leaves the row alone instead of resetting it.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class ComponentPrice(_Reference):
    """Unit price of one on-prem part (BOM `part_number`) or system (catalog id)."""

    part_number = models.CharField(max_length=128, blank=True, help_text="Matches BOM lines' part_number.")
    catalog_id = models.CharField(max_length=128, blank=True, help_text="Matches a fixtures/catalog record id.")
    description = models.CharField(max_length=255, blank=True)
    category = models.CharField(max_length=32, blank=True)
    unit_price_usd = models.DecimalField(max_digits=14, decimal_places=2)

    class Meta:
        ordering = ["category", "catalog_id", "part_number"]
        constraints = [
            models.UniqueConstraint(fields=["part_number", "catalog_id"], name="component_price_unique_key"),
        ]

    def __str__(self) -> str:
        return f"{self.part_number or self.catalog_id}: ${self.unit_price_usd}"

    @property
    def key(self) -> str:
        return self.catalog_id or self.part_number


class CostParameter(_Reference):
    """A named costing parameter (install %, maintenance %, default $/kWh, ...) or a grid carbon intensity.

    `scope` is blank for plain parameters; for `grid_gco2e_per_kwh` it is `site` or an AWS region.
    """

    name = models.CharField(max_length=64)
    scope = models.CharField(max_length=32, blank=True)
    value = models.DecimalField(max_digits=16, decimal_places=6)
    unit = models.CharField(max_length=128)

    class Meta:
        ordering = ["name", "scope"]
        constraints = [models.UniqueConstraint(fields=["name", "scope"], name="cost_parameter_unique_key")]

    def __str__(self) -> str:
        return f"{self.name}{'.' + self.scope if self.scope else ''} = {self.value} {self.unit}"


class SpotAdvisorBand(models.Model):
    """Spot Instance Advisor interruption band for one (region, instance type), with the feed's date."""

    region = models.CharField(max_length=32)
    instance_type = models.CharField(max_length=64)
    band = models.CharField(max_length=16, help_text="<5%, 5-10%, 10-15%, 15-20% or >20% reclaimed per month.")
    savings_percent = models.PositiveSmallIntegerField(null=True, blank=True)
    as_of = models.CharField(max_length=32)
    source = models.TextField()
    locally_edited = models.BooleanField(default=False)

    class Meta:
        ordering = ["instance_type", "region"]
        constraints = [models.UniqueConstraint(fields=["region", "instance_type"], name="spot_band_unique_key")]

    def __str__(self) -> str:
        return f"{self.instance_type} {self.region}: {self.band}"
