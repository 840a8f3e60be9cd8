"""When Rootcause tells Slack: at most once per (issue, kind, webhook), storms folded into digests.

Each `notify_*` records a `Notification` row -- the unique (issue, kind, target) key makes
a second call a no-op -- and queues `rca.tasks.send_notification` once the transaction
commits. `deliver()` is that task's work: one attempt, recorded on the row.

The digest rule, per project and webhook, with N = RCA_SLACK_DIGEST_THRESHOLD and
M = RCA_SLACK_DIGEST_WINDOW_MINUTES:

* a new issue is sent on its own when fewer than N new-issue messages (queued, sent or
  failed -- not suppressed) were created for the project in the last M minutes;
* otherwise it is `suppressed` and joins the project's open digest. The first suppressed
  issue opens a digest; it stays open for M minutes, then it is sent once, listing every
  issue that joined it. A later suppressed issue opens the next digest.

So in any M minutes a project gets at most N single new-issue messages, and a storm that
lasts no longer than M minutes (50 issues in one minute, say) gets exactly one digest on
top. A suggestion for an issue that went into a digest is suppressed as well; regressions
are always sent. Decisions are made under a row lock on the project, so concurrent
workers count the same way.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from ingest.models import Issue, Project
from rca.models import Notification, Suggestion
from rca.slack import (
    DigestEvent,
    IssueEvent,
    IssueInfo,
    SlackError,
    SuggestionInfo,
    TestEvent,
    WebhookURLNotAllowed,
    build_payload,
    mask_url,
    send,
    target_of,
    validate_webhook_url,
)

log = logging.getLogger(__name__)

Kind = Notification.Kind
Status = Notification.Status
MAX_DELAY_SECONDS = 3600.0  # an absurd Retry-After must not park a message for days


class RetryLater(Exception):
    """The attempt failed in a way worth retrying; try again after `countdown` seconds."""

    def __init__(self, countdown: float) -> None:
        super().__init__(f"retry in {countdown:.1f}s")
        self.countdown = countdown


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


def recent_notifications(project: Project, limit: int = 50) -> QuerySet[Notification]:
    """The delivery log for the settings page, newest first."""
    return (
        Notification.objects.filter(project=project)
        .select_related("issue")
        .order_by("-created_at")[:limit]
    )


# --- creating notifications ----------------------------------------------------------------


def notify_new_issue(issue_id: int) -> Notification | None:
    """A new issue appeared: one message, or a place in the project's digest."""
    return _guarded("new_issue", issue_id, lambda: _notify_issue(issue_id, Kind.NEW_ISSUE))


def notify_regression(issue_id: int, incident_id: int | None = None) -> Notification | None:
    """A resolved issue came back: once per regressing incident (an issue may regress again)."""
    occurrence = str(incident_id or "")
    return _guarded(
        "regression", issue_id, lambda: _notify_issue(issue_id, Kind.REGRESSION, occurrence)
    )


def notify_suggestion(suggestion_id: int) -> Notification | None:
    """A suggestion is ready: one message per issue (a re-analysis does not notify again)."""
    return _guarded("suggestion", suggestion_id, lambda: _notify_suggestion(suggestion_id))


def _guarded(what: str, object_id: int, create) -> Notification | None:
    """Notifications are secondary: a failure here must never break ingest or analysis."""
    try:
        with transaction.atomic():
            return create()
    except Exception:
        log.exception("could not record the %s notification for %s", what, object_id)
        return None


def _target(project: Project) -> str | None:
    url = webhook_url(project)
    if not url or project.slack_disabled_at is not None:
        return None
    return target_of(url)


def _lock(project_id: int) -> Project:
    """Serialise digest decisions per project (held until the transaction ends)."""
    return Project.objects.select_for_update().get(pk=project_id)


def _issue_event(kind: str, issue: Issue, suggestion: Suggestion | None = None) -> dict:
    info = IssueInfo(
        id=issue.pk,
        title=issue.title,
        service=issue.service,
        model_id=issue.model_id,
        error_type=issue.error_type,
        occurrence_count=issue.occurrence_count,
    )
    extra = None
    if suggestion is not None:
        extra = SuggestionInfo(
            action=suggestion.action,
            reason=suggestion.reason,
            runbook_slug=suggestion.runbook_slug,
            confidence=suggestion.confidence,
            validation=suggestion.validation or {},
            provider=suggestion.provider,
            model=suggestion.model,
        )
    return build_payload(IssueEvent(kind, issue.project.name, info, extra))


def _notify_issue(issue_id: int, kind: str, occurrence: str = "") -> Notification | None:
    issue = Issue.objects.select_related("project").get(pk=issue_id)
    if (target := _target(issue.project)) is None:
        return None
    _lock(issue.project_id)
    n, created = Notification.objects.get_or_create(
        issue=issue,
        kind=kind,
        target=target,
        occurrence=occurrence,
        defaults={"project_id": issue.project_id},
    )
    if not created:
        return n
    if kind == Kind.NEW_ISSUE and _over_threshold(n):
        digest = _open_digest(n.project_id, target)
        _update(n, status=Status.SUPPRESSED, payload={"digest": digest.pk})
        log.info("notification %s: issue %s folded into digest %s", n.pk, issue_id, digest.pk)
        return n
    _update(n, payload=_issue_event(kind, issue))
    _enqueue(n.pk)
    return n


def _over_threshold(n: Notification) -> bool:
    since = timezone.now() - timedelta(minutes=settings.RCA_SLACK_DIGEST_WINDOW_MINUTES)
    singles = (
        Notification.objects.filter(
            project_id=n.project_id, target=n.target, kind=Kind.NEW_ISSUE, created_at__gte=since
        )
        .exclude(status=Status.SUPPRESSED)
        .exclude(pk=n.pk)
        .count()
    )
    return singles >= settings.RCA_SLACK_DIGEST_THRESHOLD


def _open_digest(project_id: int, target: str) -> Notification:
    """The digest still collecting for this webhook, or a new one sent M minutes from now."""
    digest = (
        Notification.objects.filter(
            project_id=project_id,
            target=target,
            kind=Kind.DIGEST,
            status=Status.QUEUED,
            payload__collecting=True,
        )
        .order_by("-created_at")
        .first()
    )
    if digest is not None:
        return digest
    window = settings.RCA_SLACK_DIGEST_WINDOW_MINUTES * 60
    digest = Notification.objects.create(
        project_id=project_id,
        kind=Kind.DIGEST,
        target=target,
        payload={"collecting": True},
        next_attempt_at=timezone.now() + timedelta(seconds=window),
    )
    _enqueue(digest.pk, countdown=window)
    return digest


def _notify_suggestion(suggestion_id: int) -> Notification | None:
    suggestion = Suggestion.objects.select_related("issue__project").get(pk=suggestion_id)
    issue = suggestion.issue
    if (target := _target(issue.project)) is None:
        return None
    n, created = Notification.objects.get_or_create(
        issue=issue, kind=Kind.SUGGESTION, target=target, defaults={"project_id": issue.project_id}
    )
    if not created:
        return n
    opening = Notification.objects.filter(issue=issue, kind=Kind.NEW_ISSUE, target=target).first()
    if opening is not None and opening.status == Status.SUPPRESSED:
        _update(n, status=Status.SUPPRESSED, payload={"digest": opening.payload.get("digest")})
        return n
    _update(n, payload=_issue_event(Kind.SUGGESTION, issue, suggestion))
    _enqueue(n.pk)
    return n


def _update(n: Notification, **fields) -> None:
    for name, value in fields.items():
        setattr(n, name, value)
    n.save(update_fields=[*fields, "updated_at"])


def _enqueue(notification_id: int, countdown: float | None = None) -> None:
    """After commit; a broker outage leaves the row queued for the sweeper, never raises."""
    from rca.enqueue import publish
    from rca.tasks import send_notification

    options = {"countdown": countdown} if countdown else {}
    transaction.on_commit(partial(publish, send_notification, (notification_id,), None, **options))


# --- delivering ----------------------------------------------------------------------------


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
                _update(n, status=Status.FAILED, attempts=attempts, last_error=str(err))
                _disable(project, str(err))
            elif attempts >= settings.RCA_SLACK_MAX_ATTEMPTS:
                message = f"Gave up after {attempts} attempts: {err}"
                _update(n, status=Status.FAILED, attempts=attempts, last_error=message)
            else:
                retry_in = backoff(attempts, err.retry_after)
                _update(
                    n,
                    attempts=attempts,
                    last_error=str(err),
                    next_attempt_at=timezone.now() + timedelta(seconds=retry_in),
                )
        else:
            _update(
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
    delay = settings.RCA_SLACK_BACKOFF_SECONDS * 2 ** (attempts - 1)
    if retry_after is not None:
        delay = max(delay, retry_after)
    return min(delay, MAX_DELAY_SECONDS)


def _close_digest(digest: Notification) -> bool:
    """Stop collecting and freeze the message; False when there is nothing to send."""
    with transaction.atomic():
        _lock(digest.project_id)
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
            _update(digest, status=Status.SUPPRESSED, payload={})
            return False
        event = DigestEvent(digest.project.name, issues, settings.RCA_SLACK_DIGEST_WINDOW_MINUTES)
        _update(digest, payload=build_payload(event))
    return True


def _fail(n: Notification, message: str) -> None:
    Notification.objects.filter(pk=n.pk, status=Status.QUEUED).update(
        status=Status.FAILED, last_error=message, updated_at=timezone.now()
    )
    log.info("notification %s: %s", n.pk, message)


def _disable(project: Project, reason: str) -> None:
    now, reason = timezone.now(), reason[:300]
    Project.objects.filter(pk=project.pk, slack_disabled_at__isnull=True).update(
        slack_disabled_at=now, slack_disabled_reason=reason
    )
    project.slack_disabled_at, project.slack_disabled_reason = now, reason
    log.warning("project %s: Slack webhook disabled: %s", project.pk, reason)


# --- the settings page's button ----------------------------------------------------------


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
        _update(n, status=Status.FAILED, last_error=str(err))
        if err.permanent:
            _disable(project, str(err))
            return False, (
                f"{err}. Slack will not accept messages on this webhook: notifications are "
                "paused for this project until the webhook URL is fixed."
            )
        return False, f"{err}. This may be temporary: try again in a minute."
    _update(n, status=Status.SENT, sent_at=timezone.now())
    Project.objects.filter(pk=project.pk).update(slack_disabled_at=None, slack_disabled_reason="")
    project.slack_disabled_at, project.slack_disabled_reason = None, ""
    return True, f"Test message delivered to {mask_url(url)}."
