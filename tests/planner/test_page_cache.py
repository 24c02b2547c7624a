"""The plan page's charts, diagrams and plan JSON are built once per stored result and kept (issue 16: the page's
server time for a 16,384-GPU plan). What must hold: the kept parts are exactly what a fresh build gives, a new result
(by any writer) or new drawing code is never served the old parts, a miss or a damaged file builds them again, and
only the plan's owner reaches them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.urls import reverse

from planner import services
from planner.models import Plan
from planner.outputs import page_cache
from planner.outputs.charts import PageChart, plan_charts
from planner.presenters import plan_diagrams

pytestmark = pytest.mark.django_db

SMALL = {
    "workload": "training",
    "model": {"preset": "llama-3-8b"},
    "training": {"tokens": 1e12, "gpus": 64},
    "hardware": {"system": "dgx-h100"},
}


def _plan(owner, body, capture) -> Plan:
    with capture(execute=True):
        plan = services.plan_create(owner=owner, request_data=body, name="cached")
    plan.refresh_from_db()
    return plan


@pytest.fixture
def plan(user, django_capture_on_commit_callbacks, settings, tmp_path) -> Plan:
    settings.VAR_DIR = tmp_path
    return _plan(user, SMALL, django_capture_on_commit_callbacks)


@pytest.fixture
def builds(monkeypatch):
    """Counts the builds (cache misses) while still building for real."""
    calls = []
    real = page_cache._build

    def counting(view, plan_pk):
        calls.append(view)
        return real(view, plan_pk)

    monkeypatch.setattr(page_cache, "_build", counting)
    return calls


def _kept_files(settings) -> list[str]:
    return sorted(p.name for p in (settings.VAR_DIR / "pages").glob("*.json"))


def test_built_once_then_read_from_the_file_and_equal_to_a_fresh_build(plan, builds, settings):
    first = page_cache.page_parts(plan)
    again = page_cache.page_parts(Plan.objects.get(pk=plan.pk))
    assert len(builds) == 1 and first == again
    # The kept parts are what the page drew before the cache: the same chart JSON and SVG text.
    assert again.charts == plan_charts(plan.result) and "frontier" in again.charts
    assert again.diagrams == plan_diagrams(plan.result) and again.diagrams["racks"].startswith("<svg")
    assert json.loads(again.plan_json) == plan.result
    assert (settings.VAR_DIR / "pages").stat().st_mode & 0o777 == 0o700


def test_a_result_changed_by_any_writer_gets_new_parts(
    plan, builds, settings, user, django_capture_on_commit_callbacks
):
    original = plan.result
    page_cache.page_parts(plan)
    before = _kept_files(settings)
    bigger = _plan(user, {**SMALL, "training": {"tokens": 1e12, "gpus": 512}}, django_capture_on_commit_callbacks)
    # An update() that leaves updated_at alone (as a test, a migration or an admin fix might): still a new key.
    Plan.objects.filter(pk=plan.pk).update(result=bigger.result, updated_at=plan.updated_at)
    plan.refresh_from_db()
    parts = page_cache.page_parts(plan)
    assert parts.diagrams == plan_diagrams(bigger.result) != plan_diagrams(original)
    after = _kept_files(settings)
    assert len(after) == 1 and after != before  # the old result's file is gone


def test_new_drawing_code_is_never_served_the_old_parts(plan, builds, monkeypatch):
    page_cache.page_parts(plan)
    monkeypatch.setattr(page_cache, "PAGE_PARTS_VERSION", "another")
    page_cache.code_digest.cache_clear()
    try:
        page_cache.page_parts(plan)
    finally:
        page_cache.code_digest.cache_clear()
    assert len(builds) == 2


def test_a_stale_plan_object_never_files_its_old_result_under_the_new_name(
    plan, builds, settings, user, django_capture_on_commit_callbacks
):
    """A view holding the plan from before a re-run committed builds from the stored text, not its old copy."""
    stale = Plan.objects.get(pk=plan.pk)
    bigger = _plan(user, {**SMALL, "training": {"tokens": 1e12, "gpus": 512}}, django_capture_on_commit_callbacks)
    Plan.objects.filter(pk=plan.pk).update(result=bigger.result)
    parts = page_cache.page_parts(stale)
    assert parts.diagrams == plan_diagrams(bigger.result)


def test_a_damaged_file_is_built_again_not_served(plan, builds, settings):
    page_cache.page_parts(plan)
    path = page_cache.cached_parts_path(plan)
    path.write_text('{"charts": ')
    assert page_cache.page_parts(plan).charts == plan_charts(plan.result)
    assert len(builds) == 2 and page_cache._read(path).charts == plan_charts(plan.result)


def test_a_miss_that_cannot_be_kept_still_serves_the_page(plan, alice_client, monkeypatch, settings):
    def full_disk(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(page_cache, "write_replacing", full_disk)
    response = alice_client.get(plan.get_absolute_url())
    assert response.status_code == 200 and 'id="diagram-racks"' in response.content.decode()
    assert _kept_files(settings) == []


def test_a_plan_without_a_result_has_no_parts_and_no_file(user, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    plan = Plan.objects.create(owner=user, name="queued", workload="training", request=SMALL, result=None)
    assert page_cache.page_parts(plan) == page_cache.PageParts()
    assert page_cache.cached_parts_path(plan) is None


def test_the_page_and_svg_downloads_show_the_kept_parts(plan, alice_client, builds):
    html = alice_client.get(plan.get_absolute_url()).content.decode()
    svg = alice_client.get(reverse("planner:plan_racks_svg", args=[plan.pk]))
    assert svg.status_code == 200 and svg.content.decode() == plan_diagrams(plan.result)["racks"]
    assert 'id="chart-frontier"' in html and "&quot;workload&quot;: &quot;training&quot;" in html
    assert len(builds) == 1  # the page built them, the SVG download read them


def test_only_the_owner_reaches_a_plan_whose_parts_are_kept(plan, client, other_user):
    page_cache.page_parts(plan)  # kept: the file exists
    client.force_login(other_user)
    assert client.get(plan.get_absolute_url()).status_code == 404
    assert client.get(reverse("planner:plan_racks_svg", args=[plan.pk])).status_code == 404


def test_the_worker_builds_the_parts_when_a_run_succeeds(user, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.VAR_DIR = tmp_path
    settings.PLANNER_PRERENDER_PAGES = True
    plan = _plan(user, SMALL, django_capture_on_commit_callbacks)  # eager Celery: the run task, then the build
    path = page_cache.cached_parts_path(plan)
    assert path.is_file() and json.loads(path.read_text())["diagrams"] == plan_diagrams(plan.result)


def test_a_view_during_the_workers_build_waits_for_its_file_instead_of_building(plan, builds, monkeypatch):
    """The run is marked finished before the worker builds: the author's first view takes the worker's parts."""
    import threading

    worker_parts = page_cache.PageParts(
        charts={"frontier": PageChart("Time to train", "", {"data": [], "layout": {}})}, diagrams={}, plan_json="{}"
    )
    path = page_cache.cached_parts_path(plan)
    page_cache._building_marker(plan).touch()  # the worker has started
    threading.Timer(0.2, page_cache._keep, args=(plan, path, worker_parts)).start()
    assert page_cache.page_parts(plan) == worker_parts and builds == []


def test_a_marker_left_by_a_killed_worker_does_not_hold_views(plan, builds, monkeypatch):
    import os
    import time

    marker = page_cache._building_marker(plan)
    marker.touch()
    old = time.time() - 60
    os.utime(marker, (old, old))  # the worker died a minute ago, mid-build
    waits = []
    monkeypatch.setattr(page_cache.time, "sleep", waits.append)
    page_cache.page_parts(plan)
    assert len(builds) == 1 and waits == []  # built at once, no waiting on a dead worker


def test_the_workers_build_removes_its_marker(plan, builds):
    assert page_cache.page_parts_prerender(plan) is True
    assert not page_cache._building_marker(plan).exists() and page_cache.cached_parts_path(plan).is_file()
    page_cache.page_parts_prerender(plan)  # already kept: not built again
    assert len(builds) == 1


def test_a_stale_view_passed_in_is_not_used_for_the_new_result(plan, builds, user, django_capture_on_commit_callbacks):
    from planner.outputs.plan_view import plan_view

    stale_view = plan_view(plan.result)
    bigger = _plan(user, {**SMALL, "training": {"tokens": 1e12, "gpus": 512}}, django_capture_on_commit_callbacks)
    Plan.objects.filter(pk=plan.pk).update(result=bigger.result)
    assert page_cache.page_parts(plan, stale_view).diagrams == plan_diagrams(bigger.result)
    assert builds[0] is not stale_view


def test_a_current_view_passed_in_is_reused(plan, builds):
    from planner.outputs.plan_view import plan_view

    view = plan_view(plan.result)
    page_cache.page_parts(plan, view)
    assert builds == [view]


# --- the page's sections kept as HTML (planner/outputs/page_html.py) ---------------------------------------------


def test_the_kept_sections_hold_nothing_of_the_request_or_the_user(plan, alice_client, user):
    """The CSRF token, the user's name and messages are drawn per request, around the kept HTML, never in it."""
    from django.conf import settings

    from planner.outputs.page_html import FRAGMENTS

    page = alice_client.get(plan.get_absolute_url()).content.decode()
    kept = page_cache.cached_parts_path(plan).read_text()
    assert page.count('name="csrfmiddlewaretoken"') >= 4  # run again, delete, what-if, re-plan: every form has one
    assert "csrfmiddlewaretoken" not in kept and user.username not in kept
    included = ("_summary", "_costs", "_bom", "_stage_block", "_envelope", "_legacy")
    for template in [*FRAGMENTS.values(), *(f"planner/{name}.html" for name in included)]:
        source = (Path(settings.BASE_DIR) / "templates" / template).read_text()
        for tag in re.findall(r"{%.*?%}|{{.*?}}", source):
            found = re.search(r"(?<![.\w])(csrf_token|request|user|messages|perms)\b", tag)
            assert found is None, f"{template} uses {found and found.group(1)} in {tag}"


def test_the_what_if_and_re_plan_forms_wrap_their_kept_fields(plan, alice_client):
    """The fields come from the kept HTML, the form tags and tokens from the request: they must still nest."""
    page = alice_client.get(plan.get_absolute_url()).content.decode()
    whatif = re.search(r'<form[^>]*id="whatif-form".*?</form>', page, re.S).group(0)
    assert "csrfmiddlewaretoken" in whatif and 'name="pricing.utilization"' in whatif and "whatif-save" in whatif
    replan = re.search(r'<form method="post" action="/plans/\d+/replan/">.*?</form>', page, re.S).group(0)
    assert "csrfmiddlewaretoken" in replan and replan.count('name="a__') == len(plan.result["assumptions"])


def test_every_template_of_the_kept_sections_is_in_the_code_digest():
    """A deploy that edits a section's template (or one it includes) must never serve the old HTML."""
    from django.conf import settings

    sources = {path.relative_to(settings.BASE_DIR).as_posix() for path in page_cache.digest_sources()}
    for name in ("page/lead.html", "page/tail.html", "_summary.html", "_costs.html", "_bom.html", "_stage_block.html"):
        assert f"templates/planner/{name}" in sources
    assert "planner/templatetags/planner_format.py" in sources and "planner/whatif.py" in sources


def test_a_page_view_with_kept_parts_decodes_nothing(plan, alice_client, monkeypatch):
    """The point of keeping the sections: a view reads the file, it does not decode the 16K plan's result."""
    from planner.outputs import stored_plan

    alice_client.get(plan.get_absolute_url())  # builds and keeps

    def refuse(*_args, **_kwargs):
        raise AssertionError("decoded on a kept view")

    monkeypatch.setattr(stored_plan, "from_json", refuse)
    response = alice_client.get(plan.get_absolute_url())
    assert response.status_code == 200 and 'id="chart-frontier"' in response.content.decode()
