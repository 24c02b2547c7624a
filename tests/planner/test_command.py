"""`manage.py plan`: the same request from the command line, valid and invalid."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from django.core.management import call_command

from planner.models import Plan
from tests.support import REPO, subprocess_env

pytestmark = pytest.mark.django_db


def _run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        call_command("plan", *args)
        code = 0
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_from_file_prints_the_contract(tmp_path, capsys, training_request):
    path = tmp_path / "req.json"
    path.write_text(json.dumps(training_request))
    code, out, _err = _run(capsys, "--input", str(path))
    assert code == 0
    plan = json.loads(out)
    for key in ("training", "cluster", "explain", "catalog_version", "price_snapshot"):
        assert key in plan
    # The job may leave spare GPUs in its last system (exact global batch on 72-GPU racks).
    assert 0 < plan["training"]["gpus"] <= plan["cluster"]["gpus"]
    assert Plan.objects.count() == 0  # not saved without --save


def test_plan_from_stdin(monkeypatch, capsys, inference_request):
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(inference_request)))
    code, out, _err = _run(capsys, "--input", "-")
    assert code == 0
    result = json.loads(out)
    assert {"gpus", "replicas", "gpus_per_replica", "ttft_ms", "tpot_ms", "tokens_per_s"} <= set(result["inference"])


def test_invalid_request_exits_2_with_every_error(tmp_path, capsys, training_request):
    training_request["training"]["tokens"] = 0
    training_request["training"]["deadline_days"] = float("nan")
    training_request["hardware"]["system"] = "dgx-nope"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(training_request))  # json.dumps writes NaN, as many tools do
    code, out, err = _run(capsys, "--input", str(path))
    assert code == 2 and out == ""
    for field in ("training.tokens", "training.deadline_days", "hardware.system"):
        assert field in err


@pytest.mark.parametrize("text", ["{", "", "null", "[]", '"x"', "42"])
def test_malformed_or_non_object_input_exits_2(tmp_path, capsys, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    code, _out, err = _run(capsys, "--input", str(path))
    assert code == 2 and err.strip()
    assert "__all__" not in err  # a problem with the whole request is a sentence, not a key


def test_malformed_json_is_a_sentence(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text("{")
    _code, _out, err = _run(capsys, "--input", str(path))
    assert err.startswith("The request is not valid JSON: Expecting property name enclosed in double quotes")


def test_save_stores_plan_for_user(tmp_path, capsys, user, training_request):
    path = tmp_path / "req.json"
    path.write_text(json.dumps(training_request))
    code, out, _err = _run(capsys, "--input", str(path), "--save", "--user", "alice", "--name", "cli plan")
    assert code == 0
    printed = json.loads(out)
    plan = Plan.objects.get()
    assert printed["id"] == plan.pk and printed["url"].endswith(f"/plans/{plan.pk}/")
    assert plan.owner == user and plan.name == "cli plan" and plan.runs.get().status == "succeeded"
    # PostgreSQL's jsonb may print 7.2e24 back as an integer: compare numbers, not their spelling.
    assert _same(plan.result["training"], printed["training"])


def test_save_needs_a_known_user(tmp_path, capsys, training_request):
    path = tmp_path / "req.json"
    path.write_text(json.dumps(training_request))
    assert _run(capsys, "--input", str(path), "--save")[0] == 2
    code, _out, err = _run(capsys, "--input", str(path), "--save", "--user", "nobody")
    assert code == 2 and "nobody" in err
    assert Plan.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_real_process_exit_status(training_request):
    """The exit status a shell script sees, from a real `python manage.py plan` process."""
    env = subprocess_env()
    ok = subprocess.run(
        [sys.executable, "manage.py", "plan", "--input", "-", "--indent", "0"],
        cwd=REPO,
        env=env,
        input=json.dumps(training_request),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["cluster"]["gpus"] > 0
    bad = subprocess.run(
        [sys.executable, "manage.py", "plan", "--input", "-"],
        cwd=REPO,
        env=env,
        input='{"workload": "training"}',
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "model" in bad.stderr and bad.stdout == ""


def _same(a, b) -> bool:
    """Equal JSON values, numbers compared with a relative tolerance."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return a == pytest.approx(b, rel=1e-12)
    return a == b
