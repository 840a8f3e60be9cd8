"""Celery tasks (thin): each imports its work inside the body so the web process stays light."""

from celery import shared_task


@shared_task(name="rca.tasks.analyse_incident", ignore_result=True, acks_late=True)
def analyse_incident(incident_id: int, force: bool = False) -> None:
    from rca.pipeline import analyse

    analyse(incident_id, force=force)


@shared_task(name="rca.tasks.sweep_stuck_analyses", ignore_result=True)
def sweep_stuck_analyses() -> int:
    from rca.sweeper import sweep

    return len(sweep())
