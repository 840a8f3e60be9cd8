"""Group commit for the inbox: one thread per web process writes what concurrent requests
accepted, in one INSERT and one commit, and answers each request once its rows are durable.

Issue 19: one autocommitted INSERT per request is one WAL flush (an fsync) and one round
trip per request, and each request also paid Django's connection health check (a
`SELECT 1` at its first query, CONN_HEALTH_CHECKS). Here a request hands its records to
the committer and waits; the committer takes everything that queued while the previous
commit was under way, inserts it with the same statement (`write._PREPARE`, idempotent on
(project, event_id)), and wakes each waiter with the rows that were its own. Nothing
waits on purpose: under light load a batch is one request and costs what it did; under
load the batch grows by itself and the requests share a round trip and an fsync. A
request is still answered only after its rows are committed with `synchronous_commit`
on: durability before the 2xx is unchanged.

The committer runs where `enable()` was called: in gunicorn workers
(`webapp/gunicorn_conf.py`). Elsewhere (tests' clients, the processor's spool replay) and
inside a caller's transaction, `write.write` inserts on the caller's connection as before.

Failures: a connection error (the database away) is raised in every waiting request as
Django's `OperationalError`, which the accept answers by spooling its records, as before.
Any other error of a batch of several requests is retried request by request, so one
request's bad rows cannot fail its neighbours'. The committer's connection is not
health-checked per request; after an idle spell it is pinged before use (a database
restarted meanwhile must not cost the first request after it a spool).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.db import InterfaceError, OperationalError, connection

from ingest.inbox.records import Record

log = logging.getLogger(__name__)

#: Records written per commit at most (a batch endpoint's request brings up to hundreds).
MAX_RECORDS = 2000
#: Seconds the committer's connection may sit idle before it is pinged before use.
IDLE_PING_SECONDS = 5.0


@dataclass
class _Waiting:
    """One request's records, and what became of them."""

    records: Sequence[Record]
    done: threading.Event = field(default_factory=threading.Event)
    inserted: list[tuple[int, int, str]] = field(default_factory=list)
    error: BaseException | None = None


InsertFn = Callable[[Sequence[Record]], list[tuple[int, int, str]]]


class Committer:
    """Started lazily in the process that uses it (a gunicorn worker is a fork)."""

    def __init__(self, insert: InsertFn, after: Callable[[], None]) -> None:
        self._insert, self._after = insert, after
        self._queue: list[_Waiting] = []
        self._cond = threading.Condition()
        self._pid = 0
        self._used_at = 0.0
        self._closing = False

    def write(self, records: Sequence[Record]) -> list[tuple[int, int, str]]:
        """Insert `records` with whatever else is waiting; (id, project_id, event_id) of the
        rows inserted for these records. Returns once they are committed."""
        waiting = _Waiting(records)
        with self._cond:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                self._queue = []
                threading.Thread(target=self._run, name="inbox-committer", daemon=True).start()
            self._queue.append(waiting)
            self._cond.notify()
        waiting.done.wait()
        if waiting.error is not None:
            raise waiting.error
        return waiting.inserted

    def close(self) -> None:
        """Stop the thread once nothing waits, and close its connection (tests; a worker's
        thread simply ends with the process)."""
        with self._cond:
            self._closing = True
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:  # closing, and nothing left to write
                    self._pid, self._closing = 0, False
                    connection.close()
                    return
                batch: list[_Waiting] = []
                count = 0
                while self._queue and (
                    not batch or count + len(self._queue[0].records) <= MAX_RECORDS
                ):
                    batch.append(self._queue.pop(0))
                    count += len(batch[-1].records)
            try:
                self._commit(batch)
            except BaseException as exc:  # never leave a request waiting, whatever failed
                log.exception("the inbox committer failed")
                for waiting in batch:
                    if not waiting.done.is_set():
                        waiting.error = RuntimeError(f"inbox committer: {type(exc).__name__}")
                        waiting.done.set()

    def _commit(self, batch: list[_Waiting]) -> None:
        self._ping_if_idle()
        try:
            rows = self._insert([r for waiting in batch for r in waiting.records])
        except (OperationalError, InterfaceError) as exc:
            with contextlib.suppress(Exception):
                connection.close()  # the next batch connects afresh
            for waiting in batch:
                waiting.error = OperationalError(str(exc))
                waiting.done.set()
            return
        except Exception as exc:
            if len(batch) == 1:
                batch[0].error = exc
                batch[0].done.set()
                return
            for waiting in batch:  # whose rows failed: each request on its own
                self._commit([waiting])
            return
        self._used_at = time.monotonic()
        # ON CONFLICT keeps the first of an event id in the statement's order: its request's.
        owner: dict[tuple[int, str], _Waiting] = {}
        for waiting in batch:
            for r in waiting.records:
                owner.setdefault((int(r["project_id"]), str(r["event_id"])), waiting)
        for row in rows:
            owner[(row[1], row[2])].inserted.append(row)
        for waiting in batch:
            waiting.done.set()
        if rows:
            with contextlib.suppress(OperationalError, InterfaceError):
                self._after()

    def _ping_if_idle(self) -> None:
        if time.monotonic() - self._used_at < IDLE_PING_SECONDS:
            return
        if connection.connection is not None and not connection.is_usable():
            with contextlib.suppress(Exception):
                connection.close()
