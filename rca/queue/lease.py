"""The lease on a claimed incident: a worker that dies stops renewing it, and loses it soon.

A claim (rca/queue/claim.py) sets `analysis_lease_until = now + RCA_ANALYSIS_LEASE`.
While the analysis runs, a daemon thread renews it every third of the lease, so a slow
LLM call (longer than the lease) never looks like a dead worker; a SIGKILLed or frozen
worker renews nothing and the sweeper re-queues the incident once the lease is past
(rca/queue/sweeper.py), within lease + sweep interval instead of a fixed threshold.

A renewal is one conditional UPDATE on the incident, matched by its claim token (the
`analysis_updated_at` the claim wrote: nothing else writes it while `analyzing`), so a
worker whose claim was swept and taken by another never extends the newer claim.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta
from types import TracebackType

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from ingest.models import Incident

log = logging.getLogger(__name__)


def lease_seconds() -> float:
    configured: float = settings.RCA_ANALYSIS_LEASE
    return max(0.1, float(configured))


def expiry(now: datetime) -> datetime:
    """When a claim (or renewal) made at `now` lapses unless renewed."""
    return now + timedelta(seconds=lease_seconds())


def renew(incident_id: int, token: datetime) -> bool:
    """Extend our claim's lease; False if the claim is no longer ours (swept, finished)."""
    return (
        Incident.objects.filter(
            pk=incident_id,
            analysis_status=Incident.Analysis.ANALYZING,
            analysis_updated_at=token,
        ).update(analysis_lease_until=expiry(timezone.now()))
        == 1
    )


class Renewal:
    """`with Renewal(incident_id, token):` keeps the lease while the block runs.

    The thread has its own database connection (Django's are per thread), closed when it
    stops. A database error skips one renewal (the next may succeed after a blip); a
    claim that is no longer ours ends the renewals.
    """

    def __init__(self, incident_id: int, token: datetime) -> None:
        self.incident_id = incident_id
        self.token = token
        self.renewals = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease-{incident_id}", daemon=True)

    def __enter__(self) -> Renewal:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        interval = lease_seconds() / 3
        try:
            while not self._stop.wait(interval):
                try:
                    if not renew(self.incident_id, self.token):
                        log.warning("incident %s: claim lost, lease not renewed", self.incident_id)
                        return
                    self.renewals += 1
                except DatabaseError:
                    log.warning(
                        "incident %s: lease renewal failed", self.incident_id, exc_info=True
                    )
                    connection.close()  # a broken connection is reopened on the next try
        finally:
            connection.close()
