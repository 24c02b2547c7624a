from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView
from rest_framework.routers import SimpleRouter

from pricing.api.views import PriceSnapshotViewSet

from .views import CatalogView, PlanViewSet

app_name = "api"

router = SimpleRouter(trailing_slash=True)
router.register("plans", PlanViewSet, basename="plan")
router.register("prices/snapshots", PriceSnapshotViewSet, basename="price-snapshot")

# Export endpoints are named like files (no trailing slash), so they sit outside the router.
exports = [
    path("plans/<int:pk>/bom.json", PlanViewSet.as_view({"get": "bom_json"}), name="plan-bom-json"),
    path("plans/<int:pk>/bom.csv", PlanViewSet.as_view({"get": "bom_csv"}), name="plan-bom-csv"),
    path("plans/<int:pk>/bom.xlsx", PlanViewSet.as_view({"get": "bom_xlsx"}), name="plan-bom-xlsx"),
    path("plans/<int:pk>/bom.pdf", PlanViewSet.as_view({"get": "bom_pdf"}), name="plan-bom-pdf"),
    path("plans/<int:pk>/topology.json", PlanViewSet.as_view({"get": "topology_json"}), name="plan-topology-json"),
    path("plans/<int:pk>/topology.svg", PlanViewSet.as_view({"get": "topology_svg"}), name="plan-topology-svg"),
    path("plans/<int:pk>/racks.svg", PlanViewSet.as_view({"get": "racks_svg"}), name="plan-racks-svg"),
    path("plans/<int:pk>/floor.svg", PlanViewSet.as_view({"get": "floor_svg"}), name="plan-floor-svg"),
]

urlpatterns = [
    *exports,
    path("catalog/", CatalogView.as_view(), name="catalog"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file, so the page needs no inline script (CSP).
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
    *router.urls,
]
