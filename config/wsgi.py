"""WSGI entry point (gunicorn config.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

import config.celery  # noqa: F401  (so tasks sent from web requests use the configured app)

application = get_wsgi_application()
