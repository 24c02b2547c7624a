"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

from config.permissions import restrict_umask

restrict_umask()  # var/ files owner-only
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

import config.celery  # noqa: E402, F401

application = get_asgi_application()
