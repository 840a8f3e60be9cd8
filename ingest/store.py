"""Store one incident: scrub, derive, upsert its Issue, insert it — one transaction.

Idempotent on `event_id` (per project): a retried POST returns the first incident.
Analysis is enqueued only after the transaction commits, so the queue never carries an
id the database does not have, and a committed incident is always enqueued.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

import rca
from ingest.derive import Derived, derive
from ingest.models import Incident, Issue, Project
from ingest.scrubbing import scrub


@dataclass
class Stored:
    incident: Incident
    created: bool  # False: an earlier incident with the same event_id was returned
    new_issue: bool = False
    regressed: bool = False


def _occurred_at(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if timezone.is_aware(value) else value.replace(tzinfo=UTC)
    if isinstance(value, str):
        try:
            return _occurred_at(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            pass
    return timezone.now()


def _existing(project: Project, event_id: str) -> Incident | None:
    return Incident.objects.filter(project=project, event_id=event_id).first()


_UPSERT_ISSUE = f"""
WITH before AS (
    SELECT status FROM {Issue._meta.db_table}
     WHERE project_id = %(project)s AND fingerprint = %(fp)s
)
INSERT INTO {Issue._meta.db_table} AS i
    (project_id, fingerprint, title, error_type, culprit, service, model_id, status,
     first_seen, last_seen, occurrence_count)
VALUES (%(project)s, %(fp)s, %(title)s, %(error_type)s, %(culprit)s, %(service)s, %(model_id)s,
        'open', %(seen)s, %(seen)s, 1)
ON CONFLICT (project_id, fingerprint) DO UPDATE SET
    occurrence_count = i.occurrence_count + 1,
    last_seen = GREATEST(i.last_seen, EXCLUDED.last_seen),
    service = EXCLUDED.service,
    model_id = COALESCE(NULLIF(EXCLUDED.model_id, ''), i.model_id),
    status = CASE WHEN i.status = 'resolved' THEN 'open' ELSE i.status END
RETURNING i.id, (SELECT status FROM before)
"""  # noqa: S608 - table names are ours; values are parameters


def _upsert_issue(
    project: Project, d: Derived, service: str, seen: datetime
) -> tuple[int, bool, bool]:
    """Create the issue or count one more occurrence, in one statement (no lost updates).

    Returns (issue id, created, regressed: it was resolved and is open again).
    """
    params: dict[str, Any] = {
        "project": project.pk,
        "fp": d.fingerprint,
        "title": d.title,
        "error_type": d.error_type,
        "culprit": d.culprit,
        "service": service,
        "model_id": d.model_id,
        "seen": seen,
    }
    with connection.cursor() as cursor:
        cursor.execute(_UPSERT_ISSUE, params)
        issue_id, before = cursor.fetchone()
    return issue_id, before is None, before == Issue.Status.RESOLVED


def store_incident(
    project: Project,
    payload: dict[str, Any],
    *,
    source: str = "api",
    idempotency_key: str | None = None,
) -> Stored:
    """Persist a validated payload (snake_case dict); see the module docstring."""
    client_id = payload.get("event_id") or idempotency_key
    event_id = str(client_id or uuid.uuid4().hex)[:64]
    if client_id and (found := _existing(project, event_id)) is not None:
        return Stored(found, created=False)

    clean = scrub(payload) if settings.RCA_SCRUB else payload
    d = derive(clean)
    seen = _occurred_at(clean.get("occurred_at"))
    service = str(clean.get("service") or "unknown")[:200]
    try:
        with transaction.atomic():
            issue_id, new_issue, regressed = _upsert_issue(project, d, service, timezone.now())
            incident = Incident.objects.create(
                project=project,
                issue_id=issue_id,
                event_id=event_id,
                source=source,
                service=service,
                environment=str(clean.get("environment") or "")[:100],
                occurred_at=seen,
                error_type=d.error_type,
                message=d.message,
                stacktrace_raw=clean.get("stacktrace"),
                exceptions=d.exceptions,
                logs=d.logs,
                shape_diff=d.shape_diff,
                shape_diff_source=d.shape_diff_source,
                inference_context=clean.get("inference_context") or {},
                resource_impact=clean.get("resource_impact") or {},
                tags=clean.get("tags") or {},
                model_id=d.model_id,
                fingerprint=d.fingerprint,
                opened_issue="new" if new_issue else ("regressed" if regressed else ""),
            )
            rca.enqueue_analysis(incident.pk)
    except IntegrityError:  # a concurrent retry with the same event_id won the race
        if (found := _existing(project, event_id)) is not None:
            return Stored(found, created=False)
        raise
    return Stored(incident, created=True, new_issue=new_issue, regressed=regressed)
