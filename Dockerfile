# Image for compose.yaml (web, worker, beat run the same image with different commands).
# The page's chart library (plotly.js basic bundle) is packed by npm in a node stage; scripts/vendor_assets.py
# checks its pinned sha512 in the image and fetches nothing when it matches.
FROM node:20-slim AS vendor
WORKDIR /build
RUN npm pack plotly.js-basic-dist-min@4.1.1 --silent && tar xzf plotly.js-basic-dist-min-4.1.1.tgz

FROM python:3.11-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Dependencies first (cached until the lock changes): every transitive package pinned with its hash (`make lock`).
COPY requirements/main.lock requirements/main.lock
RUN pip install --no-cache-dir --require-hashes -r requirements/main.lock
COPY . .
COPY --from=vendor /build/package/plotly-basic.min.js var/vendor/plotly-basic.min.js
ENV STATIC_ROOT=/app/staticfiles PLANNER_VAR_DIR=/app/var PYTHONUNBUFFERED=1
RUN python scripts/vendor_assets.py \
 && DJANGO_SETTINGS_MODULE=config.settings.base PLANNER_VAR_DIR=/tmp/build-var \
    python manage.py collectstatic --noinput -v 0 \
 && rm -rf /tmp/build-var \
 && useradd --create-home planner && mkdir -p /app/var && chown planner /app/var
USER planner
ENV DJANGO_SETTINGS_MODULE=config.settings.production
EXPOSE 8000
CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
