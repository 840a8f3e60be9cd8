"""Analysing incidents: signals, hybrid retrieval, prompts, providers, validation, Slack.

`ingest` calls exactly one thing here, `enqueue_analysis`, inside its transaction.
"""


def enqueue_analysis(incident_id: int) -> None:
    """Queue the analysis of a stored incident once the current transaction commits."""
    from rca.tasks import analyse_incident

    analyse_incident.delay_on_commit(incident_id)
