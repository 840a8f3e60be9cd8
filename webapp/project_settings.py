"""Per-project settings: API keys (shown once), the Sentry DSN, the Slack webhook.

Slack's own module validates URLs and sends the test message; it is imported when used,
so these pages keep working (saying Slack is unavailable) on an instance without it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from ingest import keys
from ingest.models import ApiKey, Project
from ingest.projects import project_dsn
from rca.models import Notification

MAX_KEY_NAME = 100
RECENT_NOTIFICATIONS = 10


def mask_url(url: str) -> str:
    """Enough of a webhook URL to recognise it, not enough to post to it."""
    if not url:
        return ""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/…{url[-4:]}"


def settings_context(project: Project) -> dict[str, Any]:
    return {
        "project": project,
        "dsn": project_dsn(project),
        "keys": list(project.api_keys.order_by("revoked_at", "-created_at")),
        "webhook_masked": mask_url(project.slack_webhook_url),
        "webhook_default": not project.slack_webhook_url and bool(settings.SLACK_WEBHOOK_URL),
        "notifications": list(
            Notification.objects.filter(project=project).order_by("-created_at")[
                :RECENT_NOTIFICATIONS
            ]
        ),
    }


def create_key(project: Project, name: str) -> tuple[ApiKey, str]:
    name = (name or "").strip()[:MAX_KEY_NAME] or "default"
    return keys.create_key(project, name=name)


def revoke_key(project: Project, key_id: int) -> bool:
    key = ApiKey.objects.filter(project=project, pk=key_id).first()
    if key is None:
        return False
    keys.revoke(key)
    return True


def save_webhook(project: Project, url: str) -> str:
    """Store (or with an empty `url`, remove) the webhook; returns an error message or ""."""
    from rca.notify import set_webhook
    from rca.slack import WebhookURLNotAllowed

    try:
        set_webhook(project, url or "")
    except WebhookURLNotAllowed as exc:
        return str(exc)
    return ""


def send_test(project: Project) -> tuple[bool, str]:
    from rca.notify import send_test_message

    return send_test_message(project)
