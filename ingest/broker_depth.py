"""Messages waiting in each configured Celery queue, read from the broker (for /metrics).

Through kombu, never the Celery app (ingest is the lowest layer): a passive
`queue_declare` answers on amqp and on kombu's virtual transports (redis, sqlalchemy).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

# The broker read is bounded so that a scrape never hangs on an unreachable broker: past this,
# the depth gauge is absent and rootcause_broker_up is 0.
BROKER_TIMEOUT = 2.0


def read() -> dict[str, float] | None:
    """Messages waiting per configured queue, or None when the broker did not answer in time."""
    return _in_time(_depths, BROKER_TIMEOUT)


def configured_queues() -> list[str]:
    """The Celery queues settings name (fresh, repeat, housekeeping, and CELERY_TASK_QUEUES),
    read from settings: ingest never imports the Celery app."""
    from django.conf import settings

    named = (settings.RCA_QUEUE_FRESH, settings.RCA_QUEUE_REPEAT, settings.RCA_QUEUE_HOUSEKEEPING)
    return list(dict.fromkeys([*named, *getattr(settings, "CELERY_TASK_QUEUES", {})]))


def _depths() -> dict[str, float]:
    """Each configured queue's message count from a passive `queue_declare`, which amqp and
    kombu's virtual transports (redis, sqlalchemy) answer. A queue the broker has never seen
    (amqp, or an empty redis list) is refused as not found: nothing waits in it."""
    from django.conf import settings
    from kombu import Connection
    from kombu.exceptions import ChannelError

    options = dict(getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", None) or {})
    depths: dict[str, float] = {}
    url = settings.CELERY_BROKER_URL
    broker = Connection(url, connect_timeout=BROKER_TIMEOUT, transport_options=options)  # type: ignore[no-untyped-call]  # kombu is unannotated
    with broker as connection:
        connection.ensure_connection(max_retries=0)  # no retry: the next scrape is the retry
        for name in configured_queues():
            channel = connection.channel()
            try:
                declared = channel.queue_declare(queue=name, passive=True)
                depths[name] = float(declared.message_count)
            except ChannelError:
                depths[name] = 0.0  # amqp closes the channel: the next queue gets a new one
            finally:
                _close_quietly(channel)
    return depths


def _close_quietly(channel: Any) -> None:
    """Close the channel and, on the SQLAlchemy transport, its session: kombu leaves that open,
    and each scrape would otherwise hold pooled database connections until the pool ran dry."""
    with contextlib.suppress(Exception):  # already closed by the broker: nothing to release
        channel.close()
    session = getattr(channel, "_session", None)
    if session is not None:
        session.close()
        channel._session = None


def _in_time(read: Callable[[], dict[str, float]], timeout: float) -> dict[str, float] | None:
    """`read()` on a daemon thread, or None if it failed or took longer than `timeout`: no
    transport bounds every step (a SQLAlchemy broker's engine, DNS) by itself."""
    answer: list[dict[str, float]] = []

    def run() -> None:
        try:
            answer.append(read())
        except Exception as error:  # noqa: BLE001 - any failure means "broker not answering"
            log.info("The broker did not answer the queue-depth read: %s", error)

    thread = threading.Thread(target=run, name="metrics-broker", daemon=True)
    thread.start()
    thread.join(timeout)
    return answer[0] if answer else None
