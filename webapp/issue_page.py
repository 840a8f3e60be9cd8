"""Everything the issue page shows, gathered for one selected incident."""

from __future__ import annotations

from typing import Any

from ingest.models import Issue
from webapp import analysis_panel, incident_detail
from webapp.access import RESPONDER


def issue_context(issue: Issue, role: str, incident_id: str | None = None) -> dict[str, Any]:
    incident = incident_detail.select_incident(issue, incident_id)
    context: dict[str, Any] = {
        "issue": issue,
        "incident": incident,
        "can_respond": role == RESPONDER,
        "occurrences": incident_detail.occurrences(issue),
    }
    if incident is not None:
        context.update(
            exceptions=incident_detail.exceptions(incident),
            logs=incident_detail.log_rows(incident),
            shapes=incident_detail.shape_rows(incident),
            panel=analysis_panel.panel(incident),
        )
    return context


def set_status(issue: Issue, status: str) -> bool:
    """Resolve, ignore or reopen an issue; False when the status is not one of those."""
    if status not in Issue.Status.values:
        return False
    Issue.objects.filter(pk=issue.pk).update(status=status)
    issue.status = status
    return True
