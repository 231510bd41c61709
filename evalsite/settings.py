"""evalsite settings, driven by environment variables.

DEBUG is off unless DEBUG=1. Without DATABASE_URL the site uses an embedded SQLite file;
without REDIS_URL, Celery uses kombu's filesystem transport under var/broker so that
background work still runs in a separate worker process.
"""

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from evalsite.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_path,
    env_str,
    secret_key_problem,
)
from evalsite.storage import default_storage_from_env

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = env_path("EVALSITE_VAR_DIR", BASE_DIR / "var")
VAR_DIR.mkdir(parents=True, exist_ok=True)


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "insecure-development-key-only-for-debug"
elif not DEBUG and (problem := secret_key_problem(SECRET_KEY)):
    # Sessions, password resets and CSRF tokens are signed with it: a guessable key signs
    # anyone in. `python -c "import secrets; print(secrets.token_urlsafe(50))"` makes one.
    raise ImproperlyConfigured(f"SECRET_KEY {problem} (DEBUG is off).")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "audit",
    "metrics",
]
# The benchmark commands (docs/performance.md) are a dev-only app under tests/, which the
# production image leaves out (.dockerignore): installed wherever it is present.
if (BASE_DIR / "tests" / "bench" / "apps.py").is_file():
    INSTALLED_APPS.append("tests.bench")

MIDDLEWARE = [
    "evalsite.middleware.RequestSizeMiddleware",  # first: nothing may read a body over the limit
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "evalsite.middleware.RequestGuardMiddleware",
]

ROOT_URLCONF = "evalsite.urls"
WSGI_APPLICATION = "evalsite.wsgi.application"

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
                "audit.context_processors.roles",
                "audit.context_processors.shortcuts",
                "audit.context_processors.inbox",
                "evalsite.middleware.csp_nonce",
            ],
            "builtins": ["template_partials.templatetags.partials"],
            # Markup written in Python where a benchmark shows templates cost too much.
            "libraries": {
                "editor_options": "evalsite.perf.editor_options",
                "item_cards": "evalsite.perf.item_cards",
                "table_rows": "evalsite.perf.table_rows",
            },
        },
    }
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DB_CONN_MAX_AGE", 60, minimum=0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web server read while the worker writes.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env_path("STATIC_ROOT", BASE_DIR / "staticfiles")
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
MEDIA_ROOT = env_path("MEDIA_ROOT", VAR_DIR / "media")
MEDIA_URL = "media/"
# Uploaded evaluation files and export files: local disk, or S3-compatible (evalsite/storage.py).
STORAGES = {
    "default": default_storage_from_env(),
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Request bodies larger than this are refused by their Content-Length before anything reads
# them, multipart uploads included (evalsite.middleware.RequestSizeMiddleware); evaluation
# uploads have their own limit (EVALUATION_MAX_FILE_BYTES per file).
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MAX_REQUEST_BYTES", 10 * 1024 * 1024, minimum=1)
FILE_UPLOAD_MAX_MEMORY_SIZE = DATA_UPLOAD_MAX_MEMORY_SIZE
# API query strings longer than this answer 414 (JSON), before any view runs. gunicorn's own
# request-line limit is lifted in gunicorn.conf.py (limit_request_line = 0) so that this check,
# not gunicorn's HTML 414, is what a client meets.
MAX_QUERY_STRING_LENGTH = env_int("MAX_QUERY_STRING_LENGTH", 16384, minimum=1)
EVALUATION_MAX_FILE_BYTES = env_int("EVALUATION_MAX_FILE_BYTES", 20 * 1024 * 1024, minimum=1)

if not DEBUG:
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
# X-Forwarded-Proto and the client address in X-Forwarded-For are believed only behind a proxy
# that sets them (evalsite/throttling.py, client_address).
TRUSTED_PROXY = env_bool("TRUSTED_PROXY", False)
if TRUSTED_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# --- Celery -------------------------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL")

# --- Cache ----------------------------------------------------------------------------------
# Presence ("someone else is editing"), throttling counters and cached pages must be the same
# for every web process and worker: with Redis configured, they live there. Without it (a
# single `make run` process) the per-process memory cache is enough.
# Redis down fails open (evalsite/cache.py): rate limits, the sign-in lockout and presence
# are off meanwhile; short socket timeouts keep a hanging server from holding requests.
CACHE_URL = env_str("CACHE_URL") or REDIS_URL
if CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "evalsite.cache.FailOpenRedisCache",
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "evalsite"),
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
    CELERY_BROKER_CONNECTION_RETRY = True
    # Workers and beat wait out a broker outage: reconnect with backoff (2 s, 4 s, ... up to
    # 30 s between attempts), forever. None means "never give up" (0 would mean "at once").
    CELERY_BROKER_CONNECTION_MAX_RETRIES = None
    CELERY_BROKER_CONNECTION_TIMEOUT = 2
    _transport = {"socket_connect_timeout": 2, "socket_timeout": 5, "retry_on_timeout": True}
    # A web request publishing a task fails fast instead of waiting on a dead broker
    # (max_retries 0: one attempt). The work stays stale for the sweep; see
    # evalsite.queue.task_enqueue. Worker processes replace these options with
    # WORKER_BROKER_TRANSPORT_OPTIONS when they start (evalsite/celery.py).
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {**_transport, "max_retries": 0}
    WORKER_BROKER_TRANSPORT_OPTIONS = {**_transport, "interval_start": 1, "interval_max": 30}
else:
    _broker_dir = VAR_DIR / "broker"
    for _folder in ("queue", "control"):
        (_broker_dir / _folder).mkdir(parents=True, exist_ok=True)
    # A host name, though the transport ignores it: without one kombu warns on every connection.
    CELERY_BROKER_URL = "filesystem://localhost/"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
    CELERY_WORKER_ENABLE_REMOTE_CONTROL = False
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Extraction-F1 results (what an approval must refresh within a second) stay on the default
# queue; whole-run families, evaluations and long jobs go to "slow" so they never hold them up.
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_ROUTES = {
    f"metrics.tasks.{name}": {"queue": "slow"}
    for name in (
        "compute_own_data",
        "evaluation_compute",
        "run_compute_job",
        "compute_job_chunk",
        "compute_run_comparison",
        "compute_error_analysis",
        "compute_snapshot_results",
        "compute_configuration_summary",
    )
}
# The stale sweep has a queue of its own that every worker serves, whatever its -Q list
# (evalsite/celery.py adds it), so the sweep runs while any worker is alive.
SWEEP_QUEUE = "sweep"
CELERY_TASK_ROUTES |= {
    f"audit.tasks.{name}": {"queue": "slow"}
    for name in ("team_times", "export_ground_truth_job", "import_ground_truth_job")
}
# Their first names, for messages queued before they were renamed (kept for one release).
CELERY_TASK_ROUTES |= {
    f"metrics.tasks.{name}": {"queue": "slow"}
    for name in ("export_ground_truth_job", "import_ground_truth_job")
}
CELERY_TASK_ROUTES["metrics.tasks.recompute_stale"] = {"queue": SWEEP_QUEUE}
STALE_SWEEP_SECONDS = env_float("STALE_SWEEP_SECONDS", 60, minimum=1)
# Rows marked stale this recently are left to their own queued task by the periodic sweep.
STALE_SWEEP_GRACE_SECONDS = env_float("STALE_SWEEP_GRACE_SECONDS", 30, minimum=0)
# A running job that has not written its heartbeat for this long is taken for dead.
JOB_LEASE_SECONDS = env_float("JOB_LEASE_SECONDS", 120, minimum=1)
# A recompute job is split into chunks of this many results, each a task of its own that any
# slow worker takes; a chunk stores its results in batches, one transaction each.
RECOMPUTE_CHUNK_ITEMS = env_int("RECOMPUTE_CHUNK_ITEMS", 2000, minimum=1)
RECOMPUTE_BATCH_ITEMS = env_int("RECOMPUTE_BATCH_ITEMS", 250, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "recompute-stale-metrics": {
        "task": "metrics.tasks.recompute_stale",
        "schedule": STALE_SWEEP_SECONDS,
        "options": {"queue": SWEEP_QUEUE},
    },
}

# --- abuse limits (evalsite/throttling.py) -------------------------------------------------
# Every sign-in goes through the lockout: after this many failures within the lockout window,
# the account (or the address) is refused, even with the right password, until it ends.
AUTHENTICATION_BACKENDS = ["evalsite.throttling.ThrottledModelBackend"]
LOGIN_FAILURES_PER_ACCOUNT = env_int("LOGIN_FAILURES_PER_ACCOUNT", 10, minimum=1)
LOGIN_FAILURES_PER_IP = env_int("LOGIN_FAILURES_PER_IP", 50, minimum=1)
LOGIN_LOCKOUT_SECONDS = env_int("LOGIN_LOCKOUT_SECONDS", 900, minimum=0)
# API requests per user (token or browser session) and per address (anonymous); "" = no limit.
API_THROTTLE_RATES = {
    "token": env_str("API_RATE_TOKEN", "1200/minute") or None,
    "session": env_str("API_RATE_SESSION", "600/minute") or None,
    "anon": env_str("API_RATE_ANON", "60/minute") or None,
}

# --- REST framework -------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_THROTTLE_CLASSES": [
        "evalsite.throttling.TokenRateThrottle",
        "evalsite.throttling.SessionRateThrottle",
        "evalsite.throttling.AnonRateThrottle",
    ],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "evalsite.api.StrictAutoSchema",
    "DEFAULT_VERSIONING_CLASS": None,
    "EXCEPTION_HANDLER": "evalsite.api.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "evalsite API",
    "DESCRIPTION": "Discussions, AI extractions, auditor feedback, ground truth and metrics.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI / Redoc assets are served from the drf-spectacular-sidecar package (no CDN).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Several models have a "status" field with different choices: name each enum.
    "ENUM_NAME_OVERRIDES": {
        "FeedbackStatusEnum": "audit.models.Feedback.Status",
        "MetricResultStatusEnum": "metrics.models.MetricResult.Status",
        "ComputeJobStatusEnum": "audit.models.ComputeJob.Status",
        "EvaluationStatusEnum": "metrics.models.Evaluation.Status",
        "AssignmentStatusEnum": "audit.models.Assignment.Status",
        "SkipReasonEnum": "audit.models.Assignment.SkipReason",
        "CommentKindEnum": "audit.models.Comment.Kind",
        "ComparisonFigureEnum": "metrics.families.extraction.experiments.FIGURES",
    },
    # Every operation documents the error responses the exception handler produces.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "audit.api.serializers.payloads.add_payload_components",
        "metrics.api.serializers.add_metric_value_components",
        "evalsite.api.add_error_responses",
        "evalsite.api.state_input_limits",
    ],
}
# Ground-truth exports with more approved statements than this run as a background job.
EXPORT_SYNC_MAX_STATEMENTS = env_int("EXPORT_SYNC_MAX_STATEMENTS", 2000, minimum=0)
# Ground-truth imports with a larger request body run as a background job (about 450
# statements a megabyte; a megabyte imports in a few seconds).
IMPORT_SYNC_MAX_BYTES = env_int("IMPORT_SYNC_MAX_BYTES", 1024 * 1024, minimum=0)
# Autosaves of one person closer together than this fold into one history revision.
REVISION_FOLD_SECONDS = env_int("REVISION_FOLD_SECONDS", 300, minimum=0)
# Whether auditors see (and may start) statements nobody is assigned to. "1": every auditor
# sees all unassigned work (the behaviour before assignments); "0": only their assignments.
UNASSIGNED_WORK_VISIBLE = env_bool("UNASSIGNED_WORK_VISIBLE", True)
# Active coding time leaves out pauses between two editor actions longer than this.
CODING_IDLE_SECONDS = env_int("CODING_IDLE_SECONDS", 300, minimum=1)
# Whether a bug in the work that follows a commit raises (the test suite); otherwise it is
# logged and the request answers with what it stored (evalsite/post_commit.py).
POST_COMMIT_RAISE = False

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_choice("LOG_LEVEL", "WARNING", LOG_LEVELS)},
}

# The extraction-F1 matching settings in force (metrics.families.extraction.MatchSettings),
# recorded with every stored result. Each variable overrides one field; unset ones keep the
# library default. Ranges are checked when the apps load (metrics.apps). Results computed with
# other settings are marked stale and recomputed (docs/metrics.md, "Settings in force").
EXTRACTION_MATCH_ENV: dict[str, tuple[str, type]] = {
    "EXTRACTION_MATCH_STRATEGY": ("strategy", str),
    "EXTRACTION_NAME_THRESHOLD": ("name_similarity_threshold", float),
    "EXTRACTION_DESCRIPTION_THRESHOLD": ("description_similarity_threshold", float),
    "EXTRACTION_DATE_TOLERANCE_DAYS": ("date_tolerance_days", int),
    "EXTRACTION_APPROXIMATE_DATE_TOLERANCE_DAYS": ("approximate_date_tolerance_days", int),
    "EXTRACTION_DESCRIPTION_WEIGHT": ("description_weight", float),
    "EXTRACTION_DATE_WEIGHT": ("date_weight", float),
}


def env_match_settings() -> dict:
    """The fields EXTRACTION_MATCH_ENV's variables set; unset or blank ones are left out."""
    overrides: dict = {}
    for variable, (field, kind) in EXTRACTION_MATCH_ENV.items():
        if kind is int:
            value: object = env_int(variable, None)
        elif kind is float:
            value = env_float(variable, None)
        else:
            value = env_str(variable) or None
        if value is not None:
            overrides[field] = value
    return overrides


EXTRACTION_MATCH_SETTINGS: dict = env_match_settings()
