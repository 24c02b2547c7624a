#!/usr/bin/env bash
# Start throw-away redis-server and PostgreSQL servers on loopback for the scale-out test pass.
# Source it: it exports PLANNER_TEST_REDIS_URL and PLANNER_TEST_DATABASE_URL, and
# `ci_services_stop` stops both. Data lives in a temporary folder and is deleted on stop.
set -euo pipefail

CI_SERVICES_DIR=$(mktemp -d /tmp/planner-ci.XXXXXX)
chmod 755 "$CI_SERVICES_DIR"
REDIS_PORT="${REDIS_PORT:-6390}"
PG_PORT="${PG_PORT:-5439}"

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
  --pidfile "$CI_SERVICES_DIR/redis.pid" --logfile "$CI_SERVICES_DIR/redis.log"
export PLANNER_TEST_REDIS_URL="redis://127.0.0.1:${REDIS_PORT}/0"

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [[ -n "$PG_BIN" ]]; then
  as_pg=()
  # initdb refuses to run as root: use the postgres account the Debian package creates.
  [[ $(id -u) -eq 0 ]] && as_pg=(runuser -u postgres --)
  mkdir -p "$CI_SERVICES_DIR/pg" && chown -R "$( [[ $(id -u) -eq 0 ]] && echo postgres || id -un )" "$CI_SERVICES_DIR/pg"
  "${as_pg[@]}" "$PG_BIN/initdb" -D "$CI_SERVICES_DIR/pg/data" -A trust -U planner >/dev/null
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$CI_SERVICES_DIR/pg/data" -l "$CI_SERVICES_DIR/pg/log" -w \
    -o "-p $PG_PORT -k $CI_SERVICES_DIR/pg -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
  "${as_pg[@]}" "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U planner planner
  export PLANNER_TEST_DATABASE_URL="postgres://planner@127.0.0.1:${PG_PORT}/planner"
fi

ci_services_stop() {
  [[ -f "$CI_SERVICES_DIR/redis.pid" ]] && kill "$(cat "$CI_SERVICES_DIR/redis.pid")" 2>/dev/null || true
  if [[ -n "${PG_BIN:-}" && -d "$CI_SERVICES_DIR/pg/data" ]]; then
    "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$CI_SERVICES_DIR/pg/data" -m fast stop >/dev/null 2>&1 || true
  fi
  rm -rf "$CI_SERVICES_DIR"
}
