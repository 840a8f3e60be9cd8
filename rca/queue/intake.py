"""What analysis does when ingest announces stored incidents (`ingest.signals.incidents_stored`).

Two things, in the storing transaction:

* an incident that opened its issue (new, or regressed after being resolved) gets its
  Slack notification row now, so the alert goes out through the notification task and
  never waits behind the analysis queue;
* each incident is admitted (rca/queue/coalesce.py): it joins its issue's pending
  analysis, reuses its finished one, or becomes the issue's one pending analysis, whose
  id is published once the transaction commits, on the fresh or the repeat queue.

Both are cheap and neither raises: a notification failure is logged (`rca.notify`), and a
broker outage leaves the incidents `pending` for the sweeper.
"""

from __future__ import annotations

from typing import Any

from ingest.models import Incident
from rca import notify
from rca.queue.coalesce import admit
from rca.queue.enqueue import publish_analyses_on_commit


def on_incidents_stored(sender: Any, *, incidents: list[Incident], **_: Any) -> None:
    """Receiver for `ingest.signals.incidents_stored` (connected by `webapp/apps.py`)."""
    # Issue rows first, then the project (notifications): the order a worker takes them in.
    for queue, incident_ids in admit(incidents).publish.items():
        publish_analyses_on_commit(incident_ids, queue=queue)
    for incident in incidents:
        if incident.opened_issue == "new":
            notify.notify_new_issue(incident.issue_id)
        elif incident.opened_issue == "regressed":
            notify.notify_regression(incident.issue_id, incident.pk)


def reanalyse(incident_id: int) -> None:
    """Force a fresh analysis of an incident (the UI's "Re-analyse"), bypassing the cache.

    A person asked, so the incident gets a fresh set of attempts, even one that failed
    RCA_ANALYSIS_MAX_ATTEMPTS times (the only way such an incident runs again).
    """
    from django.conf import settings

    from rca.queue.claim import reset_attempts
    from rca.queue.enqueue import publish_analysis_on_commit

    reset_attempts(incident_id)
    # A person is waiting for it: the fresh queue.
    publish_analysis_on_commit(incident_id, force=True, queue=settings.RCA_QUEUE_FRESH)
