"""API keys: `rc_<prefix>_<secret>`, shown once, stored as a SHA-256 of the secret.

A fast hash is right here: the secret is 32 random bytes, so there is nothing to brute
force, and authentication runs on every ingested event.

Both kinds of key (API keys, Sentry DSN public keys) are checked against the database,
and a key the database said was live less than RCA_KEY_TRUST_SECONDS ago (2 s) passes
from the process's cache without a query: a query per request was a third of an ingest
request's round trips (issue 19). So a key revoked or a DSN rotated by another process
(another gunicorn worker's settings page, a shell) is still taken for at most that long by
this one; the process that revokes forgets it at once. When the database is away, a key
seen within RCA_KEY_CACHE_SECONDS passes from the same cache, and an unseen one raises
`Unverifiable` (503) (`ingest/key_cache.py`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ingest.key_cache import (
    DATABASE_AWAY,
    MAX_ENTRIES,
    Entry,
    KeyCache,
    Unverifiable,
    digest,
    reload_seconds,
)
from ingest.models import ApiKey, Project, new_sentry_key

LAST_USED_PRECISION = timedelta(minutes=1)


#: API keys by prefix, and projects by id with their DSN key: what passes during an outage.
API_KEYS: KeyCache[ApiKey] = KeyCache()
SENTRY_KEYS: KeyCache[Project] = KeyCache()


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _window() -> float:
    return float(settings.RCA_KEY_CACHE_SECONDS)


def trust_seconds() -> float:
    """How long a key the database said was live is taken without asking again
    (RCA_KEY_TRUST_SECONDS; 0: ask on every request): the longest a revocation made by
    another process takes to hold here. Never longer than the outage window
    (RCA_KEY_CACHE_SECONDS): no key is taken unasked for longer than an outage allows."""
    return min(float(getattr(settings, "RCA_KEY_TRUST_SECONDS", 2.0)), _window())


def create_key(project: Project, name: str = "default") -> tuple[ApiKey, str]:
    """Create a key; the returned plaintext is the only copy there will ever be."""
    prefix = secrets.token_hex(4)
    secret = secrets.token_urlsafe(32)
    key = ApiKey.objects.create(
        project=project, name=name, prefix=prefix, secret_hash=_hash(secret)
    )
    return key, f"rc_{prefix}_{secret}"


def authenticate(token: str) -> ApiKey | None:
    """The live key for a bearer token, or None (unknown, malformed or revoked).

    Raises `Unverifiable` when the database is away and the key was not seen recently.
    """
    parts = token.strip().split("_", 2)
    if len(parts) != 3 or parts[0] != "rc" or not parts[1] or not parts[2]:
        return None
    prefix, secret = parts[1], parts[2]
    fresh = API_KEYS.recall(prefix, trust_seconds())
    if fresh is not None:  # checked against the database a moment ago
        return fresh.value if hmac.compare_digest(fresh.secret_hash, _hash(secret)) else None
    try:
        return _authenticate_in_database(prefix, secret)
    except DATABASE_AWAY:
        entry = API_KEYS.recall(prefix, _window())
        if entry is None:
            raise Unverifiable("API key") from None
        # A prefix names one key and its secret never changes: a mismatch is certain.
        return entry.value if hmac.compare_digest(entry.secret_hash, _hash(secret)) else None


def _authenticate_in_database(prefix: str, secret: str) -> ApiKey | None:
    _reload_api_keys()
    key = ApiKey.objects.select_related("project").filter(prefix=prefix).first()
    if key is None or key.revoked_at is not None:
        API_KEYS.forget(prefix)
        return None
    if not hmac.compare_digest(key.secret_hash, _hash(secret)):
        return None
    API_KEYS.remember(prefix, key.secret_hash, key)
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_PRECISION:
        # Not a write per request; and a key just checked stays good if this write fails.
        with contextlib.suppress(*DATABASE_AWAY):
            ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
    return key


def keep_warm() -> None:
    """Reload both caches now and then once a minute, in a daemon thread of this process
    (gunicorn starts it in each worker: webapp/gunicorn_conf.py), so that a worker that had
    no request before an outage still knows the keys its siblings saw."""
    global _warm_pid
    with _warm_lock:
        if _warm_pid == os.getpid():
            return
        _warm_pid = os.getpid()
    threading.Thread(target=_warm_loop, name="key-cache", daemon=True).start()


_warm_pid = 0
_warm_lock = threading.Lock()


def _warm_loop() -> None:
    from django.db import connection

    while True:
        try:
            _reload_api_keys(force=True)
            _reload_sentry_keys(force=True)
        except DATABASE_AWAY:
            pass  # keep what is remembered: that is what the outage is served from
        finally:
            connection.close()  # this thread's own; never held between rounds
        time.sleep(reload_seconds())


def _reload_api_keys(force: bool = False) -> None:
    """Once a minute: every key any process used within the window, and no revoked one."""
    if not (API_KEYS.due() or force):
        return
    since = timezone.now() - timedelta(seconds=_window())
    live = ApiKey.objects.select_related("project").filter(
        revoked_at__isnull=True, last_used_at__gte=since
    )
    API_KEYS.replace(
        {
            key.prefix: Entry(key.secret_hash, key, key.last_used_at.timestamp())
            for key in live.order_by("-last_used_at")[:MAX_ENTRIES]
            if key.last_used_at is not None
        }
    )


def project_for_sentry_key(project_id: int, public_key: str) -> Project | None:
    """The project whose current DSN key this is, or None (unknown project or old key).

    Raises `Unverifiable` when the database is away and the project was not loaded within
    the window. A DSN key is public by design (it ships inside browser bundles), so every
    project's key is loaded, not only those seen.
    """
    fresh = SENTRY_KEYS.recall(str(project_id), trust_seconds())
    if fresh is not None and hmac.compare_digest(fresh.secret_hash, digest(public_key)):
        return fresh.value  # checked against the database a moment ago
    # Another key, or none fresh: the DSN may have been rotated since; the database says.
    try:
        _reload_sentry_keys()
        project = Project.objects.filter(pk=project_id, sentry_key=public_key).first()
    except DATABASE_AWAY:
        entry = SENTRY_KEYS.recall(str(project_id), _window())
        if entry is None:
            raise Unverifiable("DSN key") from None
        return entry.value if hmac.compare_digest(entry.secret_hash, digest(public_key)) else None
    if project is None:
        return None
    SENTRY_KEYS.remember(str(project.pk), digest(public_key), project)
    return project


def _reload_sentry_keys(force: bool = False) -> None:
    if not (SENTRY_KEYS.due() or force):
        return
    now = timezone.now().timestamp()
    SENTRY_KEYS.replace(
        {
            str(project.pk): Entry(digest(project.sentry_key), project, now)
            for project in Project.objects.order_by("pk")[:MAX_ENTRIES]
        }
    )


def revoke(key: ApiKey) -> None:
    ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    API_KEYS.forget(key.prefix)  # this process; the others drop it at their next reload


def rotate(key: ApiKey) -> tuple[ApiKey, str] | None:
    """Replace a live key by a new one of the same name; the old one fails from now on.

    This process forgets the old key at once, so the revocation holds for its very next
    request; other processes ask the database again within `trust_seconds()`. None when
    the key was already revoked (a second click).
    """
    with transaction.atomic():
        revoked = ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        if not revoked:
            return None
        API_KEYS.forget(key.prefix)
        return create_key(key.project, name=key.name)


def rotate_sentry_key(project: Project) -> str:
    """A new public key for the project's Sentry DSN; SDKs still on the old DSN get 401."""
    project.sentry_key = new_sentry_key()
    project.save(update_fields=["sentry_key"])
    SENTRY_KEYS.forget(str(project.pk))
    return project.sentry_key
