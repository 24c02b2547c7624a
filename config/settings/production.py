"""Production settings: everything from the environment, secure by default, JSON logs.

Required: SECRET_KEY, ALLOWED_HOSTS, DATABASE_URL (PostgreSQL), CELERY_BROKER_URL (Redis).
Serve with gunicorn behind a TLS-terminating proxy; static files are served by whitenoise.
"""

import os

from django.core.exceptions import ImproperlyConfigured

for _required in ("SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "CELERY_BROKER_URL"):
    if not os.environ.get(_required):
        raise ImproperlyConfigured(f"{_required} must be set for production (see the README's deployment guide).")

from .base import *  # noqa: E402

DEBUG = False
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
# API rate limits count in the cache: it must be shared by every web process, so default to the Redis
# that already carries the broker (CACHE_URL overrides, e.g. redis://cache.internal:6379/1).
CACHES = {"default": env.cache("CACHE_URL", default=CELERY_BROKER_URL)}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "config.logging.JsonFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "json"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {name: {"level": "WARNING"} for name in ("weasyprint", "fontTools")},
}
