"""Reads. Every plan lookup goes through an owner filter, so a guessed id finds nothing."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from pricing.models import PriceSnapshot
from pricing.selectors import price_snapshot_latest

from .models import ApiToken, Plan, PlanRun


def plan_list(*, owner: AbstractBaseUser, search: str = "") -> QuerySet[Plan]:
    """The owner's plans, newest first, with their runs fetched in one query for the whole page.

    The runs are prefetched under `plan.runs` itself, so every reader (`plan_latest_run`, the API
    serializers' `plan.runs.all()`) is served from it: a page costs the same queries for 2 plans or 50.
    """
    plans = Plan.objects.filter(owner=owner).prefetch_related("runs")
    if search:
        plans = plans.filter(name__icontains=search)
    return plans


def plans_owned(*, owner: AbstractBaseUser, plan_ids: list[int]) -> list[Plan]:
    """The owner's plans among plan_ids, in the order asked; Http404 if any is not theirs."""
    found = {plan.pk: plan for plan in Plan.objects.filter(owner=owner, pk__in=plan_ids)}
    if len(found) != len(set(plan_ids)):
        raise Http404("No such plan.")
    return [found[plan_id] for plan_id in plan_ids]


def plan_get_owned(*, owner: AbstractBaseUser, plan_id: int) -> Plan:
    """The owner's plan or Http404, the same answer for 'missing' and 'someone else's'."""
    return get_object_or_404(Plan, pk=plan_id, owner=owner)


def plan_latest_run(*, plan: Plan) -> PlanRun | None:
    """The newest run; no query when plan_list prefetched the runs (a plan has only a few)."""
    return max(plan.runs.all(), key=lambda run: (run.queued_at, run.pk), default=None)


def price_snapshot_current() -> PriceSnapshot | None:
    """The snapshot new plans are priced with: the most recently observed one."""
    return price_snapshot_latest()


def api_token_exists(*, user: AbstractBaseUser) -> bool:
    return ApiToken.objects.filter(user=user).exists()
