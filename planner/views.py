"""Web views. Thin: parse the request, call a selector or service, render."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from . import quote_services, selectors, services
from .adapter import STAGES, RequestInvalid, request_for_editing
from .choices import RunStatus
from .compare import diffs_against_first, headline_rows, plan_diff
from .forms import PlanForm, QuoteUploadForm, initial_from_request
from .health import health_report
from .outputs.bom_csv import BOM_CSV_VERSION, bom_csv
from .outputs.bom_xlsx import XLSX_AVAILABLE, XLSX_CONTENT_TYPE, XlsxUnavailable, bom_xlsx
from .outputs.cache_files import stored_result
from .outputs.page_cache import page_parts
from .outputs.plan_view import plan_view
from .outputs.report_cache import report_pdf
from .outputs.svg_http import svg_response
from .quotes import MAX_QUOTE_BYTES, QuoteInvalid
from .throttles import EXPORT, PLAN_CREATE, wait_seconds
from .whatif import DEADLINE, overrides_from_post, whatif_fields

# The stages each workload's chain reports, in order (engine/chain.py's STAGES for training and inference; a
# capacity plan runs engine/envelope/plan.py, which builds and sizes the facility for each count it tries and never
# runs a workload, training or inference stage); "costing" is the pricing step (the engine's "done" before it).
_WORKLOAD_STAGES = {"capacity": ("build", "facility")}


def progress_stages(workload: str) -> list[str]:
    """The run card's stage names: the stages this workload's chain runs, then the pricing step."""
    if workload in _WORKLOAD_STAGES:
        return [*_WORKLOAD_STAGES[workload], "costing", "done"]
    other = "inference" if workload == "training" else "training"
    return [stage for stage in STAGES if stage not in (other, "done")] + ["costing", "done"]


PLANS_PER_PAGE = 50


def _too_many(request: HttpRequest, scope: str) -> HttpResponse | None:
    """429 with Retry-After when the user has used this scope's allowance (planner/throttles.py), else None."""
    wait = wait_seconds(request, scope)
    if wait is None:
        return None
    what = "new plans" if scope == PLAN_CREATE else "report downloads"
    response = render(request, "429.html", {"what": what, "wait_s": wait}, status=429)
    response["Retry-After"] = str(wait)
    return response


def _queue_full(request: HttpRequest, exc: services.QueueFull) -> HttpResponse:
    response = render(request, "429.html", {"message": str(exc)}, status=429)
    response["Retry-After"] = "60"
    return response


def _plan_id(text: str) -> int | None:
    """A plan id from a query string, or None: ASCII digits only, and small enough for any database."""
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


@login_required
@require_GET
def plan_list(request: HttpRequest) -> HttpResponse:
    search = request.GET.get("q", "").strip()[:200]
    status = request.GET.get("status", "").strip()
    status = status if status in RunStatus.values else ""
    plans = selectors.plan_list(owner=request.user, search=search, status=status)
    page = Paginator(plans, PLANS_PER_PAGE).get_page(request.GET.get("page"))
    rows = [(plan, selectors.plan_latest_run(plan=plan), plan_view(plan.result).summary) for plan in page]
    context = {"rows": rows, "search": search, "status": status, "statuses": RunStatus.choices, "page": page}
    return render(request, "planner/plan_list.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def plan_create(request: HttpRequest) -> HttpResponse:
    initial = None
    source_id = _plan_id(request.GET.get("from", "")) if request.method == "GET" else None
    if source_id is not None:
        # "Duplicate and edit": the form starts from one of the user's own plans.
        source = selectors.plan_get_owned(owner=request.user, plan_id=source_id)
        initial = initial_from_request(request_for_editing(source.request), name=f"{source.name} (copy)")
    if request.method == "POST" and (limited := _too_many(request, PLAN_CREATE)):
        return limited
    form = PlanForm(request.POST if request.method == "POST" else None, initial=initial)
    if request.method == "POST" and form.is_valid():
        parent_id = _plan_id(request.GET.get("from", ""))
        parent = selectors.plan_get_owned(owner=request.user, plan_id=parent_id) if parent_id is not None else None
        try:
            plan = services.plan_create(
                owner=request.user, request_data=form.request_data, name=form.cleaned_data["name"], parent=parent
            )
        except services.QueueFull as exc:
            return _queue_full(request, exc)
        return redirect(plan)
    status = 400 if request.method == "POST" else 200
    return render(request, "planner/plan_form.html", {"form": form}, status=status)


@login_required
@require_GET
def plan_detail(request: HttpRequest, plan_id: int) -> HttpResponse:
    """The plan page: its owner-independent sections come rendered from the kept page parts (built by the worker
    when the run ends; planner/outputs/page_html.py), so a view decodes nothing; only the run, the forms' tokens
    and a derived plan's "changed from" are drawn per request."""
    plan = selectors.plan_get_owned(owner=request.user, plan_id=plan_id, with_result=False)
    run = selectors.plan_latest_run(plan=plan)
    parts = page_parts(plan)
    context = {
        "plan": plan,
        "run": run,
        "page": parts,
        "stages": progress_stages(plan.workload),
        "xlsx_available": XLSX_AVAILABLE,
        **_lineage_context(plan),
    }
    return render(request, "planner/plan_detail.html", context)


def _lineage_context(plan) -> dict:
    """For a plan derived from another (re-planned, duplicated, what-if): that parent and what changed from it."""
    parent = plan.parent if plan.parent_id and plan.parent.owner_id == plan.owner_id else None
    changes = plan_diff(parent.request, parent.result, plan.request, plan.result) if parent else None
    return {"parent": parent, "parent_changes": changes}


@login_required
@require_GET
def plan_bom_csv(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = selectors.plan_get_owned(owner=request.user, plan_id=plan_id)
    view = plan_view(plan.result)
    lines = view.bom_lines
    if lines is None:
        raise Http404("This plan has no bill of materials yet.")
    response = HttpResponse(bom_csv(lines, view.lead_times), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="plan-{plan.pk}-bom.csv"'
    response["X-BOM-CSV-Version"] = BOM_CSV_VERSION
    return response


@login_required
@require_GET
def plan_result_json(request: HttpRequest, plan_id: int) -> HttpResponse:
    """The plan's result exactly as stored, as a file: the page links it (a large plan's JSON is megabytes, too
    much to show inline)."""
    plan = selectors.plan_get_owned(owner=request.user, plan_id=plan_id)
    stored = stored_result(plan)
    if stored is None:
        raise Http404("This plan has no result yet.")
    response = HttpResponse(stored.text, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="plan-{plan.pk}.json"'
    return response


@login_required
@require_GET
def plan_bom_xlsx(request: HttpRequest, plan_id: int) -> HttpResponse:
    """The workbook (BOM, cost summary, assumptions, options); 501 with the reason where openpyxl is missing."""
    plan = selectors.plan_get_owned(owner=request.user, plan_id=plan_id)
    view = plan_view(plan.result)
    if view.bom_lines is None:
        raise Http404("This plan has no bill of materials yet.")
    if limited := _too_many(request, EXPORT):
        return limited
    try:
        content = bom_xlsx(view)
    except XlsxUnavailable as exc:
        return HttpResponse(str(exc), status=501, content_type="text/plain; charset=utf-8")
    response = HttpResponse(content, content_type=XLSX_CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="plan-{plan.pk}-bom.xlsx"'
    return response


@login_required
@require_GET
def plan_diagram_svg(request: HttpRequest, plan_id: int, kind: str) -> HttpResponse:
    """topology.svg and racks.svg: shown in the page, in the PDF, and downloadable as files."""
    plan = selectors.plan_get_owned(owner=request.user, plan_id=plan_id)
    diagrams = page_parts(plan).diagrams
    if kind not in diagrams:
        raise Http404("This plan has no such diagram.")
    return svg_response(diagrams[kind], f"plan-{plan.pk}-{kind}.svg")


@login_required
@require_GET
def plan_report_pdf(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = selectors.plan_get_owned(owner=request.user, plan_id=plan_id)
    if not plan.result:
        raise Http404("This plan has no result yet.")
    if limited := _too_many(request, EXPORT):
        return limited
    response = HttpResponse(report_pdf(plan), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="plan-{plan.pk}-report.pdf"'
    return response


@login_required
@require_POST
def plan_delete(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = selectors.plan_get_owned(owner=request.user, plan_id=plan_id)
    name = plan.name
    services.plan_delete(plan=plan)
    messages.success(request, f"Deleted plan “{name}”.")
    return redirect("planner:plan_list")


@login_required
@require_POST
def plan_replan(request: HttpRequest, plan_id: int) -> HttpResponse:
    """Re-plan with edited assumptions (fields named `a__<assumption>`), as a new plan."""
    plan = selectors.plan_get_owned(owner=request.user, plan_id=plan_id)
    used = plan_view(plan.result).assumptions
    overrides: dict[str, object] = {}
    for name, entry in used.items():
        raw = request.POST.get(f"a__{name}", "").strip()
        if raw and raw != str(entry.value):
            try:
                overrides[name] = float(raw)
            except ValueError:
                overrides[name] = raw  # the validator names it
    if not overrides:
        messages.info(request, "No assumption was changed.")
        return redirect(plan)
    if limited := _too_many(request, PLAN_CREATE):
        return limited
    try:
        new_plan = services.plan_replan(plan=plan, assumptions=overrides)
    except services.QueueFull as exc:
        return _queue_full(request, exc)
    except RequestInvalid as exc:
        for path, problems in exc.errors.items():
            for problem in problems:
                messages.error(request, problem if problem.startswith(path) else f"{path}: {problem}")
        return redirect(plan)
    return redirect(new_plan)


@login_required
@require_POST
def plan_whatif_save(request: HttpRequest, plan_id: int) -> HttpResponse:
    """The what-if panel's buttons: "save as a new plan" (the pricing and site values as shown) or "re-plan with
    this deadline" (also the deadline, which changes the sizing). Either makes a new plan whose parent is this one."""
    plan = selectors.plan_get_owned(owner=request.user, plan_id=plan_id)
    deadline = request.POST.get("action") == "replan"
    overrides = overrides_from_post(request.POST, whatif_fields(plan_view(plan.result)), deadline=deadline)
    if deadline and DEADLINE.split(".")[1] not in overrides.get("training", {}):
        messages.info(request, "The deadline was not changed.")
        return redirect(plan)
    if not overrides:
        messages.info(request, "Nothing was changed from this plan's own values.")
        return redirect(plan)
    if limited := _too_many(request, PLAN_CREATE):
        return limited
    name = f"{plan.name} ({'re-planned' if deadline else 'what-if'})"
    try:
        new_plan = services.plan_derive(plan=plan, overrides=overrides, name=name)
    except services.QueueFull as exc:
        return _queue_full(request, exc)
    except RequestInvalid as exc:
        for path, problems in exc.errors.items():
            for problem in problems:
                messages.error(request, problem if problem.startswith(path) else f"{path}: {problem}")
        return redirect(plan)
    return redirect(new_plan)


@login_required
@require_GET
def plan_compare(request: HttpRequest) -> HttpResponse:
    # each plan once, in the order given: a plan beside itself is not a comparison
    plan_ids = list(dict.fromkeys(_plan_id(part) for part in request.GET.get("ids", "").split(",") if part.strip()))
    if None in plan_ids or not 2 <= len(plan_ids) <= 8:
        messages.error(request, "Choose two to eight of your plans to compare.")
        return redirect("planner:plan_list")
    plans = selectors.plans_owned(owner=request.user, plan_ids=plan_ids)
    rows = headline_rows([plan_view(plan.result) for plan in plans])
    diffs = list(zip(plans[1:], diffs_against_first(plans), strict=True))
    return render(request, "planner/plan_compare.html", {"plans": plans, "rows": rows, "diffs": diffs})


@login_required
@require_POST
def plan_rerun(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = selectors.plan_get_owned(owner=request.user, plan_id=plan_id)
    if limited := _too_many(request, PLAN_CREATE):
        return limited
    try:
        run = services.plan_rerun(plan=plan)
    except services.RunInProgress as exc:
        messages.info(request, str(exc))
    except services.QueueFull as exc:
        return _queue_full(request, exc)
    except RequestInvalid as exc:  # a request an older version accepted and this one refuses
        problems = "; ".join(problem for found in exc.errors.values() for problem in found)
        messages.error(request, f"This plan's request is no longer valid: {problems}")
    else:
        return redirect(run.plan)
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
    """200 when every check passes; otherwise 503 with Retry-After and the failed checks named in `failed`."""
    report = health_report()
    response = JsonResponse(report, status=200 if report["ok"] else 503)
    if not report["ok"]:
        response["Retry-After"] = str(settings.PLANNER_HEALTH_RETRY_AFTER_S)
    return response


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """JSON for API clients (they parse every answer), the usual page for people."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return render(request, "404.html", status=404)


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def api_token(request: HttpRequest) -> HttpResponse:
    """Make, replace or revoke the user's API token. The key is shown once, right after it is made."""
    new_key = None
    if request.method == "POST":
        if request.POST.get("action") == "revoke":
            services.api_token_revoke(user=request.user)
            messages.success(request, "API token revoked: tools using it are now refused.")
        else:
            new_key = services.api_token_issue(user=request.user)
    has_token = selectors.api_token_exists(user=request.user)
    return render(request, "planner/api_token.html", {"new_key": new_key, "has_token": has_token})


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def quote_list(request: HttpRequest) -> HttpResponse:
    """The user's vendor quotes and the upload form. A quote's prices override the catalog's in the user's own
    plans from their next run; every bad row and column of a file is listed, nothing is stored until all pass."""
    form = QuoteUploadForm()
    if request.method == "POST":
        form = QuoteUploadForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                if upload.size > MAX_QUOTE_BYTES:  # refused before it is read into memory
                    raise QuoteInvalid([f"the file is larger than {MAX_QUOTE_BYTES:,} bytes"])
                quote_services.quote_upload(
                    owner=request.user,
                    vendor=form.cleaned_data["vendor"],
                    reference=form.cleaned_data["reference"],
                    quoted_on=form.cleaned_data["quoted_on"],
                    filename=upload.name or "",
                    content=upload.read(),
                )
            except QuoteInvalid as exc:
                for error in exc.errors:
                    form.add_error("file", error)
            else:
                messages.success(request, "Quote stored: its prices apply to your plans from their next run.")
                return redirect("planner:quote_list")
    quotes = selectors.quotes_owned(owner=request.user)
    return render(request, "planner/quotes.html", {"form": form, "quotes": quotes}, status=400 if form.errors else 200)


@login_required
@require_POST
def quote_active(request: HttpRequest, quote_id: int) -> HttpResponse:
    """Switch one of the user's quotes on or off (another user's quote is a 404)."""
    quote = selectors.quote_get_owned(owner=request.user, quote_id=quote_id)
    quote_services.quote_set_active(quote=quote, active=request.POST.get("active") == "1")
    return redirect("planner:quote_list")
