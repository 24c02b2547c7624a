"""The Prices page: the shared price snapshot's date and age, which of its prices are old, the next scheduled
refresh, and the staff-only refresh action (pricing/freshness.py, pricing/refresh.py)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from pricing.freshness import snapshot_freshness
from pricing.models import PriceSnapshot
from pricing.refresh import price_refresh, refresh_schedule
from pricing.selectors import price_snapshot_latest

from . import selectors


@login_required
@require_GET
def prices(request: HttpRequest) -> HttpResponse:
    """The price snapshot new plans use: its date and age, which prices are old, and the next scheduled refresh."""
    snapshot = selectors.price_snapshot_current()
    context = {
        "snapshot": snapshot,
        "freshness": snapshot_freshness(snapshot) if snapshot else None,
        "schedule": refresh_schedule(now=timezone.now(), last_live=price_snapshot_latest(kind=PriceSnapshot.Kind.LIVE)),
        "can_refresh": request.user.is_staff,
    }
    return render(request, "planner/prices.html", context)


@login_required
@require_POST
def prices_refresh(request: HttpRequest) -> HttpResponse:
    """Refresh the shared price snapshot (staff only: every user's new plans are priced with it)."""
    if not request.user.is_staff:
        raise PermissionDenied("Only staff can refresh the shared prices.")
    outcome = price_refresh()
    messages.success(request, outcome.message)
    return redirect("planner:prices")
