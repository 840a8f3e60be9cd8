"""How issues and incidents look in API answers (plain dicts; one place for the shape)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from ingest.models import Incident, Issue


def issue_url(issue_id: int) -> str:
    return f"{settings.RCA_BASE_URL}/issues/{issue_id}"


def issue_dict(issue: Issue) -> dict[str, Any]:
    return {
        "id": issue.pk,
        "title": issue.title,
        "error_type": issue.error_type,
        "culprit": issue.culprit,
        "service": issue.service,
        "model_id": issue.model_id,
        "status": issue.status,
        "first_seen": issue.first_seen.isoformat(),
        "last_seen": issue.last_seen.isoformat(),
        "occurrence_count": issue.occurrence_count,
        "url": issue_url(issue.pk),
    }


def incident_dict(incident: Incident) -> dict[str, Any]:
    return {
        "id": incident.pk,
        "issue_id": incident.issue_id,
        "event_id": incident.event_id,
        "source": incident.source,
        "service": incident.service,
        "environment": incident.environment,
        "occurred_at": incident.occurred_at.isoformat(),
        "received_at": incident.received_at.isoformat(),
        "error_type": incident.error_type,
        "message": incident.message,
        "exceptions": incident.exceptions,
        "logs": incident.logs,
        "shape_diff": incident.shape_diff,
        "shape_diff_source": incident.shape_diff_source,
        "inference_context": incident.inference_context,
        "resource_impact": incident.resource_impact,
        "tags": incident.tags,
        "fingerprint": incident.fingerprint,
        "analysis_status": incident.analysis_status,
        "url": f"{issue_url(incident.issue_id)}?incident={incident.pk}",
    }
