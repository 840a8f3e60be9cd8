"""The `Notification` rows: the names, the writes and the lock every step shares.

Creating, delivering and the test message each record what they did on a row; keeping the
one way to write a row (and to serialise per project) here keeps them consistent.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from ingest import metrics
from ingest.models import Project
from rca.models import Notification

Kind = Notification.Kind
Status = Notification.Status


def recent_notifications(project: Project, limit: int = 50) -> QuerySet[Notification]:
    """The delivery log for the settings page, newest first."""
    return (
        Notification.objects.filter(project=project)
        .select_related("issue")
        .order_by("-created_at")[:limit]
    )


def lock_project(project_id: int) -> Project:
    """Serialise digest decisions per project (held until the transaction ends).

    FOR NO KEY UPDATE, not FOR UPDATE: it still serialises every caller, but it does not
    block the key-share lock that inserting any row referencing the project takes. With
    FOR UPDATE, an ingest holding this lock and waiting for an issue row deadlocked with
    a worker inserting a notification (found by bench/storm.py: lost Slack messages).
    """
    return Project.objects.select_for_update(no_key=True).get(pk=project_id)


def update_row(n: Notification, **fields: Any) -> None:
    """Set `fields` on the row and save only them (and `updated_at`)."""
    for name, value in fields.items():
        setattr(n, name, value)
    n.save(update_fields=[*fields, "updated_at"])
    if fields.get("status") in (Status.SENT, Status.FAILED, Status.SUPPRESSED):
        metrics.count_notification(str(fields["status"]))
    elif "status" not in fields and fields.get("next_attempt_at") is not None:
        metrics.count_notification("retry")
