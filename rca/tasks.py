"""Celery tasks (thin): each imports its work inside the body so the web process stays light."""

from celery import shared_task


@shared_task(name="rca.tasks.analyse_incident", ignore_result=True, acks_late=True)
def analyse_incident(incident_id: int, force: bool = False) -> None:
    from rca.pipeline import analyse

    analyse(incident_id, force=force)
