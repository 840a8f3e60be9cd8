"""Analysing incidents: signals, hybrid retrieval, prompts, providers, validation, Slack.

`ingest` calls exactly one thing here, `enqueue_analyses` (or its one-id form
`enqueue_analysis`), inside its transaction.
"""

from collections.abc import Sequence


def enqueue_analysis(incident_id: int) -> None:
    """Queue the analysis of a stored incident once the current transaction commits.

    Never raises for a broker outage: the incident stays `pending` and the sweeper
    re-queues it (see `rca/enqueue.py`).
    """
    enqueue_analyses([incident_id])


def enqueue_analyses(incident_ids: Sequence[int]) -> None:
    """Queue the analyses of stored incidents once the current transaction commits.

    A batch travels as one message (the worker fans it out), so queueing costs the
    web process one publish per request, not one per incident.
    """
    from rca.enqueue import publish_analyses_on_commit

    publish_analyses_on_commit(list(incident_ids))


def reanalyse(incident_id: int) -> None:
    """Force a fresh analysis of an incident (the UI's "Re-analyse"), bypassing the cache.

    A person asked, so the incident gets a fresh set of attempts, even one that failed
    RCA_ANALYSIS_MAX_ATTEMPTS times (the only way such an incident runs again).
    """
    from rca.claim import reset_attempts
    from rca.enqueue import publish_analysis_on_commit

    reset_attempts(incident_id)
    publish_analysis_on_commit(incident_id, force=True)
