"""Analysing incidents: signals, hybrid retrieval, prompts, providers, validation, Slack.

`ingest` calls exactly one thing here, `enqueue_analysis`, inside its transaction.
"""


def enqueue_analysis(incident_id: int) -> None:
    """Queue the analysis of a stored incident once the current transaction commits.

    Never raises for a broker outage: the incident stays `pending` and the sweeper
    re-queues it (see `rca/enqueue.py`).
    """
    from rca.enqueue import publish_analysis_on_commit

    publish_analysis_on_commit(incident_id)


def reanalyse(incident_id: int) -> None:
    """Force a fresh analysis of an incident (the UI's "Re-analyse"), bypassing the cache."""
    from rca.enqueue import publish_analysis_on_commit

    publish_analysis_on_commit(incident_id, force=True)
