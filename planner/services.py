"""Writes: creating plans, executing runs (recovering lost runs and worker liveness: planner.recovery).

Views, the API, the command and the Celery task stay thin by calling these. Each write that
must be all-or-nothing runs in one transaction; validation happens before any row exists, so
bad input never leaves a half-saved plan.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import time

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from .adapter import plan_compute, request_validate
from .choices import ANSWERED_STATUSES, FINISHED_STATUSES, RunStatus
from .dispatch import report_publish, run_publish
from .models import ApiIdempotencyKey, ApiToken, Plan, PlanRun
from .selectors import price_snapshot_current, quote_prices_for_owner

logger = logging.getLogger(__name__)


def _plan_name(request: dict, name: str | None) -> str:
    if name:
        return name[:200]
    if request.get("name"):
        return str(request["name"])[:200]
    if request.get("workload") == "capacity":  # no model: named after the system planned inside the envelope
        hardware = request.get("hardware") or {}
        return f"{hardware.get('system') or 'auto'} capacity"
    model = request.get("model") or {}
    return f"{model.get('preset') or 'custom model'} {request.get('workload', '')}".strip()


class QueueFull(Exception):
    """The owner already has PLANNER_MAX_ACTIVE_RUNS_PER_USER runs waiting or running."""


def _check_queue_room(owner: AbstractBaseUser) -> None:
    """Refuse a new run while the owner has their share of the queue, so one user's burst cannot hold back
    everyone else's plans (the workers take runs in order)."""
    limit = settings.PLANNER_MAX_ACTIVE_RUNS_PER_USER
    active = PlanRun.objects.filter(plan__owner=owner).exclude(status__in=FINISHED_STATUSES).count()
    if active >= limit:
        raise QueueFull(
            f"You have {active} plans waiting or running (the limit is {limit}); "
            "new ones can be queued as those finish."
        )


MAX_REASON_CHARS = 2000


def run_outcome(result: dict) -> tuple[str, str]:
    """(status, reason) of a finished run from the plan it produced: `infeasible` with the plan's own problems in
    words when the target cannot be met (`result.feasible` false), else `succeeded` with no reason."""
    if result.get("feasible", True) is not False:
        return RunStatus.SUCCEEDED, ""
    problems = [str(p) for p in result.get("problems") or () if str(p).strip()]
    reason = " ".join(p if p.rstrip().endswith(".") else f"{p.rstrip()}." for p in problems)
    return RunStatus.INFEASIBLE, (reason or "The target cannot be met as asked.")[:MAX_REASON_CHARS]


def plan_create(
    *, owner: AbstractBaseUser, request_data: object, name: str | None = None, parent: Plan | None = None
) -> Plan:
    """Validate a request, store the plan with a queued run, and queue it once the rows commit.

    Raises RequestInvalid (before writing anything) when the request is bad, QueueFull when the owner's
    share of the queue is taken. The stored request is the normalised one (preset resolved, every default
    filled): what the plan was computed from, whatever the client left out.
    """
    request = request_validate(request_data).to_dict()
    _check_queue_room(owner)
    with transaction.atomic():
        plan = Plan.objects.create(
            owner=owner,
            name=_plan_name(request, name),
            workload=request["workload"],
            request=request,
            price_snapshot=price_snapshot_current(),
            parent=parent,
        )
        run = PlanRun.objects.create(plan=plan)
        _enqueue_on_commit(run.pk)
    return plan


class IdempotencyConflict(Exception):
    """The Idempotency-Key was already used with a different request body."""


def plan_create_idempotent(
    *, owner: AbstractBaseUser, request_data: object, key: str, name: str | None = None
) -> tuple[Plan, bool]:
    """plan_create, made safe to retry: the same key and body give back the first plan.

    Returns (plan, created). Two concurrent requests with one key race on the unique
    constraint; the loser's transaction (plan included) rolls back and it returns the winner's plan.
    """
    digest = hashlib.sha256(json.dumps(request_data, sort_keys=True, default=str).encode()).hexdigest()

    def existing() -> tuple[Plan, bool] | None:
        record = ApiIdempotencyKey.objects.select_related("plan").filter(owner=owner, key=key).first()
        if record is None:
            return None
        if record.request_sha256 != digest:
            raise IdempotencyConflict(f"Idempotency-Key {key!r} was already used with a different request body.")
        return record.plan, False

    found = existing()
    if found:
        return found
    try:
        with transaction.atomic():
            plan = plan_create(owner=owner, request_data=request_data, name=name)
            ApiIdempotencyKey.objects.create(owner=owner, key=key, request_sha256=digest, plan=plan)
    except IntegrityError:
        found = existing()
        if found is None:
            raise
        return found
    return plan, True


def plan_replan(*, plan: Plan, assumptions: dict[str, float], name: str | None = None) -> Plan:
    """A new plan from an existing one's request with some named assumptions changed.

    The original stays as it was (plans are records of what was asked and answered); the
    new one is validated like any request, so an out-of-range value is refused by field.
    """
    request = json.loads(json.dumps(plan.request))
    request["assumptions"] = {**request.get("assumptions", {}), **assumptions}
    request.pop("name", None)
    return plan_create(owner=plan.owner, request_data=request, name=name or f"{plan.name} (re-planned)", parent=plan)


def plan_derive(*, plan: Plan, overrides: dict, name: str | None = None) -> Plan:
    """A new plan from an existing one's request with what-if overrides applied (`pricing`, `site`, and
    `training.deadline_days`, which changes the sizing and so needs a new plan). Validated like any request
    (RequestInvalid by field); the new plan records `plan` as its parent."""
    request = json.loads(json.dumps(plan.request))
    for section, values in overrides.items():
        merged = dict(request.get(section) or {})
        for key, value in values.items():
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
        request[section] = merged
    request.pop("name", None)
    return plan_create(owner=plan.owner, request_data=request, name=name or f"{plan.name} (what-if)", parent=plan)


def plan_delete(*, plan: Plan) -> None:
    """Delete a plan with its runs (a queued run's task then finds nothing and does nothing)."""
    plan.delete()


class RunInProgress(Exception):
    """The plan already has a queued or running run; a second one would race it for the result."""


def plan_rerun(*, plan: Plan) -> PlanRun:
    """Run a stored plan again with today's catalog and the newest prices.

    A plan that has an answer keeps it: the re-run is a new plan whose parent is this one (same request), so its
    page says what changed (planner/compare.py: assumptions, headline figures, BOM) and the answer that was
    relied on is still there to compare with. A plan with no answer yet (failed, never finished, or stored by an
    older version that no longer reads) is run again in place. Returns the new run; `run.plan` is where it is.

    Run again twice (a double click, a second tab) gives the re-run already queued or running rather than a second
    child computing the same thing; once that child has finished, run again makes a new one (newer prices)."""
    with transaction.atomic():
        Plan.objects.select_for_update().filter(pk=plan.pk).first()  # one re-run decision at a time (PostgreSQL)
        if plan.runs.exclude(status__in=FINISHED_STATUSES).exists():
            raise RunInProgress("This plan is already being run; wait for it to finish.")
        if plan.result:
            if pending := _rerun_in_progress(plan):
                return pending
            child = plan_create(owner=plan.owner, request_data=plan.request, name=f"{plan.name} (re-run)", parent=plan)
            return child.runs.get()
        _check_queue_room(plan.owner)
        Plan.objects.filter(pk=plan.pk).update(price_snapshot=price_snapshot_current())
        run = PlanRun.objects.create(plan=plan)
        _enqueue_on_commit(run.pk)
    return run


def _rerun_in_progress(plan: Plan) -> PlanRun | None:
    """The queued or running run of a child that re-runs `plan` (same request), newest first; None if there is none.
    Children with another request (re-planned, what-if) are different questions and never stand in for a re-run."""
    pending = PlanRun.objects.filter(plan__parent=plan).exclude(status__in=FINISHED_STATUSES).select_related("plan")
    return next((run for run in pending.order_by("-pk") if run.plan.request == plan.request), None)


def _enqueue_on_commit(run_id: int) -> None:
    """Publish the run's task message once the surrounding transaction commits.

    The send is recorded first (same transaction), so the sweeper can tell a run whose message
    was lost (a broker restart without persistence) from one still waiting in a backlog.
    """
    PlanRun.objects.filter(pk=run_id).update(sends=F("sends") + 1, sent_at=timezone.now())
    _publish_on_commit(run_id)


def _publish_on_commit(run_id: int) -> None:
    transaction.on_commit(lambda: run_publish(run_id))


def plan_create_synchronous(*, owner: AbstractBaseUser, request_data: object, name: str | None = None) -> Plan:
    """Validate, run the whole chain in this process and store plan + succeeded run together.

    Used by `manage.py plan --save`: the command's caller waits for the answer anyway.
    """
    snapshot = price_snapshot_current()
    started_at = timezone.now()
    quotes = quote_prices_for_owner(owner=owner)
    outcome = plan_compute(request_data=request_data, price_snapshot=snapshot, quotes=quotes)
    request = outcome.result["request"]  # the normalised request the plan was computed from
    status, reason = run_outcome(outcome.result)
    with transaction.atomic():
        plan = Plan.objects.create(
            owner=owner,
            name=_plan_name(request, name),
            workload=request["workload"],
            request=request,
            result=outcome.result,
            catalog_version=outcome.result["catalog_version"],
            price_snapshot=snapshot,
        )
        now = timezone.now()
        PlanRun.objects.create(
            plan=plan,
            status=status,
            reason=reason,
            progress_percent=100,
            stage="done",
            attempts=1,
            started_at=started_at,
            heartbeat_at=now,
            finished_at=now,
            engine_s=outcome.engine_s,
        )
    return plan


# --- Executing a run (called by the Celery task) --------------------------------------------


def plan_run_execute(*, run_id: int, claim_token: str = "", worker: str = "") -> str:
    """Execute one run, idempotently; returns the run's final status (or why it was skipped).

    Safe to call twice with the same id (a redelivered message, a re-queue racing a slow
    worker): only the call that moves the run from `queued` to `running` does the work, and
    the result is written in one transaction that replaces, never appends. A retry of the same
    delivery (same `claim_token`, e.g. after the database blinked) may take its run back. `worker` names the
    worker process (planner.signals.worker_identity) so the sweep can tell when that process has died.
    """
    now = timezone.now()
    mine = Q(status=RunStatus.QUEUED)
    if claim_token:
        mine |= Q(status=RunStatus.RUNNING, claimed_by=claim_token)
    claimed = PlanRun.objects.filter(mine, pk=run_id).update(
        claimed_by=claim_token,
        worker=worker[:255],
        status=RunStatus.RUNNING,
        started_at=now,
        heartbeat_at=now,
        stage="validate",
        progress_percent=1,
        error="",
        attempts=F("attempts") + 1,
    )
    if not claimed:
        run = PlanRun.objects.filter(pk=run_id).only("status").first()
        status = run.status if run else "missing"
        logger.info("run %s not claimed (status %s)", run_id, status)
        return f"skipped:{status}"
    run = PlanRun.objects.select_related("plan", "plan__price_snapshot").get(pk=run_id)
    plan = run.plan
    delay_s = settings.PLANNER_RUN_STAGE_DELAY_S

    def progress(stage: str, percent: int) -> None:
        # Written by id and guarded on status, so a run that the sweeper already failed is not revived.
        PlanRun.objects.filter(pk=run_id, status=RunStatus.RUNNING, claimed_by=claim_token).update(
            stage=stage[:64], progress_percent=max(1, min(99, int(percent))), heartbeat_at=timezone.now()
        )
        if delay_s:
            time.sleep(delay_s)

    try:
        outcome = plan_compute(
            request_data=plan.request,
            price_snapshot=plan.price_snapshot,
            progress=progress,
            quotes=quote_prices_for_owner(owner=plan.owner),
        )
    except SoftTimeLimitExceeded:
        return _run_fail(run_id, f"The plan took longer than the {settings.PLANNER_TASK_SOFT_TIME_LIMIT_S} s limit.")
    except Exception:  # an engine bug must end the run, not leave it running; its detail stays in the log
        reference = secrets.token_hex(4)
        logger.exception("run %s failed (reference %s)", run_id, reference)
        return _run_fail(
            run_id, f"The planner hit an internal error (reference {reference}); it has been logged. Try again."
        )

    final_status, reason = run_outcome(outcome.result)
    with transaction.atomic():
        finished = PlanRun.objects.filter(pk=run_id, status=RunStatus.RUNNING, claimed_by=claim_token).update(
            status=final_status,
            reason=reason,
            stage="done",
            progress_percent=100,
            heartbeat_at=timezone.now(),
            finished_at=timezone.now(),
            engine_s=outcome.engine_s,
        )
        if not finished:  # the sweeper gave up on this run while it was computing
            return "skipped:no-longer-running"
        Plan.objects.filter(pk=plan.pk).update(
            result=outcome.result, catalog_version=outcome.result["catalog_version"], updated_at=timezone.now()
        )
        if settings.PLANNER_PRERENDER_REPORTS:
            transaction.on_commit(lambda: report_publish(plan.pk))
    return final_status


def plan_report_prerender(*, plan_id: int) -> bool:
    """Render and keep a finished plan's report PDF (planner/outputs/report_cache.py), so its download is a file
    read. False when the plan is gone or has no result (deleted or re-run since); render errors propagate to the
    task, which logs them: the download then renders on demand."""
    from .outputs.report_cache import report_pdf

    plan = Plan.objects.filter(pk=plan_id).exclude(result={}).first()
    if plan is None or not plan.result:
        return False
    report_pdf(plan)
    return True


def plan_run_fail(*, run_id: int, message: str) -> str:
    """Mark a run failed with a message (never overwrites a success)."""
    return _run_fail(run_id, message)


def _run_fail(run_id: int, message: str) -> str:
    PlanRun.objects.filter(pk=run_id).exclude(status__in=ANSWERED_STATUSES).update(
        status=RunStatus.FAILED, error=message, finished_at=timezone.now(), heartbeat_at=timezone.now()
    )
    return RunStatus.FAILED


def api_token_issue(*, user: AbstractBaseUser) -> str:
    """A new API token for the user, replacing any previous one (which stops working at once).

    Returns the key; only its digest is stored, so this is the one time it can be shown."""
    from .api.auth import token_digest

    key = secrets.token_urlsafe(32)
    with transaction.atomic():
        ApiToken.objects.filter(user=user).delete()
        ApiToken.objects.create(user=user, digest=token_digest(key), prefix=key[:8])
    return key


def api_token_revoke(*, user: AbstractBaseUser) -> int:
    deleted, _ = ApiToken.objects.filter(user=user).delete()
    return deleted
