"""Claiming work with a conditional UPDATE: exactly one worker wins an incident.

The status transition happens in the database, so two workers (or a sweeper re-enqueue
racing a slow worker) can never analyse the same incident at the same time.
"""

from __future__ import annotations

from django.utils import timezone

from ingest.models import Incident

Status = Incident.Analysis


def claim(incident_id: int, *, force: bool = False) -> bool:
    """pending -> analyzing (also done/failed -> analyzing when forced); True if we won."""
    allowed = [Status.PENDING] + ([Status.DONE, Status.FAILED] if force else [])
    won = Incident.objects.filter(pk=incident_id, analysis_status__in=allowed).update(
        analysis_status=Status.ANALYZING, analysis_updated_at=timezone.now()
    )
    return won == 1


def finish(incident_id: int, status: str) -> None:
    Incident.objects.filter(pk=incident_id, analysis_status=Status.ANALYZING).update(
        analysis_status=status, analysis_updated_at=timezone.now()
    )
