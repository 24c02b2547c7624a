from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from planner import price_views, views

plan_patterns = [
    path("", views.plan_list, name="plan_list"),
    path("plans/new/", views.plan_create, name="plan_create"),
    path("plans/<int:plan_id>/", views.plan_detail, name="plan_detail"),
    path("plans/<int:plan_id>/status.json", views.plan_status, name="plan_status"),
    path("plans/<int:plan_id>/rerun/", views.plan_rerun, name="plan_rerun"),
    path("plans/<int:plan_id>/replan/", views.plan_replan, name="plan_replan"),
    path("plans/<int:plan_id>/whatif/", views.plan_whatif_save, name="plan_whatif_save"),
    path("prices/", price_views.prices, name="prices"),
    path("prices/refresh/", price_views.prices_refresh, name="prices_refresh"),
    path("plans/<int:plan_id>/delete/", views.plan_delete, name="plan_delete"),
    path("plans/compare/", views.plan_compare, name="plan_compare"),
    path("plans/<int:plan_id>/plan.json", views.plan_result_json, name="plan_result_json"),
    path("plans/<int:plan_id>/bom.csv", views.plan_bom_csv, name="plan_bom_csv"),
    path("plans/<int:plan_id>/bom.xlsx", views.plan_bom_xlsx, name="plan_bom_xlsx"),
    path("plans/<int:plan_id>/bom.pdf", views.plan_report_pdf, name="plan_report_pdf"),
    path("plans/<int:plan_id>/topology.svg", views.plan_diagram_svg, {"kind": "topology"}, name="plan_topology_svg"),
    path("plans/<int:plan_id>/racks.svg", views.plan_diagram_svg, {"kind": "racks"}, name="plan_racks_svg"),
    path("plans/<int:plan_id>/floor.svg", views.plan_diagram_svg, {"kind": "floor"}, name="plan_floor_svg"),
    path("quotes/", views.quote_list, name="quote_list"),
    path("quotes/<int:quote_id>/active/", views.quote_active, name="quote_active"),
]

urlpatterns = [
    path("", include((plan_patterns, "planner"))),
    path("api/", include("planner.api.urls")),
    path("healthz", views.healthz, name="healthz"),
    path("account/api-token/", views.api_token, name="api_token"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
]

handler404 = "planner.views.not_found"
