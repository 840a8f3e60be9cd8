"""Re-enqueue analyses that got stuck: a broker outage or a killed worker delays, never loses.

`pending` too long: the message never arrived (broker down, enqueue lost) — send it again.
`analyzing` with its lease lapsed: the worker died mid-analysis (a live one renews the
lease every third of RCA_ANALYSIS_LEASE, rca/queue/lease.py) — put it back to pending
and send it. Beat runs this every RCA_SWEEP_INTERVAL seconds, so a killed worker's
incident is resumed within lease + interval (a minute with the defaults).
Occurrences that joined their issue's pending analysis (rca/queue/coalesce.py) wait with
no message of their own: they are settled when that analysis ends, here at the latest.
Either way, an incident that has used all its attempts (RCA_ANALYSIS_MAX_ATTEMPTS; the
killed worker's claim counted as one) is marked `failed` instead: a poison incident that
kills every worker is tried a bounded number of times, never forever.
The conditional updates make this safe to run anywhere, any number of times.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import Case, F, Q, TextField, Value, When
from django.utils import timezone

from ingest.models import Incident
from rca.queue import claim, coalesce
from rca.queue.enqueue import publish_analysis_on_commit
from rca.reuse import latest_finished

Status = Incident.Analysis
log = logging.getLogger(__name__)


def _stuck(pending_cutoff: datetime, lost: Q) -> Q:
    """A joined occurrence is pending by design (it has no message): never stuck itself;
    `settle_stuck_issues` rescues it when the analysis it waits for is gone."""
    pending = Q(
        analysis_status=Status.PENDING,
        analysis_updated_at__lt=pending_cutoff,
        analysis_joined=False,
    )
    return pending | (Q(analysis_status=Status.ANALYZING) & lost)


def _lost(now: datetime, stuck_after: timedelta | None) -> Q:
    """An `analyzing` claim whose worker is gone: its lease lapsed. A claim with no lease
    (made before leases existed) after RCA_ANALYSIS_STUCK_AFTER. An explicit `stuck_after`
    (an operator's `rca sweep --older-than`) takes any claim that old, lease or not."""
    if stuck_after is not None:
        return Q(analysis_updated_at__lt=now - stuck_after)
    unleased = now - timedelta(seconds=settings.RCA_ANALYSIS_STUCK_AFTER)
    return Q(analysis_lease_until__lt=now) | Q(
        analysis_lease_until__isnull=True, analysis_updated_at__lt=unleased
    )


def _queue(incident_id: int) -> str:
    """The queue the incident's analysis belongs on (rca/queue/coalesce.py's rule)."""
    incident = Incident.objects.only("pk", "issue_id", "opened_issue").get(pk=incident_id)
    return coalesce.queue_for(incident, latest_finished(incident.issue_id))


def sweep(stuck_after: timedelta | None = None, limit: int = 500) -> list[int]:
    """Re-enqueue stuck incidents; return their ids.

    Default: `pending` after RCA_ANALYSIS_PENDING_AFTER (a lost message is cheap to
    resend: the claim makes a duplicate harmless), `analyzing` once its lease lapsed (a
    long analysis keeps renewing it). An explicit `stuck_after` applies to both
    (`timedelta(0)`: everything, now, live claims included).
    """
    now = timezone.now()
    if stuck_after is None:  # not `or`: timedelta(0) is falsy
        pending = now - timedelta(seconds=settings.RCA_ANALYSIS_PENDING_AFTER)
    else:
        pending = now - stuck_after
    stuck = _stuck(pending, _lost(now, stuck_after))
    ids = list(
        Incident.objects.filter(stuck)
        .order_by("analysis_updated_at")
        .values_list("pk", flat=True)[:limit]
    )
    requeued = []
    for incident_id in ids:
        with transaction.atomic():
            if _give_up(stuck, incident_id):
                log.warning("incident %s: out of analysis attempts, marked failed", incident_id)
                transaction.on_commit(partial(coalesce.settle_incident, incident_id))
                continue
            moved = Incident.objects.filter(stuck, pk=incident_id).update(
                analysis_status=Status.PENDING,
                analysis_updated_at=timezone.now(),
                analysis_lease_until=None,
                analysis_error=Case(
                    When(analysis_status=Status.ANALYZING, then=Value(claim.WORKER_LOST)),
                    default=F("analysis_error"),
                    output_field=TextField(),
                ),
            )
            if moved:
                # inline: this is the safety net
                publish_analysis_on_commit(incident_id, queue=_queue(incident_id))
                requeued.append(incident_id)
    settle_stuck_issues(pending, limit)
    return requeued


def settle_stuck_issues(cutoff: datetime, limit: int = 500) -> list[int]:
    """Settle issues whose joined occurrences waited since before `cutoff`.

    Normally the end of the analysis they joined settles them; a worker that died between
    finishing and settling leaves them waiting for nobody. `settle` does nothing while
    the issue's analysis is still pending, so this is safe at any time.
    """
    issue_ids = list(
        Incident.objects.filter(
            analysis_joined=True, analysis_status=Status.PENDING, analysis_updated_at__lt=cutoff
        )
        .values_list("issue_id", flat=True)
        .distinct()[:limit]
    )
    return [pk for pk in issue_ids if coalesce.settle(pk) is not None]


def _give_up(stuck: Q, incident_id: int) -> bool:
    """Out of attempts: `failed` for good (with why), its lost Analysis row closed too."""
    now = timezone.now()
    exhausted = Incident.objects.filter(
        stuck, pk=incident_id, analysis_attempts__gte=claim.max_attempts()
    )
    lost = exhausted.filter(analysis_status=Status.ANALYZING).update(
        analysis_status=Status.FAILED, analysis_error=claim.WORKER_LOST, analysis_updated_at=now
    )
    # Pending with no attempt left: the limit was lowered; keep the last error it had.
    unclaimable = exhausted.update(analysis_status=Status.FAILED, analysis_updated_at=now)
    if lost:
        from rca.models import Analysis

        Analysis.objects.filter(incident_id=incident_id, status=Analysis.Status.RUNNING).update(
            status=Analysis.Status.FAILED, error=claim.WORKER_LOST, finished_at=now
        )
    return bool(lost or unclaimable)


def sweep_notifications(stuck_after: timedelta | None = None, limit: int = 500) -> list[int]:
    """Re-send Slack notifications still `queued` long after they were due.

    Their message was lost (broker outage at enqueue time, a killed worker); `deliver()`
    locks the row and checks its status, so a late duplicate message never double-posts.
    """
    from rca.models import Notification
    from rca.queue.enqueue import SEND_NOTIFICATION, publish

    if stuck_after is None:
        stuck_after = timedelta(seconds=settings.RCA_ANALYSIS_STUCK_AFTER)
    cutoff = timezone.now() - stuck_after
    ids = list(
        Notification.objects.filter(status=Notification.Status.QUEUED, updated_at__lt=cutoff)
        .exclude(next_attempt_at__gt=cutoff)
        .values_list("pk", flat=True)[:limit]
    )
    return [pk for pk in ids if publish(SEND_NOTIFICATION, (pk,))]
