"""ASGI entry point.

Serving through WSGI/ASGI is a deployment, so these entry points select the production settings themselves
(secure cookies, HSTS, required secrets): a server started without DJANGO_SETTINGS_MODULE is never the
development configuration. `make run` serves with manage.py (the embedded settings); set DJANGO_SETTINGS_MODULE
to choose otherwise.
"""

import os

from django.core.asgi import get_asgi_application

from config.permissions import restrict_umask

restrict_umask()  # var/ files owner-only
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

import config.celery  # noqa: E402, F401

application = get_asgi_application()
