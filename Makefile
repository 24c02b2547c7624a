# Cluster Planner: `make run` to use it, `make test` to check it. Both set everything up first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.deps-installed
PORT   ?= 8000
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: install run test system-deps test-scaleout bench load capacity lint clean

## install: venv, pinned dependencies, database, catalog, fixture prices, static files (idempotent)
install: $(STAMP)
	$(PY) manage.py migrate --noinput -v 0
	$(PY) manage.py load_catalog
	$(PY) manage.py load_prices
	$(PY) scripts/vendor_assets.py
	$(PY) manage.py collectstatic --noinput -v 0

# Dependencies are reinstalled only when pyproject.toml changes.
$(STAMP): pyproject.toml scripts/deps.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) scripts/deps.py dev > $(VENV)/requirements.txt
	$(PIP) install --quiet --disable-pip-version-check -r $(VENV)/requirements.txt
	touch $@

## run: install, then one Celery worker (restarted if it dies) and the web server on 127.0.0.1:$(PORT)
run: install
	PORT=$(PORT) scripts/run.sh

## test: install (plus chromium, redis-server and fonts from Debian), then the whole suite
test: install system-deps
	$(VENV)/bin/pytest

system-deps:
	scripts/system-deps.sh

## test-scaleout: models, tasks, workers, API and pricing again on PostgreSQL + Redis
## (needs PLANNER_TEST_DATABASE_URL and PLANNER_TEST_REDIS_URL; .ci/run starts both servers)
test-scaleout: install
	DATABASE_URL="$(PLANNER_TEST_DATABASE_URL)" CELERY_BROKER_URL="$(PLANNER_TEST_REDIS_URL)" \
	  $(VENV)/bin/pytest tests/planner tests/api tests/pricing

## bench: engine speed benchmarks (pytest-benchmark)
bench: install
	$(VENV)/bin/pytest benchmarks --benchmark-only --benchmark-columns=min,median,mean,max,rounds

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

## lint: ruff
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check . || true

clean:
	rm -rf $(VENV) var staticfiles
