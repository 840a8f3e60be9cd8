"""Creating notifications: one row per (issue, kind, webhook), and the digest decision.

The `notify_*` calls run inside ingest and analysis, so they never raise: a failure is
logged and the caller carries on. A row is handed to `rca.queue.tasks.send_notification` once the
transaction commits; :mod:`rca.notify.delivery` does the sending.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import OperationalError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from ingest.models import Issue, Project
from rca.models import Notification, Suggestion
from rca.notify.records import Kind, Status, lock_project, update_row
from rca.notify.slack import (
    IssueEvent,
    IssueInfo,
    SlackPayload,
    SuggestionInfo,
    build_payload,
    target_of,
)
from rca.notify.webhooks import webhook_url

log = logging.getLogger(__name__)
# PostgreSQL's deadlock_detected and serialization_failure: retried, up to RACE_ATTEMPTS.
RACES = frozenset({"40P01", "40001"})
RACE_ATTEMPTS = 3


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


def _guarded(
    what: str, object_id: int, create: Callable[[], Notification | None]
) -> Notification | None:
    """Notifications are secondary: a failure here must never break ingest or analysis.

    A deadlock or serialisation failure is a lost race, not a bad row: the savepoint is
    rolled back and the row tried again, so a Slack message is not lost to a collision.
    """
    for attempt in range(1, RACE_ATTEMPTS + 1):
        try:
            with transaction.atomic():
                return create()
        except OperationalError as exc:
            if getattr(exc.__cause__, "sqlstate", None) in RACES and attempt < RACE_ATTEMPTS:
                log.warning("%s notification for %s lost a race; again", what, object_id)
                continue
            log.exception("could not record the %s notification for %s", what, object_id)
            return None
        except Exception:
            log.exception("could not record the %s notification for %s", what, object_id)
            return None
    return None


def _target(project: Project) -> str | None:
    url = webhook_url(project)
    if not url or project.slack_disabled_at is not None:
        return None
    return target_of(url)


def _issue_event(kind: str, issue: Issue, suggestion: Suggestion | None = None) -> SlackPayload:
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
            id=suggestion.pk,
            incident_id=suggestion.incident_id,
            abstained=suggestion.abstained,
            closest=tuple(
                str(item.get("title") or item.get("slug") or "")
                for item in (suggestion.abstention or {}).get("closest") or []
                if isinstance(item, dict)
            ),
            wanted=tuple(str(item) for item in (suggestion.abstention or {}).get("wanted") or []),
        )
    return build_payload(IssueEvent(kind, issue.project.name, info, extra))


def _notify_issue(issue_id: int, kind: str, occurrence: str = "") -> Notification | None:
    issue = Issue.objects.select_related("project").get(pk=issue_id)
    if (target := _target(issue.project)) is None:
        return None
    lock_project(issue.project_id)
    n, created = Notification.objects.get_or_create(
        issue=issue,
        kind=kind,
        target=target,
        occurrence=occurrence,
        defaults={"project_id": issue.project_id},
    )
    if not created:
        return n
    if kind == Kind.NEW_ISSUE and _over_threshold(n, issue):
        digest = _open_digest(n.project_id, target)
        update_row(n, status=Status.SUPPRESSED, payload={"digest": digest.pk})
        log.info("notification %s: issue %s folded into digest %s", n.pk, issue_id, digest.pk)
        return n
    update_row(n, payload=_issue_event(kind, issue))
    _enqueue(n.pk)
    return n


def _over_threshold(n: Notification, issue: Issue) -> bool:
    """Fold `n` into the digest: the window's messages are used up, or its burst's are.

    Counts only new-issue messages announced on their own (queued, sent or failed), never
    the folded ones. The window is when they were announced; the burst is when their
    issues opened (`first_seen`, the server's clock), so a burst stored in one transaction
    stays one burst however long writing its notifications takes. Once an issue opens
    RCA_SLACK_BURST_SECONDS after the last announced one, it is announced (window
    permitting). Times and counts only, nothing of the error's text or service.
    """
    window_length = timedelta(minutes=settings.RCA_SLACK_DIGEST_WINDOW_MINUTES)
    burst_length = timedelta(seconds=settings.RCA_SLACK_BURST_SECONDS)
    window = Q(created_at__gte=timezone.now() - window_length)
    burst = Q(issue__first_seen__gte=issue.first_seen - burst_length)
    singles = (
        Notification.objects.filter(project_id=n.project_id, target=n.target, kind=Kind.NEW_ISSUE)
        .filter(window | burst)
        .exclude(status=Status.SUPPRESSED)
        .exclude(pk=n.pk)
        .aggregate(window=Count("pk", filter=window), burst=Count("pk", filter=burst))
    )
    threshold: int = settings.RCA_SLACK_DIGEST_THRESHOLD
    burst_limit: int = settings.RCA_SLACK_BURST_LIMIT
    return bool(singles["window"] >= threshold or singles["burst"] >= burst_limit)


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
        update_row(n, status=Status.SUPPRESSED, payload={"digest": opening.payload.get("digest")})
        return n
    update_row(n, payload=_issue_event(Kind.SUGGESTION, issue, suggestion))
    _enqueue(n.pk)
    return n


def _enqueue(notification_id: int, countdown: float | None = None) -> None:
    """After commit; a broker outage leaves the row queued for the sweeper, never raises."""
    from rca.queue.enqueue import SEND_NOTIFICATION, publish

    options = {"countdown": countdown} if countdown else {}
    transaction.on_commit(partial(publish, SEND_NOTIFICATION, (notification_id,), None, **options))
