"""The report PDF is rendered once per plan result and served from its file afterwards (issue 15/16: renders
inside download requests took 3-8 s of CPU each)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from planner.models import Plan
from planner.outputs import report_cache

pytestmark = pytest.mark.django_db


@pytest.fixture
def renders(monkeypatch, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    calls = []

    def fake_render(template, context):
        calls.append(template)
        return f"%PDF-1.7 render {len(calls)}".encode()

    monkeypatch.setattr(report_cache, "render_pdf", fake_render)
    monkeypatch.setattr("planner.presenters.report_context", lambda plan: {})
    return calls


def test_rendered_once_then_served_from_the_file(renders, user, training_request):
    plan = Plan.objects.create(owner=user, name="p", workload="training", request=training_request, result={})
    first = report_cache.report_pdf(plan)
    again = report_cache.report_pdf(plan)
    assert first == again == b"%PDF-1.7 render 1" and len(renders) == 1
    path = report_cache.cached_report_path(plan)
    assert path.read_bytes() == first
    assert path.parent.stat().st_mode & 0o777 == 0o700  # reports are the owner's business: the folder is private


def test_a_new_result_is_rendered_again_and_the_old_file_removed(renders, user, training_request):
    plan = Plan.objects.create(owner=user, name="p", workload="training", request=training_request, result={})
    report_cache.report_pdf(plan)
    old = report_cache.cached_report_path(plan)
    # A re-run's result, written by an update() that leaves updated_at alone: the stored result's digest moves.
    Plan.objects.filter(pk=plan.pk).update(result={"schema_version": 2}, updated_at=plan.updated_at)
    plan.refresh_from_db()
    assert report_cache.report_pdf(plan) == b"%PDF-1.7 render 2"
    assert not old.exists() and report_cache.cached_report_path(plan).exists()
    assert sorted(p.name for p in old.parent.iterdir()) == [report_cache.cached_report_path(plan).name]


def test_a_stale_plan_object_renders_the_stored_result_not_its_copy(renders, monkeypatch, user, training_request):
    """A download holding the plan from before a re-run committed renders what the file's name says."""
    seen = []
    monkeypatch.setattr("planner.presenters.report_context", lambda plan: seen.append(plan.result) or {})
    plan = Plan.objects.create(owner=user, name="p", workload="training", request=training_request, result={"a": 1})
    Plan.objects.filter(pk=plan.pk).update(result={"a": 2})
    report_cache.report_pdf(plan)
    assert seen == [{"a": 2}] and plan.result == {"a": 1}  # the caller's object is left as it was


def test_new_report_code_renders_again(renders, monkeypatch, user, training_request):
    plan = Plan.objects.create(owner=user, name="p", workload="training", request=training_request, result={})
    report_cache.report_pdf(plan)
    monkeypatch.setattr(report_cache, "REPORT_VERSION", "another")
    report_cache._code_digest.cache_clear()
    try:
        assert report_cache.report_pdf(plan) == b"%PDF-1.7 render 2"
    finally:
        report_cache._code_digest.cache_clear()


def test_a_report_that_cannot_be_kept_is_still_served(renders, monkeypatch, user, training_request):
    def full_disk(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(report_cache, "write_replacing", full_disk)
    plan = Plan.objects.create(owner=user, name="p", workload="training", request=training_request, result={})
    assert report_cache.report_pdf(plan) == b"%PDF-1.7 render 1"
    assert not report_cache.cached_report_path(plan).exists()


def test_only_the_owner_downloads_a_kept_report(renders, client, other_user, user, training_request):
    plan = Plan.objects.create(owner=user, name="p", workload="training", request=training_request, result={"a": 1})
    report_cache.report_pdf(plan)  # kept: the file exists
    client.force_login(other_user)
    assert client.get(reverse("planner:plan_report_pdf", args=[plan.pk])).status_code == 404
    client.force_login(user)
    response = client.get(reverse("planner:plan_report_pdf", args=[plan.pk]))
    assert response.status_code == 200 and response.content == b"%PDF-1.7 render 1" and len(renders) == 1


def test_a_successful_run_has_its_report_rendered_by_the_worker(
    renders, settings, user, training_request, django_capture_on_commit_callbacks
):
    from planner import services

    settings.PLANNER_PRERENDER_REPORTS = True
    with django_capture_on_commit_callbacks(execute=True):  # eager Celery: the run, then its report task
        plan = services.plan_create(owner=user, request_data=training_request)
    plan.refresh_from_db()
    assert plan.result and report_cache.cached_report_path(plan).read_bytes() == b"%PDF-1.7 render 1"
    assert report_cache.report_pdf(plan) == b"%PDF-1.7 render 1" and len(renders) == 1  # the download reads it
