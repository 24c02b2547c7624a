"""Read-only price snapshots and their offers (what every plan was priced with)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from pricing.models import PriceSnapshot
from pricing.selectors import cloud_offers_for_snapshot

from .serializers import CloudOfferSerializer, PriceSnapshotSerializer

NOT_FOUND = OpenApiResponse(description="No such snapshot.")
BAD = OpenApiResponse(description="Malformed query parameters.")


@extend_schema_view(
    list=extend_schema(responses={200: PriceSnapshotSerializer(many=True), 400: BAD}),
    retrieve=extend_schema(responses={200: PriceSnapshotSerializer, 404: NOT_FOUND}),
)
class PriceSnapshotViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = PriceSnapshotSerializer
    queryset = PriceSnapshot.objects.order_by("-fetched_at", "-pk")
    lookup_value_regex = r"\d+"

    @extend_schema(
        parameters=[
            OpenApiParameter("instance_type", str),
            OpenApiParameter("region", str),
            OpenApiParameter(
                "purchase", str, enum=["on_demand", "spot", "reserved_1y", "reserved_3y", "capacity_block"]
            ),
        ],
        responses={200: CloudOfferSerializer(many=True), 400: BAD, 404: NOT_FOUND},
    )
    @action(detail=True, methods=["get"])
    def offers(self, request: Request, pk: str) -> Response:
        params = request.query_params
        offers = cloud_offers_for_snapshot(
            snapshot=self.get_object(),
            instance_types=[params["instance_type"]] if params.get("instance_type") else None,
            regions=[params["region"]] if params.get("region") else None,
            purchases=[params["purchase"]] if params.get("purchase") else None,
        )
        page = self.paginate_queryset(offers)
        return self.get_paginated_response(CloudOfferSerializer(page, many=True).data)
