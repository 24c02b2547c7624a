"""API views. Thin: authenticate, look up the owner's plan, call a service, shape the answer."""

from __future__ import annotations

import json
from pathlib import Path

from django.http import HttpResponse
from django.urls import reverse
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import UserRateThrottle
from rest_framework.views import APIView

from planner import selectors, services
from planner.adapter import (
    PlanRequest,
    WhatIfRequest,
    default_catalog_dir,
    load_catalog,
    plan_whatif,
    whatif_fields,
)
from planner.choices import RunStatus
from planner.decoded_plans import costed_plan
from planner.models import Plan
from planner.outputs.bom_csv import BOM_CSV_VERSION, bom_csv
from planner.outputs.bom_xlsx import XLSX_CONTENT_TYPE, XlsxUnavailable, bom_xlsx
from planner.outputs.plan_view import plan_view
from planner.outputs.report_cache import report_pdf
from planner.outputs.svg_http import svg_response
from planner.presenters import plan_diagrams
from planner.throttles import EXPORT, PLAN_CREATE, WHATIF, ScopedThrottle

from .filters import PlanFilter
from .schema import PydanticOpenApi30Extension  # noqa: F401  (registers: PlanRequest in OpenAPI 3.0 form)
from .serializers import (
    ErrorSerializer,
    PlanAcceptedSerializer,
    PlanDetailSerializer,
    PlanSummarySerializer,
    WhatIfResponseSerializer,
)


class NotImplementedExport(APIException):
    """An export this server cannot produce (a missing optional package): 501, with the reason."""

    status_code = 501
    default_code = "not_implemented"


ERRORS = {
    400: OpenApiResponse(ErrorSerializer, description="Invalid request: every problem, by field path."),
    401: OpenApiResponse(ErrorSerializer, description="No or bad credentials."),
    403: OpenApiResponse(ErrorSerializer, description="Authenticated but not allowed (e.g. CSRF on a session)."),
    404: OpenApiResponse(ErrorSerializer, description="No such plan among yours."),
    429: OpenApiResponse(ErrorSerializer, description="Rate limited; see Retry-After."),
}


def _absolute(request: Request, path: str) -> str:
    return request.build_absolute_uri(path)


class PlanViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Your plans. Another user's plan id answers 404, exactly like one that does not exist."""

    lookup_value_regex = r"\d+"
    queryset = Plan.objects.none()  # tells the schema generator the model; get_queryset() is what runs
    filter_backends = [DjangoFilterBackend]
    filterset_class = PlanFilter  # list only: retrieve and the exports look plans up by id (self._plan())

    def get_queryset(self):
        return selectors.plan_list(owner=self.request.user)

    def get_serializer_class(self):
        return PlanSummarySerializer if self.action == "list" else PlanDetailSerializer

    def get_throttles(self):
        # Plan creation and PDF reports count against the same per-user allowances as the web pages.
        if self.action == "create":
            return [UserRateThrottle(), ScopedThrottle(PLAN_CREATE)]
        if self.action in ("bom_pdf", "bom_xlsx"):
            return [UserRateThrottle(), ScopedThrottle(EXPORT)]
        if self.action == "whatif":
            return [UserRateThrottle(), ScopedThrottle(WHATIF)]
        return super().get_throttles()

    def _plan(self) -> Plan:
        return selectors.plan_get_owned(owner=self.request.user, plan_id=self.kwargs["pk"])

    @extend_schema(
        parameters=[
            OpenApiParameter("workload", str, enum=["training", "inference"]),
            OpenApiParameter("status", str, enum=list(RunStatus.values), description="Status of the latest run."),
            OpenApiParameter("system", str, description="Catalog system id of the planned cluster."),
            OpenApiParameter("created_after", OpenApiTypes.DATETIME),
            OpenApiParameter("created_before", OpenApiTypes.DATETIME),
        ],
        responses={200: PlanSummarySerializer(many=True), **{k: ERRORS[k] for k in (400, 401, 429)}},
    )
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(responses={200: PlanDetailSerializer, **{k: ERRORS[k] for k in (401, 404, 429)}})
    def retrieve(self, request, *args, **kwargs):
        return Response(PlanDetailSerializer(self._plan(), context={"request": request}).data)

    @extend_schema(
        request=PlanRequest,  # the engine's request schema (pydantic), rendered by drf_spectacular.contrib.pydantic
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                OpenApiParameter.HEADER,
                description="Retries with the same key and body return the first plan.",
            )
        ],
        responses={
            202: PlanAcceptedSerializer,
            409: OpenApiResponse(ErrorSerializer, description="Idempotency-Key reused with a different body."),
            413: OpenApiResponse(ErrorSerializer, description="Body larger than the limit."),
            **{k: ERRORS[k] for k in (400, 401, 403, 429)},
        },
    )
    def create(self, request: Request, *args, **kwargs) -> Response:
        key = request.headers.get("Idempotency-Key", "").strip()
        if len(key) > 255:
            raise ValidationError({"Idempotency-Key": ["must be at most 255 characters"]})
        if key:
            try:
                plan, created = services.plan_create_idempotent(owner=request.user, request_data=request.data, key=key)
            except services.IdempotencyConflict as exc:
                return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        else:
            plan, created = services.plan_create(owner=request.user, request_data=request.data), True
        body = {
            "id": plan.pk,
            "status": selectors.plan_latest_run(plan=plan).status,
            "url": _absolute(request, reverse("api:plan-detail", args=[plan.pk])),
            "status_url": _absolute(request, reverse("api:plan-detail", args=[plan.pk])),
            "created": created,
        }
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})

    @extend_schema(responses={204: None, **{k: ERRORS[k] for k in (401, 403, 404, 429)}})
    def destroy(self, request: Request, *args, **kwargs) -> Response:
        services.plan_delete(plan=self._plan())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        request=WhatIfRequest,
        parameters=[
            OpenApiParameter(
                "fields",
                str,
                required=False,
                description="Only these figures of `costs`, as comma-separated dotted paths below `costs` (e.g. "
                "`onprem.capex_usd,onprem.opex_usd_per_year,onprem.tco_usd,onprem.capex_range,verdict`); a path "
                "into a list applies to every item (`cloud.job_usd`). Without it the whole `costs` section is "
                "answered. `verdict` at the top level is null unless `verdict` is asked for. A path that names no "
                "field is a 400 naming it under `fields`.",
            )
        ],
        responses={
            200: WhatIfResponseSerializer,
            409: OpenApiResponse(ErrorSerializer, description="The plan has no costs to recompute (yet)."),
            413: OpenApiResponse(ErrorSerializer, description="Body larger than the limit."),
            **{k: ERRORS[k] for k in (400, 401, 403, 404, 429)},
        },
    )
    @action(detail=True, methods=["post"], url_path="whatif")
    def whatif(self, request: Request, pk: str) -> Response:
        """Re-cost this plan with other `pricing`/`site` values (utilisation, electricity, a system's price,
        horizon, cost of capital, spot price factor): costing only, no new search, nothing stored. A changed
        deadline changes the sizing: create a new plan for that."""
        plan = selectors.plan_for_whatif(owner=request.user, plan_id=self.kwargs["pk"])
        asked = request.query_params.getlist("fields")
        fields = whatif_fields(",".join(asked).split(",")) if asked else None
        stored = costed_plan(plan.result_text) if plan.result_text not in (None, "null", "{}") else None
        if stored is None or not stored.costs_available:
            return Response(
                {"detail": "This plan has no costs to recompute (it is not finished, or its target cannot be met)."},
                status=status.HTTP_409_CONFLICT,
            )
        if stored.decoded is None:
            return Response(
                {"detail": "This plan was stored by an older version and cannot be re-costed: run it again first."},
                status=status.HTTP_409_CONFLICT,
            )
        answer = plan_whatif(
            stored={"request": stored.request},
            decoded=stored.decoded,
            plan_date=stored.plan_date,
            overrides=request.data,
            snapshot=plan.price_snapshot,
            quotes=selectors.quote_prices_for_owner(owner=plan.owner),
            fields=fields,
        )
        return Response({"plan_id": plan.pk, **answer, "verdict": answer["costs"].get("verdict")})

    def _plan_with_bom(self) -> Plan:
        plan = self._plan()
        if not plan.result or "bom" not in plan.result:
            raise NotFound("This plan has no bill of materials (no successful run with a physical build yet).")
        return plan

    @extend_schema(responses={200: OpenApiTypes.OBJECT, **{k: ERRORS[k] for k in (401, 404, 429)}})
    def bom_json(self, request: Request, pk: str) -> Response:
        return Response({"plan_id": int(pk), "lines": self._plan_with_bom().result["bom"]})  # as stored

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR, **{k: ERRORS[k] for k in (401, 404, 429)}})
    def bom_csv(self, request: Request, pk: str) -> HttpResponse:
        view = plan_view(self._plan_with_bom().result)
        lines = view.bom_lines or ()  # the typed lines of the stored plan
        response = HttpResponse(bom_csv(lines, view.lead_times), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="plan-{pk}-bom.csv"'
        response["X-BOM-CSV-Version"] = BOM_CSV_VERSION
        return response

    @extend_schema(responses={(200, XLSX_CONTENT_TYPE): OpenApiTypes.BINARY, **{k: ERRORS[k] for k in (401, 404, 429)}})
    def bom_xlsx(self, request: Request, pk: str) -> HttpResponse:
        """The plan as a workbook: sheets BOM, Cost summary, Assumptions and Options (501 without openpyxl)."""
        view = plan_view(self._plan_with_bom().result)
        try:
            content = bom_xlsx(view)
        except XlsxUnavailable as exc:
            raise NotImplementedExport(str(exc)) from exc
        response = HttpResponse(content, content_type=XLSX_CONTENT_TYPE)
        response["Content-Disposition"] = f'attachment; filename="plan-{pk}-bom.xlsx"'
        return response

    @extend_schema(responses={(200, "application/pdf"): OpenApiTypes.BINARY, **{k: ERRORS[k] for k in (401, 404, 429)}})
    def bom_pdf(self, request: Request, pk: str) -> HttpResponse:
        """The plan report (summary, BOM with totals, costs, assumptions, sources) as PDF."""
        plan = self._plan()
        if not plan.result:
            raise NotFound("This plan has no result yet.")
        response = HttpResponse(report_pdf(plan), content_type="application/pdf")
        response["Content-Disposition"] = f'attachment; filename="plan-{pk}-report.pdf"'
        return response

    @extend_schema(responses={200: OpenApiTypes.OBJECT, **{k: ERRORS[k] for k in (401, 404, 429)}})
    def topology_json(self, request: Request, pk: str) -> Response:
        """Nodes (systems, switches by fabric and tier) and link bundles with counts."""
        plan = self._plan()
        topology = (plan.result or {}).get("topology")
        if not topology:
            raise NotFound("This plan has no topology (no successful run with a physical build yet).")
        return Response({"plan_id": plan.pk, "fabric": plan.result.get("fabric"), **topology})

    @extend_schema(responses={(200, "image/svg+xml"): OpenApiTypes.STR, **{k: ERRORS[k] for k in (401, 404, 429)}})
    def topology_svg(self, request: Request, pk: str) -> HttpResponse:
        return self._diagram("topology")

    @extend_schema(responses={(200, "image/svg+xml"): OpenApiTypes.STR, **{k: ERRORS[k] for k in (401, 404, 429)}})
    def racks_svg(self, request: Request, pk: str) -> HttpResponse:
        return self._diagram("racks")

    @extend_schema(responses={(200, "image/svg+xml"): OpenApiTypes.STR, **{k: ERRORS[k] for k in (401, 404, 429)}})
    def floor_svg(self, request: Request, pk: str) -> HttpResponse:
        return self._diagram("floor")

    def _diagram(self, kind: str) -> HttpResponse:
        plan = self._plan()
        diagrams = plan_diagrams(plan.result)
        if kind not in diagrams:
            raise NotFound(f"This plan has no {kind} diagram.")
        return svg_response(diagrams[kind], f"plan-{plan.pk}-{kind}.svg")


class CatalogView(APIView):
    """The hardware catalog and model presets, every record with its source and date."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT, **{k: ERRORS[k] for k in (401, 429)}})
    def get(self, request: Request) -> Response:
        kinds = {path.stem: json.loads(path.read_text()) for path in sorted(Path(default_catalog_dir()).glob("*.json"))}
        return Response({"version": load_catalog().version, "kinds": kinds})
