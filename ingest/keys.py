"""API keys: `rc_<prefix>_<secret>`, shown once, stored as a SHA-256 of the secret.

A fast hash is right here: the secret is 32 random bytes, so there is nothing to brute
force, and authentication runs on every ingested event.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from ingest.models import ApiKey, Project, new_sentry_key

LAST_USED_PRECISION = timedelta(minutes=1)


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_key(project: Project, name: str = "default") -> tuple[ApiKey, str]:
    """Create a key; the returned plaintext is the only copy there will ever be."""
    prefix = secrets.token_hex(4)
    secret = secrets.token_urlsafe(32)
    key = ApiKey.objects.create(
        project=project, name=name, prefix=prefix, secret_hash=_hash(secret)
    )
    return key, f"rc_{prefix}_{secret}"


def authenticate(token: str) -> ApiKey | None:
    """The live key for a bearer token, or None (unknown, malformed or revoked)."""
    parts = token.strip().split("_", 2)
    if len(parts) != 3 or parts[0] != "rc" or not parts[1] or not parts[2]:
        return None
    key = ApiKey.objects.select_related("project").filter(prefix=parts[1]).first()
    if key is None or key.revoked_at is not None:
        return None
    if not hmac.compare_digest(key.secret_hash, _hash(parts[2])):
        return None
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_PRECISION:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)  # not a write per request
    return key


def revoke(key: ApiKey) -> None:
    ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())


def rotate(key: ApiKey) -> tuple[ApiKey, str] | None:
    """Replace a live key by a new one of the same name; the old one fails from now on.

    Authentication reads the row on every request (no cache), so the revocation holds
    for the very next request. None when the key was already revoked (a second click).
    """
    with transaction.atomic():
        revoked = ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        if not revoked:
            return None
        return create_key(key.project, name=key.name)


def rotate_sentry_key(project: Project) -> str:
    """A new public key for the project's Sentry DSN; SDKs still on the old DSN get 401."""
    project.sentry_key = new_sentry_key()
    project.save(update_fields=["sentry_key"])
    return project.sentry_key
