"""Analysing incidents: signals, hybrid retrieval, prompts, providers, validation, Slack.

`ingest` calls exactly one thing here, `enqueue_analysis`, inside its transaction.
"""


def enqueue_analysis(incident_id: int) -> None:
    """Queue the analysis of a stored incident once the current transaction commits."""
    from rca.tasks import analyse_incident

    analyse_incident.delay_on_commit(incident_id)


def reanalyse(incident_id: int) -> None:
    """Force a fresh analysis of an incident (the UI's "Re-analyse"), bypassing the cache."""
    from rca.tasks import analyse_incident

    analyse_incident.delay_on_commit(incident_id, force=True)
