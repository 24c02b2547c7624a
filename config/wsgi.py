"""WSGI entry point (gunicorn config.wsgi).

Serving through WSGI/ASGI is a deployment, so these entry points select the production settings themselves
(secure cookies, HSTS, required secrets): a server started without DJANGO_SETTINGS_MODULE is never the
development configuration. `make run` serves with manage.py (the embedded settings); set DJANGO_SETTINGS_MODULE
to choose otherwise.
"""

import os

from django.core.wsgi import get_wsgi_application

from config.permissions import restrict_umask

restrict_umask()  # var/ files owner-only
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

import config.celery  # noqa: E402, F401  (so tasks sent from web requests use the configured app)

application = get_wsgi_application()
