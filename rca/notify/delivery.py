"""Delivering: one attempt per queued notification, recorded on its row.

The Celery task in :mod:`rca.queue.tasks` calls `deliver()` and turns `RetryLater` into a retry;
everything about when to give up, how long to wait and when to pause the webhook is here.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ingest import metrics
from rca.models import Notification
from rca.notify.records import Kind, Status, lock_project, update_row
from rca.notify.slack import DigestEvent, IssueInfo, SlackError, build_payload, send, target_of
from rca.notify.webhooks import disable_webhook, webhook_url

log = logging.getLogger(__name__)

MAX_DELAY_SECONDS = 3600.0  # an absurd Retry-After must not park a message for days


class RetryLater(Exception):
    """The attempt failed in a way worth retrying; try again after `countdown` seconds."""

    def __init__(self, countdown: float) -> None:
        super().__init__(f"retry in {countdown:.1f}s")
        self.countdown = countdown


def deliver(notification_id: int) -> None:
    """One delivery attempt for a queued notification, recorded on its row.

    Returns when the row reached a final state (sent, failed) or needed nothing; raises
    `RetryLater` when a retryable failure left attempts to spare. A permanent failure
    disables the project's webhook until someone saves it again or a test message passes.
    """
    n = Notification.objects.select_related("project").filter(pk=notification_id).first()
    if n is None or n.status != Status.QUEUED:
        return
    if n.kind == Kind.DIGEST and not _close_digest(n):
        return
    project, url = n.project, webhook_url(n.project)
    if project.slack_disabled_at is not None:
        reason = project.slack_disabled_reason or "after a permanent failure"
        return _fail(n, f"Not sent: the Slack webhook is disabled ({reason}).")
    if not url:
        return _fail(n, "Not sent: no Slack webhook is configured.")
    if target_of(url) != n.target:
        return _fail(n, "Not sent: the webhook URL changed after this message was queued.")

    retry_in = None
    with transaction.atomic():
        # The row lock makes a duplicate task wait, then see `sent` and stop.
        n = Notification.objects.select_for_update().get(pk=notification_id)
        if n.status != Status.QUEUED:
            return
        attempts = n.attempts + 1
        try:
            send(url, n.payload)
        except SlackError as err:
            if err.permanent:
                update_row(n, status=Status.FAILED, attempts=attempts, last_error=str(err))
                disable_webhook(project, str(err))
            elif attempts >= settings.RCA_SLACK_MAX_ATTEMPTS:
                message = f"Gave up after {attempts} attempts: {err}"
                update_row(n, status=Status.FAILED, attempts=attempts, last_error=message)
            else:
                retry_in = backoff(attempts, err.retry_after)
                update_row(
                    n,
                    attempts=attempts,
                    last_error=str(err),
                    next_attempt_at=timezone.now() + timedelta(seconds=retry_in),
                )
        else:
            update_row(
                n,
                status=Status.SENT,
                attempts=attempts,
                sent_at=timezone.now(),
                next_attempt_at=None,
            )
    if retry_in is not None:
        log.info("notification %s: attempt %s failed, retry in %.1fs", n.pk, attempts, retry_in)
        raise RetryLater(retry_in)


def backoff(attempts: int, retry_after: float | None = None) -> float:
    """Exponential from RCA_SLACK_BACKOFF_SECONDS, never sooner than Slack's Retry-After."""
    base: float = settings.RCA_SLACK_BACKOFF_SECONDS
    delay = base * 2.0 ** (attempts - 1)
    if retry_after is not None:
        delay = max(delay, retry_after)
    return min(delay, MAX_DELAY_SECONDS)


def _close_digest(digest: Notification) -> bool:
    """Stop collecting and freeze the message; False when there is nothing to send."""
    with transaction.atomic():
        lock_project(digest.project_id)
        digest.refresh_from_db()
        if digest.status != Status.QUEUED:
            return False
        if not digest.payload.get("collecting"):
            return True  # closed by an earlier attempt; this is a retry
        members = (
            Notification.objects.filter(
                kind=Kind.NEW_ISSUE, status=Status.SUPPRESSED, payload__digest=digest.pk
            )
            .select_related("issue")
            .order_by("created_at")
        )
        issues = tuple(
            IssueInfo(
                id=m.issue.pk,
                title=m.issue.title,
                service=m.issue.service,
                model_id=m.issue.model_id,
                error_type=m.issue.error_type,
                occurrence_count=m.issue.occurrence_count,
            )
            for m in members
            if m.issue is not None
        )
        if not issues:
            update_row(digest, status=Status.SUPPRESSED, payload={})
            return False
        event = DigestEvent(digest.project.name, issues, settings.RCA_SLACK_DIGEST_WINDOW_MINUTES)
        update_row(digest, payload=build_payload(event))
    return True


def _fail(n: Notification, message: str) -> None:
    if Notification.objects.filter(pk=n.pk, status=Status.QUEUED).update(
        status=Status.FAILED, last_error=message, updated_at=timezone.now()
    ):
        metrics.count_notification("failed")
    log.info("notification %s: %s", n.pk, message)
