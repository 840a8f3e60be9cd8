"""Group commit for the inbox: concurrent requests of one web process share one INSERT and
one commit, and each is answered once its rows are durable.

Issue 19: one autocommitted INSERT per request is one WAL flush (an fsync) and one round
trip per request, and each request also paid Django's connection health check (a
`SELECT 1` at its first query, CONN_HEALTH_CHECKS). Here a request queues its records; if
no commit is under way it leads: it takes everything queued, inserts it with the same
statement (`write._PREPARE`, idempotent on (project, event_id)) on the process's one
committing connection, and hands each waiter the rows that were its own. Requests that
queued meanwhile wait, and when the commit ends the first of them leads the next batch. Under
light load a batch is one request, committed at once by its own thread (no hand-off to
another thread: that cost ~0.1 ms of CPU per request, bench/request_cpu.py). A request is
still answered only after its rows are committed with `synchronous_commit` on: durability
before the 2xx is unchanged.

Gathering: a leader that starts while commits follow each other (the last ended less than
BUSY_SECONDS ago) or while other ingest requests of its process are under way (between
`IngestLimitsMiddleware` and their write: `expecting()`) first waits until none of those
is on its way and the queue has not grown for QUIET_SECONDS, for GATHER_SECONDS at most,
or until every thread of the process is queued. Without it, a commit's clients that all
sent again at once were split: the first to arrive led a batch of one and the others
waited out its WAL flush (~5 ms on this disk, `pg_test_fsync`) for a second one; batches
went 1, 3, 1, 3 and the single path paid ~2 requests per flush, which bounds it on this
disk (~185 flushes/s) well before CPU does on a quiet machine. With it, 3.2-4.6
(`bench/cpu_accounting.py`, "req/WAL flush"). A wait sleeps on a condition, and none
happens when requests come further apart than BUSY_SECONDS.

Wake-ups: each waiting request sleeps on a lock of its own, released once, so a commit
wakes exactly its batch's requests and a leaving leader exactly the next leader; a
gathering leader is woken when no expected request is left on its way or every thread
is queued, not at each arrival. Before, every commit's end woke every waiting request
(those left for the next batch went back to sleep, and woke again when the leader left)
and each arrival woke the gathering leader: on this VM a thread's wake-up costs ~20-100
us of CPU under load (cache refill after others ran), a cost per request the floor does
not pay.

Group commit is on where `enable()` was called: in gunicorn workers
(`webapp/gunicorn_conf.py`). Elsewhere (tests' clients, the processor's spool replay) and
inside a caller's transaction, `write.write` inserts on the caller's connection as before.

The committing connection is the process's own (not any request thread's), used by one
leader at a time. Failures: a connection error (the database away) is raised in every
request of the batch as Django's `OperationalError`, which the accept answers by spooling
its records, as before. Any other error of a batch of several requests is retried request
by request, so one request's bad rows cannot fail its neighbours'. The connection is not
health-checked per request; after an idle spell it is pinged before use (a database
restarted meanwhile must not cost the first request after it a spool).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

from ingest.inbox.records import Record

log = logging.getLogger(__name__)

#: Records written per commit at most (a batch endpoint's request brings up to hundreds).
MAX_RECORDS = 2000
#: Seconds the committing connection may sit idle before it is pinged before use.
IDLE_PING_SECONDS = 5.0
#: Gathering (`_gather`): a leader waits only if the last commit ended less than
#: BUSY_SECONDS ago or an ingest request of its process is under way; then until the queue
#: has not grown for QUIET_SECONDS, for GATHER_SECONDS at most.
BUSY_SECONDS = 0.010
QUIET_SECONDS = 0.001
GATHER_SECONDS = 0.003


def _held() -> threading.Lock:
    lock = threading.Lock()
    lock.acquire()
    return lock


@dataclass(eq=False)  # compared by identity
class _Waiting:
    """One request's records, and what became of them."""

    records: Sequence[Record]
    committed: bool = False  # its rows are in (`inserted`: those new), or `error` says why not
    finished: bool = False  # set under the committer's lock once the above is final
    inserted: list[tuple[int, int, str]] = field(default_factory=list)
    error: BaseException | None = None
    #: Held from the start; released once, to wake this request alone: when it is
    #: `finished`, or (not finished) when the leader before it hands it the lead.
    wakeup: threading.Lock = field(default_factory=_held)


Connection = BaseDatabaseWrapper
InsertFn = Callable[[Sequence[Record], Connection], list[tuple[int, int, str]]]


class Committer:
    """Per process: the queue, whether a commit is under way, and the committing connection
    (opened lazily in the process that uses it: a gunicorn worker is a fork)."""

    def __init__(
        self, insert: InsertFn, after: Callable[[Connection], None], threads: int = 0
    ) -> None:
        """`threads`: how many requests of the process can be under way at once (gunicorn's
        threads per worker); a leader stops gathering once that many are queued (0: no cap)."""
        self._insert, self._after, self._threads = insert, after, threads
        self._queue: list[_Waiting] = []
        lock = threading.RLock()
        self._cond = threading.Condition(lock)  # no commit is under way any more (`close`)
        self._queued = threading.Condition(lock)  # an expected request queued or ended
        self._busy = False  # a leader is committing
        self._gathering = False  # a leader waits for `_coming` requests to queue
        self._coming = 0  # requests inside `expecting()` that have not queued yet
        self._local = threading.local()
        self._pid = 0
        self._conn: Connection | None = None
        self._used_at = 0.0
        self._ended_at = float("-inf")  # when the last commit ended

    @contextlib.contextmanager
    def expecting(self) -> Iterator[None]:
        """Around an ingest request: a leader may wait for it to queue its records."""
        with self._cond:
            self._own()
            self._coming += 1
            self._local.coming = True
        try:
            yield
        finally:
            with self._cond:
                self._arrived()

    def not_coming(self) -> None:
        """This thread's request will write nothing here (its records went to the spool):
        a gathering leader need not wait for it."""
        with self._cond:
            self._own()
            self._arrived()

    def _own(self) -> None:
        """After a fork the parent's queue, counts and socket are not ours (under the lock)."""
        if self._pid != os.getpid():
            self._pid, self._queue, self._busy, self._conn = os.getpid(), [], False, None
            self._coming, self._gathering, self._local = 0, False, threading.local()

    def _arrived(self) -> None:
        """This thread's request queued its records or ended (under the lock)."""
        if getattr(self._local, "coming", False):
            self._local.coming = False
            self._coming -= 1
            if self._gathering and self._coming <= 0:
                self._queued.notify()

    def write(self, records: Sequence[Record]) -> list[tuple[int, int, str]]:
        """Insert `records` with whatever else is waiting; (id, project_id, event_id) of the
        rows inserted for these records. Returns once they are committed."""
        waiting = _Waiting(records)
        with self._cond:
            self._own()
            self._queue.append(waiting)
            self._arrived()
            if self._gathering and (
                self._coming <= 0 or (self._threads and len(self._queue) >= self._threads)
            ):
                self._queued.notify()  # a leader gathering has a reason to look again
            lead = not self._busy
            self._busy = True
        if not lead:
            waiting.wakeup.acquire()  # until it is committed, or it is handed the lead
            lead = not waiting.finished
        if lead:
            self._lead(waiting)
        if waiting.error is not None:
            raise waiting.error
        return waiting.inserted

    def close(self) -> None:
        """Close the committing connection once no commit is under way (tests; a worker's
        connection simply ends with the process)."""
        with self._cond:
            while self._busy:
                self._cond.wait()
            if self._conn is not None and self._pid == os.getpid():
                with contextlib.suppress(Exception):
                    self._conn.close()
            self._conn = None

    def _lead(self, mine: _Waiting) -> None:
        """Commit batches from the head of the queue until `mine` is in one; then let a
        waiter lead the next."""
        try:
            while not mine.finished:
                with self._cond:
                    self._gather()
                    batch: list[_Waiting] = []
                    count = 0
                    while self._queue and (
                        not batch or count + len(self._queue[0].records) <= MAX_RECORDS
                    ):
                        batch.append(self._queue.pop(0))
                        count += len(batch[-1].records)
                inserted = False
                try:
                    inserted = self._commit(batch)
                except BaseException as exc:  # never leave a request waiting, whatever failed
                    log.exception("the inbox committer failed")
                    for waiting in batch:
                        if waiting.error is None and not waiting.committed:
                            waiting.error = RuntimeError(f"inbox committer: {type(exc).__name__}")
                    if not isinstance(exc, Exception):
                        raise
                finally:
                    with self._cond:
                        self._ended_at = time.monotonic()
                        for waiting in batch:
                            waiting.finished = True
                            if waiting is not mine:
                                waiting.wakeup.release()
                if inserted and self._conn is not None:  # the waiters are answered already
                    with contextlib.suppress(OperationalError, InterfaceError):
                        self._after(self._conn)
        finally:
            with self._cond:
                if not mine.finished and mine in self._queue:
                    self._queue.remove(mine)  # leaving on an exception: nobody waits for it
                if self._queue:  # the head of the queue leads next: one thread woken
                    self._queue[0].wakeup.release()
                else:
                    self._busy = False
                    self._cond.notify_all()

    def _gather(self) -> None:
        """While commits follow each other (the last ended under BUSY_SECONDS ago) or a
        request of this process is on its way to queue, wait (under the lock) until none is
        on its way and the queue has not grown for QUIET_SECONDS; GATHER_SECONDS at most."""
        now = time.monotonic()
        if self._coming <= 0 and now - self._ended_at > BUSY_SECONDS:
            return  # light load: commit at once
        deadline, quiet_until, size = now + GATHER_SECONDS, now + QUIET_SECONDS, len(self._queue)
        self._gathering = True
        try:
            while now < deadline and (self._coming > 0 or now < quiet_until):
                if self._threads and len(self._queue) >= self._threads:
                    break  # every thread of the process is waiting here: nobody else comes
                self._queued.wait((deadline if self._coming > 0 else quiet_until) - now)
                now = time.monotonic()
                if len(self._queue) != size:
                    size, quiet_until = len(self._queue), now + QUIET_SECONDS
        finally:
            self._gathering = False

    def _connection(self) -> Connection:
        if self._conn is None:
            self._conn = connections.create_connection(DEFAULT_DB_ALIAS)
            self._conn.inc_thread_sharing()  # one leader at a time, on any request thread
        return self._conn

    def _commit(self, batch: list[_Waiting]) -> bool:
        """Insert the batch's records; each request's rows or error. True if rows went in."""
        conn = self._connection()
        self._ping_if_idle(conn)
        try:
            rows = self._insert([r for waiting in batch for r in waiting.records], conn)
        except (OperationalError, InterfaceError) as exc:
            with contextlib.suppress(Exception):
                conn.close()  # the next batch connects afresh
            for waiting in batch:
                waiting.error = OperationalError(str(exc))
            return False
        except Exception as exc:
            if len(batch) == 1:
                batch[0].error = exc
                return False
            # whose rows failed: each request on its own
            return any([self._commit([waiting]) for waiting in batch])
        self._used_at = time.monotonic()
        # ON CONFLICT keeps the first of an event id in the statement's order: its request's.
        owner: dict[tuple[int, str], _Waiting] = {}
        for waiting in batch:
            for r in waiting.records:
                owner.setdefault((int(r["project_id"]), str(r["event_id"])), waiting)
        for row in rows:
            owner[(row[1], row[2])].inserted.append(row)
        for waiting in batch:
            waiting.committed = True
        return bool(rows)

    def _ping_if_idle(self, conn: Connection) -> None:
        if time.monotonic() - self._used_at < IDLE_PING_SECONDS:
            return
        if conn.connection is not None and not conn.is_usable():
            with contextlib.suppress(Exception):
                conn.close()
