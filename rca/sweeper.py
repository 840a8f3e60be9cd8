"""Re-enqueue analyses that got stuck: a broker outage or a killed worker delays, never loses.

`pending` too long: the message never arrived (broker down, enqueue lost) — send it again.
`analyzing` too long: the worker died mid-analysis — put it back to pending and send it.
The conditional updates make this safe to run anywhere, any number of times.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ingest.models import Incident
from rca.enqueue import publish_analysis_on_commit

Status = Incident.Analysis


def _stuck(pending_cutoff, analyzing_cutoff) -> Q:
    return Q(analysis_status=Status.PENDING, analysis_updated_at__lt=pending_cutoff) | Q(
        analysis_status=Status.ANALYZING, analysis_updated_at__lt=analyzing_cutoff
    )


def sweep(stuck_after: timedelta | None = None, limit: int = 500) -> list[int]:
    """Re-enqueue stuck incidents; return their ids.

    Default cutoffs: `pending` after RCA_ANALYSIS_PENDING_AFTER (a lost message is cheap
    to resend: the claim makes a duplicate harmless), `analyzing` after
    RCA_ANALYSIS_STUCK_AFTER (an analysis may legitimately take a while). An explicit
    `stuck_after` applies to both (`timedelta(0)`: everything, now).
    """
    now = timezone.now()
    if stuck_after is None:  # not `or`: timedelta(0) is falsy
        pending = now - timedelta(seconds=settings.RCA_ANALYSIS_PENDING_AFTER)
        analyzing = now - timedelta(seconds=settings.RCA_ANALYSIS_STUCK_AFTER)
    else:
        pending = analyzing = now - stuck_after
    stuck = _stuck(pending, analyzing)
    ids = list(
        Incident.objects.filter(stuck)
        .order_by("analysis_updated_at")
        .values_list("pk", flat=True)[:limit]
    )
    requeued = []
    for incident_id in ids:
        with transaction.atomic():
            moved = Incident.objects.filter(stuck, pk=incident_id).update(
                analysis_status=Status.PENDING, analysis_updated_at=timezone.now()
            )
            if moved:
                publish_analysis_on_commit(incident_id)  # inline: this is the safety net
                requeued.append(incident_id)
    return requeued


def sweep_notifications(stuck_after: timedelta | None = None, limit: int = 500) -> list[int]:
    """Re-send Slack notifications still `queued` long after they were due.

    Their message was lost (broker outage at enqueue time, a killed worker); `deliver()`
    locks the row and checks its status, so a late duplicate message never double-posts.
    """
    from rca.enqueue import publish
    from rca.models import Notification
    from rca.tasks import send_notification

    if stuck_after is None:
        stuck_after = timedelta(seconds=settings.RCA_ANALYSIS_STUCK_AFTER)
    cutoff = timezone.now() - stuck_after
    ids = list(
        Notification.objects.filter(status=Notification.Status.QUEUED, updated_at__lt=cutoff)
        .exclude(next_attempt_at__gt=cutoff)
        .values_list("pk", flat=True)[:limit]
    )
    return [pk for pk in ids if publish(send_notification, (pk,))]
