"""Web views. Thin: parse the request, call a selector or service, render."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from . import selectors, services
from .forms import PlanForm
from .health import health_report


@login_required
@require_GET
def plan_list(request: HttpRequest) -> HttpResponse:
    plans = selectors.plan_list(owner=request.user)
    rows = [(plan, selectors.plan_latest_run(plan=plan)) for plan in plans]
    return render(request, "planner/plan_list.html", {"rows": rows})


@login_required
@require_http_methods(["GET", "POST"])
def plan_create(request: HttpRequest) -> HttpResponse:
    form = PlanForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        plan = services.plan_create(owner=request.user, request_data=form.request_data, name=form.cleaned_data["name"])
        return redirect(plan)
    status = 400 if request.method == "POST" else 200
    return render(request, "planner/plan_form.html", {"form": form}, status=status)


@login_required
@require_GET
def plan_detail(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = selectors.plan_get_owned(owner=request.user, plan_id=plan_id)
    run = selectors.plan_latest_run(plan=plan)
    candidates = _table((plan.result or {}).get("candidates"))
    context = {"plan": plan, "run": run, "result": plan.result, "candidates": candidates}
    return render(request, "planner/plan_detail.html", context)


def _table(records: list[dict] | None) -> dict:
    """Rows of dicts -> one header (the union of keys, first-seen order) and aligned rows."""
    records = records or []
    columns = list(dict.fromkeys(key for record in records for key in record))
    return {"columns": columns, "rows": [[record.get(key) for key in columns] for record in records]}


@login_required
@require_POST
def plan_rerun(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = selectors.plan_get_owned(owner=request.user, plan_id=plan_id)
    services.plan_rerun(plan=plan)
    return redirect(plan)


@never_cache
@login_required
@require_GET
def plan_status(request: HttpRequest, plan_id: int) -> JsonResponse:
    """Polled by the run page; owner-checked like every other plan view."""
    plan = selectors.plan_get_owned(owner=request.user, plan_id=plan_id)
    run = selectors.plan_latest_run(plan=plan)
    return JsonResponse(run.status_dict() if run else {"status": "none", "finished": True})


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    report = health_report()
    return JsonResponse(report, status=200 if report["ok"] else 503)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """JSON for API clients (they parse every answer), the usual page for people."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return render(request, "404.html", status=404)
