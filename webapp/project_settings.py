"""Per-project settings: API keys (shown once), the Sentry DSN, the Slack webhook, SLO rules.

Slack's own module validates URLs and sends the test message; it is imported when used,
so these pages keep working (saying Slack is unavailable) on an instance without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings

from ingest import keys
from ingest.models import ApiKey, Project
from ingest.projects import project_dsn
from ingest.storable import storable_text
from rca.models import Notification
from rca.slo.editing import rule_forms

MAX_KEY_NAME = 100
RECENT_NOTIFICATIONS = 10


@dataclass(frozen=True)
class KeyRow:
    """An API key as the settings page lists it; `prefix` is empty for viewers."""

    pk: int
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


def _key_rows(project: Project, show_secrets: bool) -> list[KeyRow]:
    return [
        KeyRow(
            pk=k.pk,
            name=k.name,
            prefix=k.prefix if show_secrets else "",
            created_at=k.created_at,
            last_used_at=k.last_used_at,
            revoked_at=k.revoked_at,
        )
        for k in project.api_keys.order_by("revoked_at", "-created_at")
    ]


def settings_context(project: Project, *, show_secrets: bool) -> dict[str, Any]:
    """What the settings page shows. Viewers (`show_secrets=False`) get no key material:
    no key prefixes, no DSN (its public key lets anyone send events), no webhook URL."""
    from rca.notify.slack import mask_url

    return {
        "project": project,
        "show_secrets": show_secrets,
        "dsn": project_dsn(project) if show_secrets else "",
        "keys": _key_rows(project, show_secrets),
        "webhook_set": bool(project.slack_webhook_url),
        "webhook_masked": mask_url(project.slack_webhook_url) if show_secrets else "",
        "webhook_default": not project.slack_webhook_url and bool(settings.SLACK_WEBHOOK_URL),
        "slo_forms": rule_forms(project),  # the SLO rules, a form each (rca/slo)
        "notifications": list(
            Notification.objects.filter(project=project).order_by("-created_at")[
                :RECENT_NOTIFICATIONS
            ]
        ),
    }


def create_key(project: Project, name: str) -> tuple[ApiKey, str]:
    name = storable_text((name or "").strip()[:MAX_KEY_NAME]) or "default"
    return keys.create_key(project, name=name)


def revoke_key(project: Project, key_id: int) -> bool:
    key = ApiKey.objects.filter(project=project, pk=key_id).first()
    if key is None:
        return False
    keys.revoke(key)
    return True


def rotate_key(project: Project, key_id: int) -> str | None:
    """The new key's plaintext (shown once), or None if there was no live key to rotate."""
    key = ApiKey.objects.filter(project=project, pk=key_id).first()
    if key is None:
        return None
    rotated = keys.rotate(key)
    return rotated[1] if rotated else None


def rotate_dsn(project: Project) -> str:
    """A new Sentry DSN for the project; the old one is refused from now on."""
    keys.rotate_sentry_key(project)
    return project_dsn(project)


def save_webhook(project: Project, url: str) -> str:
    """Store (or with an empty `url`, remove) the webhook; returns an error message or ""."""
    from rca.notify import set_webhook
    from rca.notify.slack import WebhookURLNotAllowed

    try:
        set_webhook(project, url or "")
    except WebhookURLNotAllowed as exc:
        return str(exc)
    return ""


def send_test(project: Project) -> tuple[bool, str]:
    from rca.notify import send_test_message

    return send_test_message(project)
