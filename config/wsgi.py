"""WSGI entry point (gunicorn config.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

from config.permissions import restrict_umask

restrict_umask()  # var/ files owner-only
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

import config.celery  # noqa: E402, F401  (so tasks sent from web requests use the configured app)

application = get_wsgi_application()
