from django.contrib import admin

from .models import CatalogRelease, Plan, PlanRun, WorkerHeartbeat


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
