"""System checks for the embedded stack: var/ and the SQLite files must be owner-only (planner.W001)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.checks import Warning, register

from config.permissions import loose_paths


def embedded_paths() -> list[Path]:
    paths = [Path(settings.VAR_DIR)]
    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        db_file = Path(database["NAME"])
        paths += [db_file, db_file.with_name(db_file.name + "-wal"), db_file.with_name(db_file.name + "-shm")]
    return paths


@register()
def check_var_permissions(app_configs=None, **_kwargs) -> list[Warning]:
    loose = loose_paths(embedded_paths())
    if not loose:
        return []
    return [
        Warning(
            "Files of the embedded stack are readable by other users: " + ", ".join(loose),
            hint="chmod 700 the var/ folder and 600 the database files; the entry points set umask 077.",
            id="planner.W001",
        )
    ]
