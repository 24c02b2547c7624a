"""Owner-only files for the embedded stack: the database, the broker queue and the secret key.

Every entry point (manage.py, wsgi.py, asgi.py, and config.celery for the worker and beat) calls
`restrict_umask()` before anything creates a file, so new files are 0600 and new folders 0700 whatever the
shell's umask. `tighten()` fixes an install made before this rule (a var/ at 0755, a db.sqlite3 at 0644), and
`loose_paths()` is the check behind the `planner.W001` system check. chmod and stat never open the database,
so they cannot drop SQLite's POSIX locks (https://www.sqlite.org/howtocorrupt.html, section 2.2).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

OWNER_ONLY_UMASK = 0o077
FOLDER_MODE = 0o700
FILE_MODE = 0o600


def restrict_umask() -> None:
    os.umask(OWNER_ONLY_UMASK)


def tighten(var_dir: Path, files: Iterable[Path] = ()) -> None:
    """Make var/ 0700 and the given files (those that exist) 0600; paths we do not own are left to the check."""
    for path, mode in ((var_dir, FOLDER_MODE), *((f, FILE_MODE) for f in files)):
        try:
            path.chmod(mode)
        except (FileNotFoundError, PermissionError):
            continue


def loose_paths(paths: Iterable[Path]) -> list[str]:
    """The paths (of those that exist) that a group or other users may read, write or enter."""
    loose = []
    for path in paths:
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            continue
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            loose.append(f"{path} ({stat.filemode(mode)})")
    return loose
