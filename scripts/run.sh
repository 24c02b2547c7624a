#!/usr/bin/env bash
# Start one Celery worker and Celery beat (each restarted whenever it dies) and the web server; Ctrl-C stops all.
# Beat queues the sweep that recovers runs lost with a worker (planner.sweep_runs).
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

beat_loop() {
  while true; do
    "$CELERY" -A config beat --loglevel=INFO || true
    echo "celery beat exited; restarting in 2 s" >&2
    sleep 2
  done
}

LOOP_PIDS=()
cleanup() {
  trap - INT TERM EXIT
  echo "stopping web server, worker and beat"
  for loop_pid in "${LOOP_PIDS[@]}"; do
    children=$(pgrep -P "$loop_pid" || true)
    kill "$loop_pid" 2>/dev/null || true   # first the loop, so it cannot restart its process
    [[ -n "$children" ]] && kill $children 2>/dev/null || true
    wait "$loop_pid" 2>/dev/null || true
  done
}
trap cleanup INT TERM EXIT

worker_loop &
LOOP_PIDS+=($!)
beat_loop &
LOOP_PIDS+=($!)
echo "Cluster Planner on http://127.0.0.1:${PORT}/  (health: /healthz)"
$PY manage.py runserver "127.0.0.1:${PORT}" --noreload
