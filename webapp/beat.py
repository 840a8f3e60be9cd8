"""Celery beat's scheduler for Rootcause: Celery's own, made to reconnect after a failed send.

Beat sends the sweep (`rca/queue/sweeper.py`: the safety net that re-queues an analysis
whose worker died or whose message was lost), the worker heartbeat that /readyz reads
and the SLO evaluation. Celery's scheduler builds its broker connection and producer
once (cached properties) and never builds them again. When the broker goes away (with
the embedded broker: PostgreSQL restarts) the producer is left on a closed channel, and
every later send fails with "channel disconnected" until the worker process restarts
(celery/celery#8845, celery/kombu#1169). Under `make run` beat lives in the main worker,
which the same restart sometimes crashes (the supervisor restarts it, and beat with it) and
sometimes not: then the sweep was gone for good, an analysis the outage interrupted stayed
`analyzing` with a lapsed lease (and its joined repeats `pending`), and ids a killed inbox
processor still held unsent stayed `pending` with no message (in a test_faults run, beat
failed every send from the postmaster's kill to the end of the run).
tests/integration/test_beat_after_database_restart.py: after a SIGKILL of the postmaster and
its restart, beat on its own sent 0 sweeps in 30 s (interval 1 s); with this, it sends again.

So a send that fails drops the connection and producer; the next due entry connects
afresh (waiting while the broker is away, as beat does at start). The failed entry is
not re-sent: every entry here is periodic, and its next run comes one interval later.
"""

from __future__ import annotations

import contextlib
from typing import Any

from celery.beat import PersistentScheduler, SchedulingError


class ReconnectingScheduler(PersistentScheduler):
    """`PersistentScheduler` (beat's default) that reconnects after a failed send."""

    def apply_async(
        self, entry: Any, producer: Any = None, advance: bool = True, **kwargs: Any
    ) -> Any:
        try:
            return super().apply_async(entry, producer=producer, advance=advance, **kwargs)
        except SchedulingError:
            self.forget_connection()
            raise

    def forget_connection(self) -> None:
        """Drop the cached producer and connection (closing it); both are built again on
        their next use."""
        self.__dict__.pop("producer", None)
        connection = self.__dict__.pop("connection", None)
        if connection is not None:
            with contextlib.suppress(Exception):  # already broken: closing may fail too
                connection.release()
