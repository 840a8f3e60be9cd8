"""The periodic SLO evaluation (Celery beat, RCA_SLO_INTERVAL; housekeeping queue)."""

from __future__ import annotations

from celery import shared_task

EVALUATE_SLOS = "rca.tasks.evaluate_slos"


@shared_task(name=EVALUATE_SLOS, ignore_result=True)  # type: ignore[untyped-decorator]
def evaluate_slos() -> int:
    from rca.slo.evaluate import evaluate_all

    return evaluate_all()
