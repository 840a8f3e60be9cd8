"""Receive one Alertmanager notification: firing alerts in as incidents, resolved ones close.

Firing alerts go through the same accept path as ``POST /api/v1/incidents`` (validated as
`IncidentIn`, then written to the inbox with their derived event ids, so a re-send is a
retry; `manage.py process_inbox` stores them). A resolved alert marks its issue resolved;
a later firing of the same alert is a new incident on that issue, which reopens it as any
regression does. A firing still waiting in the inbox when its resolve arrives is stored
first (by this request), so the resolve finds its issue instead of being lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ingest.alertmanager.mapping import SOURCE, grouping_parts, incident_payload, issue_fingerprint
from ingest.alertmanager.schema import AlertIn, AlertmanagerIn
from ingest.inbox.accept import accept
from ingest.inbox.process import process_pending
from ingest.models import InboxItem, Issue, Project
from ingest.schema import IncidentIn


@dataclass
class Received:
    """What one notification did: per firing alert its event id and whether it was new."""

    accepted: int = 0
    duplicates: int = 0
    resolved: int = 0  # issues this notification resolved (already resolved ones not counted)
    event_ids: list[str] = field(default_factory=list)


def _store_waiting_firings(project: Project, resolved: list[AlertIn]) -> None:
    """Store the firings of these alerts that still wait in the inbox (rare: a resolve
    arrives at least Alertmanager's group_interval after its firing)."""
    waiting = list(
        InboxItem.objects.filter(
            project=project,
            source=SOURCE,
            failed_at__isnull=True,
            payload__fingerprint__in=[grouping_parts(a) for a in resolved],
        ).values_list("pk", flat=True)
    )
    if waiting:
        process_pending(len(waiting), only=waiting)


def receive(project: Project, notification: AlertmanagerIn) -> Received:
    """Accept the firing alerts, resolve the issues of the resolved ones.

    Raises `InboxUnavailable` (nothing accepted) when neither database nor spool takes them.
    """
    out = Received()
    firing = [a for a in notification.alerts if a.status == "firing"]
    payloads = [IncidentIn.model_validate(incident_payload(a)).payload() for a in firing]
    if payloads:
        for one in accept(project, payloads, source=SOURCE):
            out.event_ids.append(one.event_id)
            out.accepted += one.created
            out.duplicates += not one.created
    resolved = [a for a in notification.alerts if a.status == "resolved"]
    if resolved:
        _store_waiting_firings(project, resolved)
        out.resolved = Issue.objects.filter(
            project=project,
            fingerprint__in={issue_fingerprint(a) for a in resolved},
            status=Issue.Status.OPEN,
        ).update(status=Issue.Status.RESOLVED)
    return out
