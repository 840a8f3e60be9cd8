"""A project's Slack webhook: which URL it posts to, saving it, and pausing it.

Creating, delivering and the test message all ask the same questions of the project (is
there a webhook, is it paused), so the answers live here once.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.utils import timezone

from ingest.models import Project
from rca.notify.slack import validate_webhook_url

log = logging.getLogger(__name__)


def webhook_url(project: Project) -> str:
    """The project's own webhook, else the instance default (SLACK_WEBHOOK_URL)."""
    return (project.slack_webhook_url or settings.SLACK_WEBHOOK_URL or "").strip()


def set_webhook(project: Project, url: str) -> None:
    """Save a project's webhook (empty clears it) and re-enable sending.

    Raises `WebhookURLNotAllowed` with a message for the form when the URL is refused.
    """
    url = url.strip()
    if url:
        validate_webhook_url(url)
    project.slack_webhook_url = url
    project.slack_disabled_at = None
    project.slack_disabled_reason = ""
    project.save(update_fields=["slack_webhook_url", "slack_disabled_at", "slack_disabled_reason"])


def disable_webhook(project: Project, reason: str) -> None:
    """Pause sending after a permanent failure, until the webhook is saved or a test passes."""
    now, reason = timezone.now(), reason[:300]
    Project.objects.filter(pk=project.pk, slack_disabled_at__isnull=True).update(
        slack_disabled_at=now, slack_disabled_reason=reason
    )
    project.slack_disabled_at, project.slack_disabled_reason = now, reason
    log.warning("project %s: Slack webhook disabled: %s", project.pk, reason)
