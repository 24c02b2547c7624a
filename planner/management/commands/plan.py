"""`manage.py plan --input FILE|-`: validate a request, run the whole chain, print the plan JSON.

Exit status 0 with the plan on stdout; 2 with every field error on stderr when the request is
bad (malformed JSON included), the same errors the form and the API report.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from planner import services
from planner.adapter import RequestInvalid, plan_compute
from planner.selectors import price_snapshot_current

EXIT_INVALID = 2


class Command(BaseCommand):
    help = "Plan a cluster from a request JSON file (or - for stdin) and print the plan JSON."
    # No system checks: they import every URL module (views, PDF, charts, API docs), about 1 s
    # of imports this command never uses; `manage.py check` and the servers still run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--input", "-i", required=True, help="Request JSON file, or - for stdin.")
        parser.add_argument("--save", action="store_true", help="Also store the plan (needs --user).")
        parser.add_argument("--user", help="Owner of the saved plan (username).")
        parser.add_argument("--name", help="Name of the saved plan.")
        parser.add_argument("--indent", type=int, default=2, help="JSON indent (0 for one line).")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["save"] and not options["user"]:
            self._invalid({"--user": ["--save needs --user NAME"]})
        request_data = self._read(options["input"])
        try:
            if options["save"]:
                owner = self._owner(options["user"])
                plan = services.plan_create_synchronous(owner=owner, request_data=request_data, name=options["name"])
                result = dict(plan.result)
                result["id"] = plan.pk
                result["url"] = settings.PLANNER_BASE_URL.rstrip("/") + plan.get_absolute_url()
            else:
                result = plan_compute(request_data=request_data, price_snapshot=price_snapshot_current()).result
        except RequestInvalid as exc:
            self._invalid(exc.errors)
        indent = options["indent"] or None
        self.stdout.write(json.dumps(result, indent=indent, sort_keys=False, allow_nan=False))

    def _read(self, source: str) -> object:
        try:
            text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot read {source}: {exc.strerror}") from exc
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            self._invalid(
                {"__all__": [f"The request is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})."]}
            )
        except (ValueError, RecursionError):
            self._invalid({"__all__": ["The request is not valid JSON: a number is too long or the nesting too deep."]})

    def _owner(self, username: str):
        try:
            return get_user_model().objects.get_by_natural_key(username)
        except get_user_model().DoesNotExist:
            self._invalid({"--user": [f"no user named {username!r}"]})

    def _invalid(self, errors: dict[str, list[str]]) -> None:
        for path, messages in errors.items():
            for message in messages:
                # a problem with the whole request has no field to name: the sentence alone
                whole = path == "__all__" or message.startswith(path)
                self.stderr.write(message if whole else f"{path}: {message}")
        sys.exit(EXIT_INVALID)
