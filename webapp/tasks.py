"""Platform tasks (thin): the worker's answer to a ping."""

from celery import shared_task


@shared_task(name="webapp.tasks.heartbeat", ignore_result=True)
def heartbeat() -> None:
    from webapp import heartbeat as hb

    hb.record(heartbeat.request.hostname)
