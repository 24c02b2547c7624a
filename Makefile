# Cluster Planner: `make run` to use it, `make test` to check it. Both set everything up first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.deps-installed
LOCK   := requirements/dev.lock
UV_PIN := $(shell grep -o '"uv==[^"]*"' pyproject.toml | tr -d '"')
UV_COMPILE = $(VENV)/bin/uv pip compile pyproject.toml --quiet --generate-hashes --python-version 3.11 \
	--python-platform x86_64-manylinux_2_28 --custom-compile-command "make lock" $(LOCK_FLAGS)
PORT   ?= 8000
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: install lock run test system-deps test-scaleout bench latency load capacity faults audit lint clean screenshots

## install: venv, pinned dependencies, database, catalog, fixture prices, static files (idempotent)
install: $(STAMP)
	$(PY) manage.py migrate --noinput -v 0
	$(PY) manage.py load_catalog
	$(PY) manage.py load_prices
	$(PY) scripts/vendor_assets.py
	$(PY) manage.py collectstatic --noinput -v 0

# Dependencies come from the lock (every transitive package pinned, with hashes) and are
# reinstalled only when it changes; check_lock.py stops a pyproject.toml pin that `make lock` has not seen.
$(STAMP): $(LOCK) pyproject.toml scripts/check_lock.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) scripts/check_lock.py
	$(PIP) install --quiet --disable-pip-version-check --require-hashes -r $(LOCK)
	touch $@

## lock: resolve pyproject.toml's pins into requirements/dev.lock (main + dev) and requirements/main.lock
## (main, for the image), for Python 3.11 on Linux x86_64. `make lock LOCK_FLAGS=--upgrade` also lifts
## the transitive versions; without it, versions already in the lock are kept.
lock:
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	test -x $(VENV)/bin/uv || $(PIP) install --quiet --disable-pip-version-check "$(UV_PIN)"
	$(UV_COMPILE) --extra dev -o requirements/dev.lock
	$(UV_COMPILE) -c requirements/dev.lock -o requirements/main.lock
	$(PY) scripts/check_lock.py

## run: install, then the web server on 127.0.0.1:$(PORT), one Celery worker and Celery beat under scripts/supervise.py
## (whichever dies is restarted alone; a worker that stops making progress is restarted too)
run: install
	PORT=$(PORT) scripts/run.sh

## test: install (plus chromium, redis-server and fonts from Debian), then the whole suite as two pytest processes
## at once, one per core: tests/planner, and the rest (engine, golden, api, pricing, browser; its report is printed
## after the first's, from var/test-rest.log). Each has its own database and var folder; either failing fails.
## Tests may write bytecode (gitignored __pycache__): the worker and command subprocesses and the second pass then
## import compiled modules instead of compiling them again.
TEST_REST_LOG := var/test-rest.log
test: install system-deps
	@mkdir -p var
	@export PYTHONDONTWRITEBYTECODE=; \
	$(VENV)/bin/pytest tests --ignore=tests/planner $(PYTEST_ARGS) > $(TEST_REST_LOG) 2>&1 & rest=$$!; \
	trap 'kill $$rest 2>/dev/null' INT TERM; \
	$(VENV)/bin/pytest tests/planner $(PYTEST_ARGS); planner=$$?; \
	wait $$rest; rest_status=$$?; \
	echo "== the rest of the suite (tests/engine, golden, api, pricing, e2e) =="; cat $(TEST_REST_LOG); \
	test $$planner -eq 0 && test $$rest_status -eq 0

system-deps:
	scripts/system-deps.sh

## test-scaleout: models, tasks, workers, API and pricing again on PostgreSQL + Redis: only the tests that reach the
## database or the broker (PLANNER_TEST_SCALEOUT=1 deselects the rest, tests/conftest.py; `make test` ran them)
## (needs PLANNER_TEST_DATABASE_URL and PLANNER_TEST_REDIS_URL; .ci/run starts both servers)
test-scaleout: install
	DATABASE_URL="$(PLANNER_TEST_DATABASE_URL)" CELERY_BROKER_URL="$(PLANNER_TEST_REDIS_URL)" PLANNER_TEST_SCALEOUT=1 \
	  PYTHONDONTWRITEBYTECODE= $(VENV)/bin/pytest tests/planner tests/api tests/pricing $(PYTEST_ARGS)

## bench: engine, page and PDF speed benchmarks (pytest-benchmark), then `make latency`
bench: install
	$(VENV)/bin/pytest benchmarks --benchmark-only --benchmark-columns=min,median,mean,max,rounds
	$(PY) benchmarks/latency.py --plans $${LATENCY_PLANS:-20}

## latency: the `make run` stack (scripts/run.sh) on a throw-away var/ folder; LATENCY_PLANS plans (20) submitted
## through the web form as a browser does, each timed from submit to the finished plan page (median, p90)
## -> var/latency/results.json
latency: install
	$(PY) benchmarks/latency.py --plans $${LATENCY_PLANS:-20}

## accuracy: predicted vs published (training step time, inference serving) -> docs/accuracy.md
accuracy: $(STAMP)
	$(PY) scripts/accuracy.py

## load: bounded API load test under gunicorn on loopback (reads and creations; prints req/s, p50/p99)
load: install
	$(PY) scripts/load.py

## capacity: bounded burst of 200 plans through 1 then 2 real Celery workers on its own loopback Redis
## (plans/min, queue wait and end-to-end p50/p99 -> var/capacity/results.json; PostgreSQL if PLANNER_TEST_DATABASE_URL)
capacity: install
	$(PY) scripts/capacity.py

## audit: the hashed lock against known vulnerabilities (pip-audit in its own venv; skipped, with a message, offline)
audit:
	scripts/audit.sh

## faults: kill -9 the embedded stack (worker, plan creator, beat) at random moments, FAULT_TRIALS times (100),
## bounded by FAULT_MAX_SECONDS (540); then PRAGMA integrity_check, every run finished, and the measured
## recovery times of a killed and of a frozen worker -> var/faults/results.json
faults: install
	$(PY) scripts/faults.py --trials $${FAULT_TRIALS:-100} --max-seconds $${FAULT_MAX_SECONDS:-540}

## screenshots: the README's pictures (plan page, plan list, new-plan form, PDF first page) -> docs/screenshots/,
## taken by Debian's chromium from a throw-away database planned with the fixture prices
screenshots: install system-deps
	$(PY) scripts/screenshots.py

## lint: ruff
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check . || true

clean:
	rm -rf $(VENV) var staticfiles
