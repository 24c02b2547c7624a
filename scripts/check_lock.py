"""Fail when a pin in pyproject.toml is missing from, or differs in, the lock files.

`make install` installs requirements/dev.lock, not pyproject.toml, so a pin changed in
pyproject.toml without `make lock` would otherwise be silently ignored. This check reads
files only (no network), so it is cheap enough to run before every install.

Usage: check_lock.py            (exit 0 when both locks agree with pyproject.toml)
"""

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCKS = {"requirements/main.lock": [], "requirements/dev.lock": ["dev"]}
PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*([^\s;\\#]+)")


def canonical(name: str) -> str:
    """PEP 503 name, so `Django` in pyproject.toml matches `django` in the lock."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lines: list[str]) -> dict[str, str]:
    """Map canonical name -> exact version for every `name==version` line."""
    found: dict[str, str] = {}
    for line in lines:
        match = PIN.match(line)
        if match:
            found[canonical(match.group(1))] = match.group(2)
    return found


def problems() -> list[str]:
    """Every disagreement between pyproject.toml's pins and the lock files, as readable lines."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    out: list[str] = []
    for lock_name, extras in LOCKS.items():
        lock_path = ROOT / lock_name
        if not lock_path.exists():
            out.append(f"{lock_name} is missing")
            continue
        wanted_lines = list(project["dependencies"])
        for extra in extras:
            wanted_lines += project["optional-dependencies"][extra]
        wanted = pins(wanted_lines)
        if len(wanted) != len(wanted_lines):
            out.append(f"pyproject.toml: every requirement must be an exact pin (name==version) for {lock_name}")
        locked = pins(lock_path.read_text().splitlines())
        for name, version in sorted(wanted.items()):
            if locked.get(name) != version:
                out.append(f"{lock_name}: {name} is {locked.get(name, 'absent')}, pyproject.toml pins {version}")
    return out


def main() -> int:
    found = problems()
    for line in found:
        print(line, file=sys.stderr)
    if found:
        print("The lock files are out of date: run `make lock`.", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
