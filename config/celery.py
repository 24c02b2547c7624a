"""The Celery application.

Loaded by planner.apps, wsgi.py, asgi.py and manage.py, never by planner/__init__.py, so that
importing the pure engine (`engine`) does not drag Celery and Django in with it.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
# Workers skip Django's system checks: they load every URL module (pages, PDF, charts, API docs), about
# 1.2 s of imports a worker never uses. `manage.py check`, migrate and the web servers still run them.
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

app = Celery("planner")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
