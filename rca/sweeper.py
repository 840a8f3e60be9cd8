"""Re-enqueue analyses that got stuck: a broker outage or a killed worker delays, never loses.

`pending` too long: the message never arrived (broker down, enqueue lost) — send it again.
`analyzing` too long: the worker died mid-analysis — put it back to pending and send it.
The conditional updates make this safe to run anywhere, any number of times.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

import rca
from ingest.models import Incident

Status = Incident.Analysis


def sweep(stuck_after: timedelta | None = None, limit: int = 500) -> list[int]:
    """Return the ids re-enqueued."""
    stuck_after = stuck_after or timedelta(seconds=settings.RCA_ANALYSIS_STUCK_AFTER)
    cutoff = timezone.now() - stuck_after
    ids = list(
        Incident.objects.filter(
            analysis_status__in=[Status.PENDING, Status.ANALYZING], analysis_updated_at__lt=cutoff
        )
        .order_by("analysis_updated_at")
        .values_list("pk", flat=True)[:limit]
    )
    requeued = []
    for incident_id in ids:
        with transaction.atomic():
            moved = Incident.objects.filter(
                pk=incident_id,
                analysis_status__in=[Status.PENDING, Status.ANALYZING],
                analysis_updated_at__lt=cutoff,
            ).update(analysis_status=Status.PENDING, analysis_updated_at=timezone.now())
            if moved:
                rca.enqueue_analysis(incident_id)
                requeued.append(incident_id)
    return requeued
