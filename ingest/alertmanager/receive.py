"""Receive one Alertmanager notification: firing alerts in as incidents, resolved ones close.

Firing alerts go through the same accept path as ``POST /api/v1/incidents`` (validated as
`IncidentIn`, then stored or queued with their derived event ids, so a re-send is a retry).
A resolved alert marks its issue resolved; a later firing of the same alert is a new
incident on that issue, which reopens it as any regression does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ingest.alertmanager.mapping import SOURCE, incident_payload, issue_fingerprint
from ingest.alertmanager.schema import AlertmanagerIn
from ingest.models import Issue, Project
from ingest.schema import IncidentIn
from ingest.store import store_incidents


@dataclass
class Received:
    """What one notification did: per firing alert its event id and whether it was new."""

    accepted: int = 0
    duplicates: int = 0
    resolved: int = 0  # issues this notification resolved (already resolved ones not counted)
    event_ids: list[str] = field(default_factory=list)


def _accept(project: Project, payloads: list[dict[str, object]]) -> list[tuple[str, bool]]:
    """(event id, created) per payload, through the incidents API's own accept step."""
    stored = store_incidents(project, payloads, source=SOURCE)
    return [(one.incident.event_id, one.created) for one in stored]


def receive(project: Project, notification: AlertmanagerIn) -> Received:
    """Accept the firing alerts, resolve the issues of the resolved ones."""
    out = Received()
    firing = [a for a in notification.alerts if a.status == "firing"]
    payloads = [IncidentIn.model_validate(incident_payload(a)).payload() for a in firing]
    if payloads:
        for event_id, created in _accept(project, payloads):
            out.event_ids.append(event_id)
            out.accepted += created
            out.duplicates += not created
    resolved = {issue_fingerprint(a) for a in notification.alerts if a.status == "resolved"}
    if resolved:
        out.resolved = Issue.objects.filter(
            project=project, fingerprint__in=resolved, status=Issue.Status.OPEN
        ).update(status=Issue.Status.RESOLVED)
    return out
