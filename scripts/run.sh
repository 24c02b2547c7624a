#!/usr/bin/env bash
# Start the web server, the plan worker, the report worker and Celery beat under scripts/supervise.py (each
# restarted whenever it dies, without stopping the others); Ctrl-C stops all.
# Beat queues the sweep that recovers runs lost with a worker (planner.sweep_runs).
set -euo pipefail
umask 077  # var/ (database, broker queue, secret key) owner-only
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

VAR="${PLANNER_VAR_DIR:-var}"
# Report PDFs are rendered by a worker of their own on the `reports` queue (planner.dispatch.report_publish): a
# render takes seconds of CPU, and plans submitted meanwhile must not wait behind it on the one-slot plan worker.
export PLANNER_REPORT_QUEUE="${PLANNER_REPORT_QUEUE:-reports}"
# The report worker's watchdog watches the default queue's backlog, which it does not consume: that check is off
# for it (a year), and it has a liveness file of its own. It runs at a lower CPU priority (nice 10): a render is
# background work and must not slow the page or the plan a user is waiting for.
REPORTS_ENV="nice -n 10 env PLANNER_WORKER_ALIVE_FILE=$VAR/run/reports.alive PLANNER_WORKER_IDLE_BACKLOG_LIMIT_S=31536000"
echo "Cluster Planner on http://127.0.0.1:${PORT}/  (health: /healthz)"
# scripts/supervise.py restarts whichever program dies (the others keep running), kills and restarts a worker
# whose watchdog stopped touching its liveness file, and stops them all on Ctrl-C.
# The workers' pool comes from the settings: threads on SQLite (it never forks), prefork on PostgreSQL.
exec "$PY" scripts/supervise.py --pid-dir "$VAR/run" \
  --program "web=$PY manage.py runserver 127.0.0.1:${PORT} --noreload" \
  --program "worker=$CELERY -A config worker --loglevel=INFO --concurrency=1 --without-gossip --without-mingle -n planner@%h" \
  --program "reports=$REPORTS_ENV $CELERY -A config worker -Q $PLANNER_REPORT_QUEUE --loglevel=INFO --concurrency=1 --without-gossip --without-mingle -n reports@%h" \
  --program "beat=$CELERY -A config beat --loglevel=INFO" \
  --alive "worker=${PLANNER_WORKER_ALIVE_FILE:-$VAR/run/worker.alive}" \
  --alive "reports=$VAR/run/reports.alive"
