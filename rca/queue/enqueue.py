"""Publishing analysis tasks after commit: a broker outage delays analysis, never fails a request.

The committed incident row is the source of truth; the message only carries its id. So
when the broker cannot take the message within one quick retry, we log and move on: the
API still answers 202, the incident stays `pending`, and the background publisher tries
again with backoff until the broker answers (rca/queue/publisher.py); the sweeper (beat
every RCA_SWEEP_INTERVAL, or `manage.py rca sweep --older-than 0`) is the safety net for
ids a killed process held. Waiting longer here would only hold the web request hostage.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import cache, partial
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction

from rca.queue.publisher import CoalescingPublisher

log = logging.getLogger(__name__)

# One immediate retry is enough for a pooled connection the broker dropped (it reconnects);
# a broker that is really down is given up on within ~0.2 s instead of Celery's default
# three retries. A broker that accepts connections but never answers is bounded only by
# the transport's socket timeouts (Redis: `socket_timeout` / `socket_connect_timeout` in
# the broker transport options); without them such a publish waits forever.
RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}


# Task names: messages name their task, so queueing never imports the tasks module (which
# imports the pipeline; that would make every layer below it import the top).
ANALYSE_INCIDENT = "rca.tasks.analyse_incident"
ANALYSE_INCIDENTS = "rca.tasks.analyse_incidents"
SEND_NOTIFICATION = "rca.tasks.send_notification"


def publish(
    task: str,
    args: tuple[object, ...] = (),
    kwargs: Mapping[str, object] | None = None,
    **options: Any,
) -> bool:
    """Send the task named `task` now; False (logged, never raised) when the broker is
    unreachable."""
    try:
        current_app.send_task(task, args, kwargs, retry=True, retry_policy=RETRY_POLICY, **options)
    except Exception as exc:  # any broker failure: the sweeper sends it again
        log.warning(
            "could not queue %s%s (%s: %s); the row stays queued and the sweeper sends it again",
            task,
            args,
            type(exc).__name__,
            exc,
        )
        return False
    return True


def _queue(queue: str | None) -> dict[str, str]:
    """An explicit queue, else the default route (RCA_TASK_QUEUES, `webapp.celery.route`)."""
    return {"queue": queue} if queue else {}


def publish_analysis(incident_id: int, *, force: bool = False, queue: str | None = None) -> bool:
    """Send the analysis task now (see `publish`)."""
    kwargs = {"force": True} if force else None
    return publish(ANALYSE_INCIDENT, (incident_id,), kwargs, **_queue(queue))


def publish_analyses(incident_ids: list[int], queue: str | None = None) -> bool:
    """One message per incident: only an issue's leader is published (rca/queue/coalesce.py),
    so these are few even in a storm, and a message each lets a worker that consumes
    several queues take a fresh one between two repeats, and several workers share them."""
    sent = [publish_analysis(incident_id, queue=queue) for incident_id in incident_ids]
    return all(sent)


def publish_until_refused(incident_ids: list[int], queue: str | None = None) -> list[int]:
    """Publish in order; at the first refusal stop (the broker is away) and return the ids
    not sent, for the background publisher to retry once it answers again."""
    for i, incident_id in enumerate(incident_ids):
        if not publish_analysis(incident_id, queue=queue):
            return incident_ids[i:]
    return []


@cache
def _publisher(queue: str) -> CoalescingPublisher:
    return CoalescingPublisher(partial(publish_until_refused, queue=queue))


def background(queue: str | None = None) -> CoalescingPublisher:
    """This process's publisher thread for ingest into `queue` (default: the fresh queue);
    one per queue, see `rca/queue/publisher.py`."""
    return _publisher(queue or str(settings.RCA_QUEUE_FRESH))


def publish_analyses_on_commit(incident_ids: list[int], queue: str | None = None) -> None:
    """Publish once the current transaction commits; nothing if it rolls back.

    With RCA_PUBLISH_IN_BACKGROUND (the default) the request only hands the ids to the
    background publisher; otherwise it publishes them itself before answering.
    """
    if not incident_ids:
        return
    if settings.RCA_PUBLISH_IN_BACKGROUND:
        transaction.on_commit(partial(background(queue).submit, incident_ids))
    else:
        transaction.on_commit(partial(publish_analyses, incident_ids, queue=queue))


def publish_analysis_on_commit(
    incident_id: int, *, force: bool = False, queue: str | None = None
) -> None:
    """Publish once the current transaction commits; nothing if it rolls back."""
    transaction.on_commit(partial(publish_analysis, incident_id, force=force, queue=queue))
