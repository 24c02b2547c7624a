"""API shapes. The request serializers document the plan-request contract in the OpenAPI schema;
validation itself is done by the one request validator (engine) so the API, the form and
the command can never disagree."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from planner.models import Plan, PlanRun

PRECISIONS_TRAINING = ["bf16", "fp8"]
PRECISIONS_INFERENCE = ["bf16", "fp8", "int8", "int4", "fp4"]


class MoeSerializer(serializers.Serializer):
    experts = serializers.IntegerField(min_value=1)
    active = serializers.IntegerField(min_value=1)


class ModelSpecSerializer(serializers.Serializer):
    preset = serializers.CharField(required=False, help_text="Catalog preset id, e.g. llama-3-70b (GET /api/catalog/).")
    params = serializers.FloatField(required=False, min_value=1)
    layers = serializers.IntegerField(required=False, min_value=1)
    hidden = serializers.IntegerField(required=False, min_value=1)
    heads = serializers.IntegerField(required=False, min_value=1)
    kv_heads = serializers.IntegerField(required=False, min_value=1)
    ffn_hidden = serializers.IntegerField(required=False, min_value=1)
    vocab = serializers.IntegerField(required=False, min_value=1)
    seq_len = serializers.IntegerField(required=False, min_value=1)
    ffn_gated = serializers.BooleanField(required=False)
    tied_embeddings = serializers.BooleanField(required=False)
    moe = MoeSerializer(required=False)


class TrainingParallelismSerializer(serializers.Serializer):
    tp = serializers.IntegerField(required=False, min_value=1)
    pp = serializers.IntegerField(required=False, min_value=1)
    dp = serializers.IntegerField(required=False, min_value=1)
    micro_batch = serializers.IntegerField(required=False, min_value=1)
    recompute = serializers.ChoiceField(choices=["none", "selective", "full"], required=False)
    ep = serializers.IntegerField(
        required=False, min_value=1, help_text="Expert parallelism (MoE models): divides the expert count and dp."
    )


class TrainingTargetSerializer(serializers.Serializer):
    tokens = serializers.FloatField(min_value=1, help_text="Training tokens (e.g. 1.5e13).")
    deadline_days = serializers.FloatField(required=False, help_text="Give this or gpus, not both.")
    gpus = serializers.IntegerField(required=False, min_value=1)
    global_batch_tokens = serializers.IntegerField(required=False, min_value=1)
    precision = serializers.ChoiceField(choices=PRECISIONS_TRAINING, required=False)
    parallelism = TrainingParallelismSerializer(required=False)


class InferenceParallelismSerializer(serializers.Serializer):
    tp = serializers.IntegerField(required=False, min_value=1)
    pp = serializers.IntegerField(required=False, min_value=1)


class InferenceTargetSerializer(serializers.Serializer):
    requests_per_s = serializers.FloatField()
    prompt_tokens = serializers.IntegerField(min_value=1)
    output_tokens = serializers.IntegerField(min_value=1)
    ttft_ms = serializers.FloatField(required=False)
    tpot_ms = serializers.FloatField(required=False)
    precision = serializers.ChoiceField(choices=PRECISIONS_INFERENCE, required=False)
    parallelism = InferenceParallelismSerializer(required=False)


class HardwareSerializer(serializers.Serializer):
    system = serializers.CharField(required=False, help_text="Catalog system id, or auto (every candidate).")
    fabric = serializers.ChoiceField(
        choices=["auto", "infiniband-ndr", "infiniband-xdr", "roce-400g", "roce-800g"], required=False
    )
    rack_kw = serializers.FloatField(required=False)
    cooling = serializers.ChoiceField(choices=["auto", "air", "rdhx", "liquid"], required=False)


class SiteSerializer(serializers.Serializer):
    electricity_usd_per_kwh = serializers.FloatField(required=False)
    pue = serializers.FloatField(required=False)
    colo_usd_per_kw_month = serializers.FloatField(required=False)


class PricingOptionsSerializer(serializers.Serializer):
    years = serializers.IntegerField(required=False, min_value=1)
    regions = serializers.ListField(child=serializers.CharField(), required=False)
    utilization = serializers.FloatField(required=False, help_text="Share of hours the owned cluster is busy (0-1].")
    component_prices = serializers.DictField(
        child=serializers.FloatField(), required=False,
        help_text="USD per unit by part number or catalog id; replaces the catalog price for this plan only.",
    )
    parameters = serializers.DictField(
        child=serializers.FloatField(), required=False,
        help_text="Named cost parameters (install %, maintenance %, ...) for this plan only.",
    )


class PlanRequestSerializer(serializers.Serializer):
    """The plan request (design.md). Unknown keys are rejected at every level."""

    workload = serializers.ChoiceField(choices=["training", "inference"])
    name = serializers.CharField(required=False, max_length=200)
    model = ModelSpecSerializer()
    training = TrainingTargetSerializer(required=False, help_text="Required when workload is training.")
    inference = InferenceTargetSerializer(required=False, help_text="Required when workload is inference.")
    hardware = HardwareSerializer(required=False)
    site = SiteSerializer(required=False)
    pricing = PricingOptionsSerializer(required=False)
    assumptions = serializers.DictField(
        child=serializers.FloatField(), required=False, help_text="Overrides of the engine's named defaults."
    )


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
        fields = ["run_id", "status", "progress_percent", "stage", "attempts", "error", "queued_at", "started_at",
                  "heartbeat_at", "finished_at", "engine_s", "finished"]


class PlanSummarySerializer(serializers.ModelSerializer):
    system = serializers.SerializerMethodField()
    gpus = serializers.SerializerMethodField()
    status = serializers.SerializerMethodField()
    url = serializers.HyperlinkedIdentityField(view_name="api:plan-detail")

    class Meta:
        model = Plan
        fields = ["id", "url", "name", "workload", "system", "gpus", "status", "created_at", "updated_at"]

    def get_system(self, plan: Plan) -> str | None:
        return ((plan.result or {}).get("cluster") or {}).get("system")

    def get_gpus(self, plan: Plan) -> int | None:
        return ((plan.result or {}).get("cluster") or {}).get("gpus")

    def get_status(self, plan: Plan) -> str | None:
        runs = sorted(plan.runs.all(), key=lambda run: (run.queued_at, run.pk))
        return runs[-1].status if runs else None


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
