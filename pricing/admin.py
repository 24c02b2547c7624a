from django.contrib import admin
from django.db.models import Count

from .models import CloudInstanceType, CloudOffer, ComponentPrice, CostParameter, PriceSnapshot, SpotAdvisorBand


@admin.register(PriceSnapshot)
class PriceSnapshotAdmin(admin.ModelAdmin):
    list_display = ["id", "source", "kind", "fetched_at", "created_at", "offer_count"]
    list_filter = ["kind"]
    readonly_fields = ["created_at", "content_sha256"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(offer_count=Count("offers"))

    @admin.display(ordering="offer_count", description="Offers")
    def offer_count(self, snapshot: PriceSnapshot) -> int:
        return snapshot.offer_count


@admin.register(CloudOffer)
class CloudOfferAdmin(admin.ModelAdmin):
    list_display = [
        "instance_type",
        "region",
        "availability_zone_id",
        "purchase",
        "usd_per_hour",
        "gpus",
        "gpu_model",
        "capacity_constrained",
        "snapshot",
    ]
    list_filter = ["purchase", "region", "provider", "capacity_constrained", "snapshot"]
    search_fields = ["instance_type", "region", "availability_zone_id", "gpu_model"]
    list_select_related = ["snapshot"]


@admin.register(CloudInstanceType)
class CloudInstanceTypeAdmin(admin.ModelAdmin):
    """Read-only: specs are what AWS said plus the versioned override table (pricing.aws.specs), per snapshot."""

    list_display = ["instance_type", "gpus", "gpu_model", "gpu_memory_gib", "efa_max_interfaces", "snapshot"]
    list_filter = ["gpu_model", "snapshot"]
    search_fields = ["instance_type", "gpu_model", "gpu_name"]
    list_select_related = ["snapshot"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class _ReferenceAdmin(admin.ModelAdmin):
    """Admin edits mark the row `locally_edited`, so `load_prices` will not reset it to the fixture."""

    readonly_fields = ["updated_at"]

    def save_model(self, request, obj, form, change):
        if change and form.changed_data:
            obj.locally_edited = True
        super().save_model(request, obj, form, change)


@admin.register(ComponentPrice)
class ComponentPriceAdmin(_ReferenceAdmin):
    list_display = [
        "catalog_id",
        "part_number",
        "description",
        "category",
        "unit_price_usd",
        "confidence",
        "as_of",
        "locally_edited",
    ]
    list_filter = ["category", "confidence", "locally_edited"]
    search_fields = ["part_number", "catalog_id", "description", "source"]


@admin.register(CostParameter)
class CostParameterAdmin(_ReferenceAdmin):
    list_display = ["name", "scope", "value", "unit", "confidence", "as_of", "locally_edited"]
    list_filter = ["name", "confidence", "locally_edited"]
    search_fields = ["name", "scope", "source"]


@admin.register(SpotAdvisorBand)
class SpotAdvisorBandAdmin(_ReferenceAdmin):
    list_display = ["instance_type", "region", "band", "savings_percent", "as_of", "locally_edited"]
    list_filter = ["region", "band"]
    search_fields = ["instance_type", "region"]
    readonly_fields = []
