"""Settings for every environment, read from environment variables (django-environ).

With nothing set the app runs on its embedded stack: SQLite in WAL mode, a Celery
`filesystem://` broker under `var/`. Setting
`DATABASE_URL` (PostgreSQL) and `CELERY_BROKER_URL` (Redis) scales it out with no code change.
"""

import secrets
from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONE, SELF

from config.permissions import tighten

BASE_DIR = Path(__file__).resolve().parent.parent.parent
env = environ.Env()

# Runtime state (database, broker queue, generated secret, collected static) lives in one
# untracked folder so a clean clone has nothing to delete and nothing to leak.
VAR_DIR = Path(env("PLANNER_VAR_DIR", default=str(BASE_DIR / "var")))
# Owner-only (0700): the database, the broker queue and the secret key live here. The entry points also set
# umask 077 (config.permissions), so every file created under it is 0600.
VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)


def _secret_key() -> str:
    """Use SECRET_KEY from the environment, else a key generated once into var/ (never committed)."""
    from_env = env("SECRET_KEY", default="")
    if from_env:
        return from_env
    key_file = VAR_DIR / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "planner",
    "pricing",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "planner.middleware.RequestGuardMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "axes.middleware.AxesMiddleware",  # last: it answers a locked-out login (django-axes documentation)
]

# --- Content-Security-Policy (django-csp) -------------------------------------------------------
# Every page loads scripts, styles, fonts and images from this server only; no page has an inline script (chart
# data travels in <script type="application/json"> blocks, which are data, not code). Inline style attributes are
# allowed because the inline SVG diagrams and plotly's charts set them. Diagram files carry a stricter policy of
# their own (planner/outputs/svg_http.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:", "blob:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "worker-src": [SELF, "blob:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}

# --- Login throttling (django-axes) -----------------------------------------------------------
# Every sign-in (the login page, /admin/login/) goes through authenticate(); axes counts failures per client
# address and, separately, per username, and refuses further attempts for a cool-off period. Each attempt costs a
# password hash (about a second of CPU with a strong hasher), so this also bounds what guessing can cost us.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("PLANNER_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("PLANNER_LOGIN_COOLOFF_MIN", default=15))
AXES_LOCKOUT_PARAMETERS = ["ip_address", "username"]  # either one over the limit locks
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked.html"

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
EMBEDDED_DATABASE = DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
# SQLite pragmas chosen for crash safety (https://www.sqlite.org/howtocorrupt.html, /wal.html, /pragma.html):
# - journal_mode=WAL: readers (the web server) never block the writer (the worker), and a process killed
#   mid-write leaves a WAL that the next connection replays or discards: no torn pages in the database file.
# - synchronous=FULL: each commit fsyncs the WAL, so a committed plan survives power loss too (NORMAL is
#   corruption-safe in WAL mode but may roll back the last commits after a power cut). A plan writes a few
#   dozen small transactions, so the extra fsyncs cost milliseconds per plan.
# - timeout (busy_timeout) 20 s: a writer waits for the lock rather than failing; 20 s is far longer than any
#   transaction here (milliseconds) yet shorter than the task's database-retry budget.
# - IMMEDIATE transactions take the write lock up front, so two processes never deadlock upgrading a read lock.
# Forking with an open connection is the other documented way to corrupt SQLite: the worker's pool on
# SQLite never forks (CELERY_WORKER_POOL below, enforced by planner.signals).
SQLITE_PRAGMAS = {"journal_mode": "WAL", "synchronous": "FULL"}
SQLITE_BUSY_TIMEOUT_S = 20
if EMBEDDED_DATABASE:
    DATABASES["default"]["OPTIONS"] = {
        "timeout": SQLITE_BUSY_TIMEOUT_S,
        "init_command": "".join(f"PRAGMA {name}={value};" for name, value in SQLITE_PRAGMAS.items()),
        "transaction_mode": "IMMEDIATE",
    }
    # A file (not :memory:) so the test suite's real worker processes see the same data.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}
    _db_file = Path(DATABASES["default"]["NAME"])
    # Installs made before the owner-only rule (var/ 0755, db.sqlite3 0644) are tightened at start-up.
    tighten(VAR_DIR, [_db_file, *(_db_file.with_name(_db_file.name + s) for s in ("-wal", "-shm"))])
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "planner:plan_list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# Numbers are formatted for people by the `num` filter; raw values (ids, form values) stay machine-readable.
USE_THOUSAND_SEPARATOR = False

STATIC_URL = "static/"
# Browser libraries copied out of Python packages by scripts/vendor_assets.py (make install).
VENDOR_DIR = BASE_DIR / "var" / "vendor"
VENDOR_DIR.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static", ("vendor", str(VENDOR_DIR))]
STATIC_ROOT = Path(env("STATIC_ROOT", default=str(VAR_DIR / "static")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise warns at every request otherwise
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- API -----------------------------------------------------------------------------------
# Largest plan request accepted, in bytes; larger bodies get 413 before any parsing.
PLANNER_API_MAX_BODY_BYTES = env.int("PLANNER_API_MAX_BODY_BYTES", default=64 * 1024)
# The web form's body is capped like the API's: a plan request is a few hundred bytes (Django answers 400 above it).
DATA_UPLOAD_MAX_MEMORY_SIZE = PLANNER_API_MAX_BODY_BYTES
# Runs one user may have queued or running at once; more are refused (429) until some finish.
PLANNER_MAX_ACTIVE_RUNS_PER_USER = env.int("PLANNER_MAX_ACTIVE_RUNS_PER_USER", default=20)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "planner.api.auth.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "planner.api.pagination.StrictLimitOffsetPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_THROTTLE_CLASSES": ["rest_framework.throttling.UserRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "user": env("PLANNER_API_RATE", default="3000/min"),
        # Shared by the web form, re-runs, re-plans and the API (planner/throttles.py).
        "plan_create": env("PLANNER_CREATE_RATE", default="30/min"),
        # PDF reports and other rendered exports, per user.
        "export": env("PLANNER_EXPORT_RATE", default="20/min"),
        # What-if re-costing (a few ms each; the page debounces its sliders), per user.
        "whatif": env("PLANNER_WHATIF_RATE", default="240/min"),
    },
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["planner.api.parsers.BoundedJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "planner.api.errors.exception_handler",
    "COERCE_DECIMAL_TO_STRING": True,
    "DATETIME_FORMAT": "iso-8601",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Cluster Planner API",
    "DESCRIPTION": (
        "Plan GPU clusters for training and serving, and read their bills of materials, topology, catalog and prices. "
        "Version policy: paths under /api/ keep their meaning; fields may be added, never renamed or removed, "
        "within API version 1."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {"WorkloadEnum": "planner.choices.Workload", "RunStatusEnum": "planner.choices.RunStatus"},
}
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}

# --- Celery ---------------------------------------------------------------------------------
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="filesystem://")
# No result backend: a run's state and result live in PlanRun and Plan, which nothing reads back from Celery.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env.bool("PLANNER_TASKS_EAGER", default=False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# The pool a worker uses when its command line names none. On SQLite it is `threads`: tasks run in threads of
# the one worker process, which never forks, so no SQLite connection can be carried into a child (the cause of
# the corruption seen with prefork). The trade-off: one process, so CPU-bound plans share one core's GIL
# (numpy releases it in the search), and Celery's time limits are not enforced by this pool; the worker's own
# watchdog (planner.worker_monitor) enforces PLANNER_TASK_TIME_LIMIT_S instead. On PostgreSQL prefork stays
# (a server database has no file to corrupt, and Celery closes the connections in each child).
CELERY_WORKER_POOL = env("PLANNER_WORKER_POOL", default="threads" if EMBEDDED_DATABASE else "prefork")
# Celery beat (exactly one process per deployment; `make run` starts it) queues the sweep that recovers
# runs lost with a worker or a broker restart (see the PLANNER_RUN_* timings below), and, when
# PLANNER_PRICE_REFRESH_EVERY_H is set (> 0), the AWS price refresh (needs AWS credentials on the workers).
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Every 5 s: with the 20 s worker staleness below, a dead worker's run is re-queued within about 25 s.
PLANNER_RUN_SWEEP_EVERY_S = env.float("PLANNER_RUN_SWEEP_EVERY_S", default=5.0)
PLANNER_PRICE_REFRESH_EVERY_H = env.float("PLANNER_PRICE_REFRESH_EVERY_H", default=0.0)
CELERY_BEAT_SCHEDULE = {
    "sweep-runs": {
        "task": "planner.sweep_runs",
        "schedule": PLANNER_RUN_SWEEP_EVERY_S,
        # Ticks queued while no worker is free are dropped after this long, so they cannot pile up.
        "options": {"expires": max(60.0, 4 * PLANNER_RUN_SWEEP_EVERY_S)},
    },
}
if PLANNER_PRICE_REFRESH_EVERY_H > 0:
    CELERY_BEAT_SCHEDULE["refresh-prices"] = {
        "task": "pricing.refresh_prices",
        "schedule": timedelta(hours=PLANNER_PRICE_REFRESH_EVERY_H),
    }

if CELERY_BROKER_URL.startswith("filesystem://"):
    # The filesystem transport needs its folders to exist before the first delay(), or the
    # publisher raises FileNotFoundError; create them here, at start-up, in every process.
    BROKER_DIR = Path(env("PLANNER_BROKER_DIR", default=str(VAR_DIR / "broker")))
    _queue_dir = BROKER_DIR / "queue"
    for _folder in (_queue_dir, BROKER_DIR / "control", BROKER_DIR / "processed"):
        _folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir),
        "data_folder_out": str(_queue_dir),
        "control_folder": str(BROKER_DIR / "control"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
        # config.celery maps `filesystem://` to planner.broker's transport: an empty or malformed message file
        # is moved to this folder instead of crashing the worker's consumer.
        "quarantine_folder": str(VAR_DIR / "broker-quarantine"),
        # How long a consumer sleeps after finding the queue folder empty. kombu's default (1 s) is half a second
        # of a plan's wait on average, and `make run`'s worker pays it on every plan; at 50 ms a plan is picked up
        # within 50 ms, for 20 directory listings a second while idle (microseconds each). Redis pushes instead.
        "polling_interval": env.float("PLANNER_BROKER_POLL_S", default=0.05),
    }

# Report PDFs are rendered on a queue of their own when this names one (planner.dispatch.report_publish; scripts/run.sh
# sets `reports` and starts a worker for it): a report takes seconds to tens of seconds of CPU, and on the one-slot
# worker of `make run` every plan submitted meanwhile waited behind it (measured: 15-35 s queue waits,
# benchmarks/latency.py). Empty, as on the scale-out stack, the render task shares the default queue, as before.
PLANNER_REPORT_QUEUE = env("PLANNER_REPORT_QUEUE", default="")

# --- Planner --------------------------------------------------------------------------------
# A plan run normally takes well under a second; these bound what a runaway run may cost.
PLANNER_TASK_SOFT_TIME_LIMIT_S = env.int("PLANNER_TASK_SOFT_TIME_LIMIT_S", default=120)
# Render each finished plan's report PDF on the worker, so its download is a file read (off in the test settings:
# most tests make plans they never print).
PLANNER_PRERENDER_REPORTS = env.bool("PLANNER_PRERENDER_REPORTS", default=True)
# Build each finished plan's page charts and diagrams on the worker (planner/outputs/page_cache.py), so the page its
# author opens next reads them from a file (off in the test settings, like the reports).
PLANNER_PRERENDER_PAGES = env.bool("PLANNER_PRERENDER_PAGES", default=True)
PLANNER_TASK_TIME_LIMIT_S = env.int("PLANNER_TASK_TIME_LIMIT_S", default=150)
# Database errors inside a run are retried this many times, backing off from this many seconds.
PLANNER_TASK_DB_RETRIES = env.int("PLANNER_TASK_DB_RETRIES", default=5)
PLANNER_TASK_DB_RETRY_BACKOFF_S = env.int("PLANNER_TASK_DB_RETRY_BACKOFF_S", default=1)
# A running run whose heartbeat is older than this is presumed lost with its worker.
PLANNER_RUN_STALE_AFTER_S = env.int("PLANNER_RUN_STALE_AFTER_S", default=180)
# A stale run is re-queued this many times before it is failed for good.
PLANNER_RUN_MAX_ATTEMPTS = env.int("PLANNER_RUN_MAX_ATTEMPTS", default=2)
# A queued run nobody claimed this long after its message was sent is re-published (the message
# may be lost, e.g. Redis restarted without persistence), at most PLANNER_RUN_MAX_SENDS times.
PLANNER_RUN_QUEUED_RESEND_AFTER_S = env.int("PLANNER_RUN_QUEUED_RESEND_AFTER_S", default=300)
PLANNER_RUN_MAX_SENDS = env.int("PLANNER_RUN_MAX_SENDS", default=3)
# A queued run sent this long ago while every live worker reports itself idle has lost its message (a worker
# killed after taking the message off the filesystem queue and before claiming the run): it is re-published.
PLANNER_RUN_IDLE_RESEND_AFTER_S = env.int("PLANNER_RUN_IDLE_RESEND_AFTER_S", default=20)
# How often each worker records that it is alive and making progress (the sweep's cadence is
# PLANNER_RUN_SWEEP_EVERY_S).
PLANNER_WORKER_HEARTBEAT_S = env.float("PLANNER_WORKER_HEARTBEAT_S", default=5.0)
# A worker whose heartbeat is older than this is presumed dead: /healthz says so and the sweep re-queues the
# runs it had claimed. Four missed heartbeats, so one slow write (a busy database) is not a death.
PLANNER_WORKER_SEEN_WITHIN_S = env.int("PLANNER_WORKER_SEEN_WITHIN_S", default=20)
# The worker's own watchdog (planner.worker_monitor) exits the worker, for its supervisor to restart, when a
# received task has not started this long after it arrived while nothing else runs...
PLANNER_WORKER_START_WITHIN_S = env.float("PLANNER_WORKER_START_WITHIN_S", default=30.0)
# ...or when the broker queue has held messages this long while the worker had nothing to do.
PLANNER_WORKER_IDLE_BACKLOG_LIMIT_S = env.float("PLANNER_WORKER_IDLE_BACKLOG_LIMIT_S", default=30.0)
# The worker touches this file while its watchdog finds it making progress; the supervisor of `make run`
# (scripts/supervise.py) kills and restarts a worker whose file is older than PLANNER_WORKER_SEEN_WITHIN_S
# (a frozen process cannot exit by itself).
PLANNER_WORKER_ALIVE_FILE = Path(env("PLANNER_WORKER_ALIVE_FILE", default=str(VAR_DIR / "run" / "worker.alive")))
# /healthz: 503 when the oldest queued run has waited longer than this.
PLANNER_HEALTH_QUEUE_AGE_LIMIT_S = env.int("PLANNER_HEALTH_QUEUE_AGE_LIMIT_S", default=300)
# /healthz runs SQLite's `PRAGMA quick_check` at most this often (the answer is cached between), so health
# stays cheap however often a load balancer asks.
PLANNER_HEALTH_INTEGRITY_EVERY_S = env.int("PLANNER_HEALTH_INTEGRITY_EVERY_S", default=60)
# Retry-After sent with a 503 from /healthz.
PLANNER_HEALTH_RETRY_AFTER_S = env.int("PLANNER_HEALTH_RETRY_AFTER_S", default=30)
# A price snapshot older than this is shown as stale next to every figure priced from it.
# 0 = the sourced parameter cloud_price_stale_after_days (pricing/freshness.py); > 0 overrides it for this site.
PLANNER_PRICE_STALE_AFTER_DAYS = env.int("PLANNER_PRICE_STALE_AFTER_DAYS", default=0)
# The "Refresh prices" action: False reloads the bundled recorded prices (offline); True queues the live AWS refresh.
PLANNER_PRICE_REFRESH_LIVE = env.bool("PLANNER_PRICE_REFRESH_LIVE", default=False)
# Fault injection and demos only: sleep this long after each engine stage.
PLANNER_RUN_STAGE_DELAY_S = env.float("PLANNER_RUN_STAGE_DELAY_S", default=0.0)
# Absolute links in command output (e.g. `plan --save`); relative when empty.
PLANNER_BASE_URL = env("PLANNER_BASE_URL", default="")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    # WeasyPrint and fontTools narrate every PDF step at INFO.
    "loggers": {name: {"level": "WARNING"} for name in ("weasyprint", "fontTools")},
}
