"""The settings page's "send test message": post now, record it, and say what happened.

Unlike a notification it is sent at once, in the request, and even while the webhook is
paused -- it is how someone checks that a fixed webhook works again.
"""

from __future__ import annotations

from django.utils import timezone

from ingest.models import Project
from rca.models import Notification
from rca.notify.records import Kind, Status, update_row
from rca.notify.slack import (
    SlackError,
    TestEvent,
    WebhookURLNotAllowed,
    build_payload,
    mask_url,
    send,
    target_of,
    validate_webhook_url,
)
from rca.notify.webhooks import disable_webhook, webhook_url


def send_test_message(project: Project) -> tuple[bool, str]:
    """Post one test message now and record it; (delivered, what to tell the user).

    It is sent even while the webhook is disabled: a successful test re-enables it, and a
    permanent failure disables it, as a real notification would.
    """
    url = webhook_url(project)
    if not url:
        return False, "No Slack webhook is set for this project: add an incoming webhook URL."
    try:
        validate_webhook_url(url)
    except WebhookURLNotAllowed as exc:
        return False, str(exc)
    payload = build_payload(TestEvent(project.name))
    n = Notification.objects.create(
        project=project, kind=Kind.TEST, target=target_of(url), payload=payload, attempts=1
    )
    try:
        send(url, payload)
    except SlackError as err:
        update_row(n, status=Status.FAILED, last_error=str(err))
        if err.permanent:
            disable_webhook(project, str(err))
            return False, (
                f"{err}. Slack will not accept messages on this webhook: notifications are "
                "paused for this project until the webhook URL is fixed."
            )
        return False, f"{err}. This may be temporary: try again in a minute."
    update_row(n, status=Status.SENT, sent_at=timezone.now())
    Project.objects.filter(pk=project.pk).update(slack_disabled_at=None, slack_disabled_reason="")
    project.slack_disabled_at, project.slack_disabled_reason = None, ""
    return True, f"Test message delivered to {mask_url(url)}."
