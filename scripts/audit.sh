#!/usr/bin/env bash
# `make audit`: check every pinned package of the hashed lock against the Python Packaging Advisory Database with
# pip-audit. pip-audit runs from a throw-away virtual environment of its own (it is a tool, not a dependency of the
# planner, and it would pull a newer pip into the project's venv). It needs the network (PyPI's vulnerability
# API); when that cannot be reached the check is skipped with a clear message instead of failing the build.
set -euo pipefail
cd "$(dirname "$0")/.."
PIP_AUDIT_VERSION="2.10.1"
TOOL_DIR="${PLANNER_AUDIT_VENV:-var/audit-venv}"
LOCK="requirements/main.lock"

# pip-audit asks PyPI's JSON API about each pinned version; a mirror that serves packages but not that API answers
# 404, and pip-audit would then report every package as "not found" and nothing as vulnerable. Probe one pin first.
DJANGO_PIN="$(grep -o '^django==[0-9.]*' "$LOCK" | cut -d= -f3)"
if ! python3 - "$DJANGO_PIN" <<'PY' 2>/dev/null
import sys
import urllib.request
urllib.request.urlopen(f"https://pypi.org/pypi/django/{sys.argv[1]}/json", timeout=10).read(1)
PY
then
  echo "audit: SKIPPED - PyPI's vulnerability API (pypi.org/pypi/<package>/<version>/json) cannot be reached from"
  echo "       this machine, so no package could be checked. Run 'make audit' where it can."
  exit 0
fi
if [ ! -x "$TOOL_DIR/bin/pip-audit" ]; then
  python3 -m venv "$TOOL_DIR"
  if ! "$TOOL_DIR/bin/pip" install --quiet --disable-pip-version-check "pip-audit==$PIP_AUDIT_VERSION"; then
    echo "audit: SKIPPED - pip-audit $PIP_AUDIT_VERSION could not be installed (no package index reachable)."
    exit 0
  fi
fi
# --no-deps/--disable-pip: the lock is complete and hashed, so audit exactly its pins without resolving them again.
"$TOOL_DIR/bin/pip-audit" --requirement "$LOCK" --require-hashes --no-deps --disable-pip --progress-spinner off
echo "audit: no known vulnerabilities in $LOCK"
