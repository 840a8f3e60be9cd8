"""Store one incident: scrub, derive, upsert its Issue, insert it — one transaction.

Idempotent on `event_id` (per project): a retried POST returns the first incident.
Analysis is enqueued only after the transaction commits, so the queue never carries an
id the database does not have, and a committed incident is always enqueued.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

import rca
from ingest.derive import derive
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
        return value if timezone.is_aware(value) else timezone.make_aware(value, timezone.utc)
    if isinstance(value, str):
        try:
            return _occurred_at(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            pass
    return timezone.now()


def _existing(project: Project, event_id: str) -> Incident | None:
    return Incident.objects.filter(project=project, event_id=event_id).first()


def _upsert_issue(
    project: Project, d: Any, service: str, seen: datetime
) -> tuple[Issue, bool, bool]:
    """Create the issue or count one more occurrence (row-locked, so counts never race)."""
    issue = (
        Issue.objects.select_for_update().filter(project=project, fingerprint=d.fingerprint).first()
    )
    if issue is None:
        try:
            with transaction.atomic():
                issue = Issue.objects.create(
                    project=project,
                    fingerprint=d.fingerprint,
                    title=d.title,
                    error_type=d.error_type,
                    culprit=d.culprit,
                    service=service,
                    model_id=d.model_id,
                    first_seen=seen,
                    last_seen=seen,
                    occurrence_count=1,
                )
            return issue, True, False
        except IntegrityError:  # another request created it a moment ago
            issue = Issue.objects.select_for_update().get(
                project=project, fingerprint=d.fingerprint
            )
    regressed = issue.status == Issue.Status.RESOLVED
    Issue.objects.filter(pk=issue.pk).update(
        occurrence_count=F("occurrence_count") + 1,
        last_seen=Greatest(F("last_seen"), seen),
        service=service,
        model_id=d.model_id or F("model_id"),
        status=Issue.Status.OPEN if regressed else F("status"),
    )
    issue.refresh_from_db()
    return issue, False, regressed


def store_incident(
    project: Project,
    payload: dict[str, Any],
    *,
    source: str = "api",
    idempotency_key: str | None = None,
) -> Stored:
    """Persist a validated payload (snake_case dict); see the module docstring."""
    event_id = str(payload.get("event_id") or idempotency_key or uuid.uuid4().hex)[:64]
    if (found := _existing(project, event_id)) is not None:
        return Stored(found, created=False)

    clean = scrub(payload) if settings.RCA_SCRUB else payload
    d = derive(clean)
    seen = _occurred_at(clean.get("occurred_at"))
    service = str(clean.get("service") or "unknown")[:200]
    try:
        with transaction.atomic():
            issue, new_issue, regressed = _upsert_issue(project, d, service, timezone.now())
            incident = Incident.objects.create(
                project=project,
                issue=issue,
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
            )
            rca.enqueue_analysis(incident.pk)
    except IntegrityError:  # a concurrent retry with the same event_id won the race
        if (found := _existing(project, event_id)) is not None:
            return Stored(found, created=False)
        raise
    return Stored(incident, created=True, new_issue=new_issue, regressed=regressed)
