"""Celery tasks (thin): each imports its work inside the body so the web process stays light."""

from celery import Task, shared_task

from rca.queue.enqueue import ANALYSE_INCIDENT, ANALYSE_INCIDENTS, SEND_NOTIFICATION


@shared_task(
    name=ANALYSE_INCIDENT,
    bind=True,
    ignore_result=True,
    acks_late=True,
    max_retries=None,  # bounded by RCA_ANALYSIS_MAX_ATTEMPTS, counted on the incident row
)
def analyse_incident(self: Task, incident_id: int, force: bool = False) -> None:
    """Retry policy: a failed attempt is retried after RCA_ANALYSIS_RETRY_BACKOFF seconds,
    doubling per attempt up to RCA_ANALYSIS_RETRY_BACKOFF_MAX, at most
    RCA_ANALYSIS_MAX_ATTEMPTS - 1 times; then the incident stays `failed`. The row counts
    the attempts (a SIGKILLed attempt too), so a re-sent message cannot add any."""
    from rca.pipeline import AnalysisRetry, analyse
    from rca.queue.claim import max_attempts

    try:
        analyse(incident_id, force=force)
    except AnalysisRetry as retry:
        raise self.retry(countdown=retry.countdown, max_retries=max_attempts() - 1) from None


@shared_task(name=ANALYSE_INCIDENTS, ignore_result=True, acks_late=True)
def analyse_incidents(incident_ids: list[int]) -> None:
    """A batch from one ingest request, analysed here: its ids cross the broker once.

    An incident whose attempt fails is handed back as a task of its own, retried with the
    backoff of `analyse_incident`; the others carry on. Should the worker die half-way,
    the redelivered batch runs again: analysing is idempotent (an incident already
    claimed or done is skipped) and every claim counts an attempt, so a poison incident
    cannot hold the batch hostage.
    """
    from rca.pipeline import AnalysisRetry, analyse
    from rca.queue.enqueue import publish

    for incident_id in incident_ids:
        try:
            analyse(incident_id)
        except AnalysisRetry as retry:
            publish(ANALYSE_INCIDENT, (incident_id,), countdown=retry.countdown)


@shared_task(name="rca.tasks.sweep_stuck_analyses", ignore_result=True)
def sweep_stuck_analyses() -> int:
    from rca.queue.sweeper import sweep, sweep_notifications

    return len(sweep()) + len(sweep_notifications())


@shared_task(
    name=SEND_NOTIFICATION,
    bind=True,
    ignore_result=True,
    acks_late=True,
    max_retries=None,  # bounded by RCA_SLACK_MAX_ATTEMPTS, counted on the row
)
def send_notification(self: Task, notification_id: int) -> None:
    from django.conf import settings

    from rca.notify import RetryLater, deliver

    try:
        deliver(notification_id)
    except RetryLater as later:
        raise self.retry(
            countdown=later.countdown, max_retries=settings.RCA_SLACK_MAX_ATTEMPTS
        ) from None


@shared_task(name="rca.tasks.embed_corpus", ignore_result=True, acks_late=True)
def embed_corpus() -> None:
    """Embed runbook chunks that have no embedding (or one from another model)."""
    from rca.corpus.embeddings import embed_missing_chunks

    embed_missing_chunks()
