from django.contrib import admin

from .models import CatalogRelease, Plan, PlanRun, VendorQuote, VendorQuoteLine, WorkerHeartbeat


class PlanRunInline(admin.TabularInline):
    model = PlanRun
    extra = 0
    readonly_fields = ["status", "progress_percent", "stage", "attempts", "queued_at", "started_at", "finished_at"]


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "workload", "created_at", "catalog_version"]
    list_filter = ["workload"]
    inlines = [PlanRunInline]


admin.site.register(CatalogRelease)
admin.site.register(WorkerHeartbeat)


class VendorQuoteLineInline(admin.TabularInline):
    model = VendorQuoteLine
    extra = 0
    readonly_fields = ["row", "part", "description", "unit_price_usd"]


@admin.register(VendorQuote)
class VendorQuoteAdmin(admin.ModelAdmin):
    """Quotes are their owner's: the admin shows them (who, when, what) and can switch one off, not edit prices."""

    list_display = ["vendor", "reference", "quoted_on", "owner", "uploaded_at", "active"]
    list_filter = ["active"]
    readonly_fields = ["owner", "vendor", "reference", "quoted_on", "filename", "uploaded_at"]
    inlines = [VendorQuoteLineInline]
