#!/usr/bin/env bash
# Start one Celery worker (restarted whenever it dies) and the web server; Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PORT:-8000}"
PY=.venv/bin/python
CELERY=.venv/bin/celery

if [[ -n "${DJANGO_SUPERUSER_USERNAME:-}" && -n "${DJANGO_SUPERUSER_PASSWORD:-}" ]]; then
  $PY manage.py createsuperuser --noinput --email "${DJANGO_SUPERUSER_EMAIL:-admin@example.invalid}" 2>/dev/null \
    && echo "Created user ${DJANGO_SUPERUSER_USERNAME}." || echo "User ${DJANGO_SUPERUSER_USERNAME} already exists."
else
  echo "To log in, create a user once:  .venv/bin/python manage.py createsuperuser"
  echo "  (or start with DJANGO_SUPERUSER_USERNAME=... DJANGO_SUPERUSER_PASSWORD=... make run)"
fi

worker_loop() {
  # A worker that dies (OOM, kill) is started again after a short pause.
  while true; do
    "$CELERY" -A config worker --loglevel=INFO --concurrency=1 --pool=prefork \
      --without-gossip --without-mingle -n "planner@%h" || true
    echo "celery worker exited; restarting in 2 s" >&2
    sleep 2
  done
}

WORKER_LOOP_PID=""
cleanup() {
  trap - INT TERM EXIT
  echo "stopping web server and worker"
  if [[ -n "$WORKER_LOOP_PID" ]]; then
    children=$(pgrep -P "$WORKER_LOOP_PID" || true)
    kill "$WORKER_LOOP_PID" 2>/dev/null || true   # first the loop, so it cannot restart the worker
    [[ -n "$children" ]] && kill $children 2>/dev/null || true
    wait "$WORKER_LOOP_PID" 2>/dev/null || true
  fi
}
trap cleanup INT TERM EXIT

worker_loop &
WORKER_LOOP_PID=$!
echo "Cluster Planner on http://127.0.0.1:${PORT}/  (health: /healthz)"
$PY manage.py runserver "127.0.0.1:${PORT}" --noreload
