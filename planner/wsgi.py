"""WSGI entry point (gunicorn planner.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "planner.settings.base")

import planner.celery  # noqa: F401  (so tasks sent from web requests use the configured app)

application = get_wsgi_application()
