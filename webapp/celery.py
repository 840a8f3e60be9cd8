"""The Celery app. Tasks carry ids only; the database row is the source of truth."""

from __future__ import annotations

import logging
import os
import warnings

from celery import Celery
from celery.exceptions import CPendingDeprecationWarning
from celery.signals import worker_process_shutdown, worker_ready

from webapp.broker_queues import make_queue_creation_race_safe

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

app = Celery("rootcause")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["webapp", "rca.queue", "rca.slo"])


def _tune_embedded_broker() -> None:
    """Poll the SQLAlchemy transport fast (~80 ms round trip instead of ~1 s).

    The interval cannot go in `broker_transport_options`: kombu hands those to
    SQLAlchemy's `create_engine`, which rejects unknown keys.
    """
    from django.conf import settings

    if str(settings.CELERY_BROKER_URL).startswith("sqla+"):
        from kombu.transport import sqlalchemy

        sqlalchemy.Transport.polling_interval = settings.RCA_EMBEDDED_BROKER_POLL
        make_queue_creation_race_safe()


def route(name: str, args: object, kwargs: object, options: object, **_: object) -> dict | None:
    """Celery router: the queue RCA_TASK_QUEUES names for this task, read at send time."""
    from django.conf import settings

    queue = settings.RCA_TASK_QUEUES.get(name)
    return {"queue": queue} if queue else None


app.on_after_configure.connect(lambda **_: _tune_embedded_broker(), weak=False)


@worker_ready.connect
def _announce_worker(sender=None, **_kwargs) -> None:
    """Answer a first ping as soon as the worker is up, so /readyz need not wait for beat."""
    app.send_task("webapp.tasks.heartbeat")


@worker_process_shutdown.connect
def _drop_process_metrics(pid: int | None = None, **_kwargs) -> None:
    """A pool process ended: its live gauges leave /metrics (see ingest/metrics.py)."""
    from ingest.metrics import mark_process_dead

    mark_process_dead(pid or os.getpid())


# Periodic housekeeping that runs every 30-60 s; its "sent/received/succeeded" lines are
# DEBUG, so the log shows real work. Its failures keep their level.
ROUTINE_TASKS = ("webapp.tasks.heartbeat", "rca.tasks.sweep_stuck_analyses")


class RoutineTasksAtDebug(logging.Filter):
    """Demote Celery's INFO lines about `ROUTINE_TASKS` to DEBUG (beat, receipt, success)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True
        if not any(name in record.getMessage() for name in ROUTINE_TASKS):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


for _name in ("celery.beat", "celery.worker.strategy", "celery.app.trace"):
    logging.getLogger(_name).addFilter(RoutineTasksAtDebug())


@worker_ready.connect
def _quiet_reconnect_warning(**_kwargs) -> None:
    """Celery's notice about `worker_cancel_long_running_tasks_on_connection_loss` takes 10
    lines per broker reconnect, i.e. many per second while the database restarts; the
    default it announces is a choice for settings, not news. (Celery turns its warnings
    back on while setting up logging, so this runs once the worker is ready.)"""
    warnings.filterwarnings(
        "ignore",
        message=r"\s*In Celery 5\.1 we introduced an optional breaking change",
        category=CPendingDeprecationWarning,
    )
