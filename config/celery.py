"""The Celery application.

Loaded by planner.apps, wsgi.py, asgi.py and manage.py, never by planner/__init__.py, so that
importing the pure engine (`engine`) does not drag Celery and Django in with it.
"""

import os

from celery import Celery
from kombu.transport import TRANSPORT_ALIASES

from config.permissions import restrict_umask

restrict_umask()  # the worker and beat create var/ files (database, broker messages, beat schedule)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
# `filesystem://` means kombu's filesystem transport with bad message files quarantined (planner.broker).
# Mapped by scheme, not by the broker_transport setting, so a process that switches to a Redis URL is unaffected.
TRANSPORT_ALIASES["filesystem"] = "planner.broker:QuarantiningTransport"
# Workers skip Django's system checks: they load every URL module (pages, PDF, charts, API docs), about
# 1.2 s of imports a worker never uses. `manage.py check`, migrate and the web servers still run them.
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

app = Celery("planner")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
