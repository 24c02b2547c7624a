from django.contrib import admin
from django.db.models import Count

from .models import CloudOffer, PriceSnapshot


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
