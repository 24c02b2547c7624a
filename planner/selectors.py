"""Reads. Every plan lookup goes through an owner filter, so a guessed id finds nothing."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Prefetch, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from pricing.models import PriceSnapshot
from pricing.selectors import price_snapshot_latest

from .models import Plan, PlanRun


def plan_list(*, owner: AbstractBaseUser, search: str = "") -> QuerySet[Plan]:
    """The owner's plans, newest first, each with its runs newest first (one query for all runs)."""
    runs = Prefetch("runs", queryset=PlanRun.objects.order_by("-queued_at", "-pk"), to_attr="runs_newest_first")
    plans = Plan.objects.filter(owner=owner).prefetch_related(runs)
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
    prefetched = getattr(plan, "runs_newest_first", None)
    if prefetched is not None:
        return prefetched[0] if prefetched else None
    return plan.runs.order_by("-queued_at", "-pk").first()


def price_snapshot_current() -> PriceSnapshot | None:
    """The snapshot new plans are priced with: the most recently observed one."""
    return price_snapshot_latest()


def api_token_exists(*, user: AbstractBaseUser) -> bool:
    from rest_framework.authtoken.models import Token

    return Token.objects.filter(user=user).exists()
