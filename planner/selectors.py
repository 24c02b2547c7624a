"""Reads. Every plan lookup goes through an owner filter, so a guessed id finds nothing."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery, TextField
from django.db.models.functions import Cast
from django.http import Http404
from django.shortcuts import get_object_or_404

from pricing.models import PriceSnapshot
from pricing.records import PartPriceRecord
from pricing.selectors import price_snapshot_latest

from .choices import RunStatus
from .models import ApiToken, Plan, PlanRun, VendorQuote, VendorQuoteLine


def _latest_run_status() -> Subquery:
    """The status of each plan's newest run (the one the list shows), as a subquery the list can filter on."""
    newest = PlanRun.objects.filter(plan=OuterRef("pk")).order_by("-queued_at", "-pk").values("status")[:1]
    return Subquery(newest)


def plan_list(*, owner: AbstractBaseUser, search: str = "", status: str = "") -> QuerySet[Plan]:
    """The owner's plans, newest first, with their runs fetched in one query for the whole page.

    The runs are prefetched under `plan.runs` itself, so every reader (`plan_latest_run`, the API
    serializers' `plan.runs.all()`) is served from it: a page costs the same queries for 2 plans or 50.
    `search` matches the name or, for infeasible plans, the reason in words; `status` (a RunStatus value) keeps
    the plans whose newest run has it.
    """
    plans = Plan.objects.filter(owner=owner).prefetch_related("runs")
    if search:
        reason = Q(runs__status=RunStatus.INFEASIBLE, runs__reason__icontains=search)
        plans = plans.filter(Q(name__icontains=search) | reason).distinct()
    if status:
        plans = plans_with_status(plans, status)
    return plans


def plans_with_status(plans: QuerySet[Plan], status: str) -> QuerySet[Plan]:
    """`plans` whose newest run has `status` (the status the list and the API show)."""
    return plans.annotate(latest_status=_latest_run_status()).filter(latest_status=status)


def plans_owned(*, owner: AbstractBaseUser, plan_ids: list[int]) -> list[Plan]:
    """The owner's plans among plan_ids, in the order asked; Http404 if any is not theirs."""
    found = {plan.pk: plan for plan in Plan.objects.filter(owner=owner, pk__in=plan_ids)}
    if len(found) != len(set(plan_ids)):
        raise Http404("No such plan.")
    return [found[plan_id] for plan_id in plan_ids]


def plan_get_owned(*, owner: AbstractBaseUser, plan_id: int, with_result: bool = True) -> Plan:
    """The owner's plan or Http404, the same answer for 'missing' and 'someone else's'. `with_result=False` leaves
    the stored result unread until something asks for it (the plan page reads its kept parts instead: decoding a
    16,384-GPU plan's JSON costs about 10 ms)."""
    plans = Plan.objects if with_result else Plan.objects.defer("result")
    return get_object_or_404(plans, pk=plan_id, owner=owner)


def plan_for_whatif(*, owner: AbstractBaseUser, plan_id: int) -> Plan:
    """The owner's plan with its price snapshot in the same query (a what-if re-costs with that snapshot), and
    its stored result as the database's text in `result_text` (not parsed: `planner.decoded_plans` keeps the
    decoded plan per digest of that text, so a slider's tenth call parses nothing).

    The stored result is read whole: picking sections by JSON key in the database was slower on SQLite (each key
    re-parses the document) than reading it once."""
    plans = (
        Plan.objects.select_related("price_snapshot").defer("result").annotate(result_text=Cast("result", TextField()))
    )
    return get_object_or_404(plans, pk=plan_id, owner=owner)


def plan_latest_run(*, plan: Plan) -> PlanRun | None:
    """The newest run; no query when plan_list prefetched the runs (a plan has only a few)."""
    return max(plan.runs.all(), key=lambda run: (run.queued_at, run.pk), default=None)


def price_snapshot_current() -> PriceSnapshot | None:
    """The snapshot new plans are priced with: the most recently observed one."""
    return price_snapshot_latest()


def api_token_exists(*, user: AbstractBaseUser) -> bool:
    return ApiToken.objects.filter(user=user).exists()


def quotes_owned(*, owner: AbstractBaseUser) -> QuerySet[VendorQuote]:
    """The user's uploaded quotes, newest first, with their line counts."""
    return VendorQuote.objects.filter(owner=owner).annotate(line_count=Count("lines"))


def quote_prices_for_owner(*, owner: AbstractBaseUser) -> tuple[PartPriceRecord, ...]:
    """The owner's active quote prices as price records (confidence "quote"): per part, the latest upload wins.
    Each says who quoted, the quotation's reference and date, and who uploaded it when."""
    lines = (
        VendorQuoteLine.objects.filter(quote__owner=owner, quote__active=True)
        .select_related("quote", "quote__owner")
        .order_by("quote__uploaded_at", "quote__pk", "row")
    )
    latest: dict[str, PartPriceRecord] = {}
    for line in lines:  # later uploads overwrite earlier ones
        q = line.quote
        source = (
            f"Quote from {q.vendor}, {q.reference}, dated {q.quoted_on.isoformat()} (uploaded by "
            f"{q.owner.get_username()} on {q.uploaded_at.date().isoformat()}, row {line.row})"
        )
        latest[line.part] = PartPriceRecord(
            part_number=line.part,
            catalog_id=line.part,
            unit_price_usd=line.unit_price_usd,
            source=source,
            as_of=q.quoted_on.isoformat(),
            confidence="quote",
            description=line.description,
        )
    return tuple(latest.values())


def quote_get_owned(*, owner: AbstractBaseUser, quote_id: int) -> VendorQuote:
    """One of the user's quotes; anyone else's is a 404, like a plan."""
    return get_object_or_404(VendorQuote, pk=quote_id, owner=owner)
