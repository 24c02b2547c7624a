"""API response shapes. The plan request has no serializer here: the request schema is the engine's pydantic
`PlanRequest` (engine/request), which both validates every request and is what drf-spectacular renders, so the
docs, the API, the form and the command can never disagree."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from planner.choices import RunStatus
from planner.models import Plan, PlanRun

# The latest run's status, null before any run. A pattern rather than an enum: the run's own `status` already names
# RunStatusEnum, and an OpenAPI 3.0 enum that also allows null collides with it in drf-spectacular's enum naming.
STATUS_SCHEMA = {
    "type": "string",
    "nullable": True,
    "pattern": f"^({'|'.join(RunStatus.values)})$",
    "description": "The latest run's status: queued, running, succeeded, infeasible (the target cannot be met; see "
    "status_reason) or failed (see status_reason and run.error). Null before any run.",
}


class PlanAcceptedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    url = serializers.URLField()
    status_url = serializers.URLField()
    created = serializers.BooleanField(help_text="False when an Idempotency-Key replay returned an earlier plan.")


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = serializers.DictField(child=serializers.ListField(child=serializers.CharField()), required=False)


class RunStatusSerializer(serializers.ModelSerializer):
    run_id = serializers.IntegerField(source="pk")
    finished = serializers.BooleanField(source="is_finished")

    class Meta:
        model = PlanRun
        fields = [
            "run_id",
            "status",
            "progress_percent",
            "stage",
            "attempts",
            "error",
            "reason",
            "queued_at",
            "started_at",
            "heartbeat_at",
            "finished_at",
            "engine_s",
            "finished",
        ]


class PlanSummarySerializer(serializers.ModelSerializer):
    system = serializers.SerializerMethodField()
    gpus = serializers.SerializerMethodField()
    status = serializers.SerializerMethodField()
    status_reason = serializers.SerializerMethodField()
    parent = serializers.PrimaryKeyRelatedField(
        read_only=True, allow_null=True, help_text="The plan this one was re-planned, duplicated or saved from."
    )
    url = serializers.HyperlinkedIdentityField(view_name="api:plan-detail")

    class Meta:
        model = Plan
        fields = [
            "id",
            "url",
            "name",
            "workload",
            "system",
            "gpus",
            "status",
            "status_reason",
            "parent",
            "created_at",
            "updated_at",
        ]

    def get_system(self, plan: Plan) -> str | None:
        return ((plan.result or {}).get("cluster") or {}).get("system")

    def get_gpus(self, plan: Plan) -> int | None:
        return ((plan.result or {}).get("cluster") or {}).get("gpus")

    @staticmethod
    def _latest(plan: Plan) -> PlanRun | None:
        return max(plan.runs.all(), key=lambda run: (run.queued_at, run.pk), default=None)

    @extend_schema_field(STATUS_SCHEMA)
    def get_status(self, plan: Plan) -> str | None:
        run = self._latest(plan)
        return run.status if run else None

    @extend_schema_field({"type": "string", "nullable": True})
    def get_status_reason(self, plan: Plan) -> str | None:
        """Why the target cannot be met (infeasible) or why the run failed, in words; null otherwise."""
        run = self._latest(plan)
        if run is None:
            return None
        if run.status == RunStatus.INFEASIBLE:
            return run.reason or None
        if run.status == RunStatus.FAILED:
            return run.error or None
        return None


class PlanDetailSerializer(PlanSummarySerializer):
    request = serializers.JSONField()
    result = serializers.JSONField(help_text="The plan (design.md contract); null until a run succeeds.")
    run = serializers.SerializerMethodField()
    catalog_version = serializers.CharField()

    class Meta(PlanSummarySerializer.Meta):
        fields = [*PlanSummarySerializer.Meta.fields, "catalog_version", "request", "run", "result"]

    @extend_schema_field(RunStatusSerializer(allow_null=True))
    def get_run(self, plan: Plan) -> dict | None:
        runs = sorted(plan.runs.all(), key=lambda run: (run.queued_at, run.pk))
        return RunStatusSerializer(runs[-1]).data if runs else None


class WhatIfResponseSerializer(serializers.Serializer):
    """The answer of `POST /api/plans/{id}/whatif/` (the schema of `costs` is the plan's `costs` section)."""

    plan_id = serializers.IntegerField()
    costs = serializers.JSONField(
        help_text="The recomputed costs section (without the sensitivity table); with `fields`, only those figures."
    )
    verdict = serializers.JSONField(allow_null=True, help_text="costs.verdict: build or rent, and what flips it.")
    pricing = serializers.JSONField(help_text="The pricing block the costs were computed with (normalised).")
    site = serializers.JSONField(help_text="The site block the costs were computed with (normalised).")
    priced_on = serializers.DateField(
        allow_null=True,
        help_text="The day the prices are dated: the plan's price snapshot's (price ages count from it); start dates "
        "count from the plan's own date.",
    )
