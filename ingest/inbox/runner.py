"""The processor's loop (`manage.py process_inbox`): wake, replay the spool, process, wait.

It LISTENs on the channel the accept notifies (`write.CHANNEL`), so a new row is processed
within milliseconds, and polls every RCA_INBOX_POLL seconds besides: a notification is lost
while the processor is disconnected, and rows accepted then must not wait for the next one.
For a moment after any activity it looks every `write.WAKE_EVERY` seconds instead: a web
process sends at most one wake-up per WAKE_EVERY, so a row committed just after one was
sent has none of its own.
It runs at a lower CPU priority than the web processes (RCA_INBOX_NICE, default 5): on a
machine of 2 cores it would otherwise take a third of the CPU from the requests that
accept (issue 19: scrubbing, parsing and grouping cost more per incident than the accept
does). Nice only decides who waits while both want the CPU: once the requests stop, or
between them, it has the CPU to itself and drains in batches of RCA_INBOX_BATCH; a
backlog built meanwhile is stored in larger, cheaper transactions, and the inbox's bound
(`backlog.py`) keeps it finite. Not lower (measured, README issue 19): at nice 19 or
SCHED_IDLE it starves behind any other busy process on the host (at load 17-22 it could
not start and stop within 20 s; at 50 incidents/s accept -> stored p50 went 18 -> 507 ms).
While incidents stream in faster than LINGER_RATE a second (rows found by a claim over the
time since the claim before it), it claims at most every LINGER seconds, so that a claim
holds tens of rows instead of the few that arrived while it stored the last one. A
claim's fixed cost (~15 statements: claim, projects, lookup, savepoints, the issue upsert,
the analysis intake, delete, commit) was most of an incident's cost in claims of a few
rows (issue 19, bench/process_cpu.py, ms of CPU per incident in the processor + its
backend: 5 rows 1.18 + 0.69, 20 rows 0.59 + 0.27, 100 rows 0.35 + 0.15), CPU taken from
the requests that accept. Slower arrivals are stored at once, as before; a backlog (full
claims) is drained without pauses.
While the database is away it retries with a backoff (one log line per outage) and
LISTENs again on the new connection. SIGTERM or SIGINT stops it between two transactions,
within one poll interval: the claim at hand commits or rolls back whole, never half.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from django.db import InterfaceError, OperationalError, connection

from ingest.inbox import spool_first
from ingest.inbox.process import process_pending
from ingest.inbox.write import CHANNEL, WAKE_EVERY

log = logging.getLogger(__name__)

MAX_BACKOFF = 5.0  # seconds between attempts to reach a database that is away
APPLICATION_NAME = "rootcause process_inbox"


def replay_spool(chunk: int = 500) -> int:
    """Store what the spool holds: records kept while the database was away, and Sentry
    events spooled first (`spool_first.py`), in order, exactly once (storing skips event
    ids already stored; a record that cannot be stored goes to the inbox)."""
    try:
        from ingest import spool
    except ImportError:  # the spool is optional: nothing was ever spooled without it
        return 0
    return int(spool.replay(spool_first.store, chunk=max(1, chunk)))  # a transaction each


#: Seconds from one claim to the next while incidents arrive faster than LINGER_RATE a
#: second (0: claim again at once). Adds up to LINGER to accept -> stored in a storm only.
LINGER = 0.1
LINGER_RATE = 200.0


def lower_priority() -> None:
    """Raise this process's niceness by RCA_INBOX_NICE (once; never lowers it)."""
    from django.conf import settings

    step = int(settings.RCA_INBOX_NICE)
    if step > 0:
        try:
            os.nice(step)
        except OSError as exc:  # a sandbox may refuse; the processor still works
            log.warning("could not lower the processor's priority: %s", exc)


class Runner:
    """One processor: `run()` until `stop` is set. `alive_file` is touched at every loop
    (container health checks read its age)."""

    def __init__(
        self,
        poll: float,
        batch: int,
        alive_file: Path | None = None,
        fresh_batch: int = 0,
        linger: float = LINGER,
    ) -> None:
        self.poll, self.batch, self.alive_file = poll, batch, alive_file
        self.fresh_batch = fresh_batch  # newest rows also taken per full batch (a backlog)
        self.linger = linger
        self._claimed_at = float("-inf")  # when the last claim began (`_claim`)
        self.stop = threading.Event()
        self._listening: Any = None  # the psycopg connection that LISTENs
        self._active_at = 0.0  # monotonic time rows were last processed or a wake came

    def stop_on_signals(self) -> None:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: self.stop.set())

    def run(self) -> None:
        lower_priority()
        backoff = 0.0
        while not self.stop.is_set():
            try:
                self.once()
                if backoff:
                    log.warning("the database answers again; processing the inbox")
                backoff = 0.0
            except (OperationalError, InterfaceError) as exc:
                if not backoff:
                    log.warning("the database is away (%s); retrying", str(exc).strip()[:200])
                backoff = min(MAX_BACKOFF, max(0.25, backoff * 2))
                self._disconnect()
                self.stop.wait(backoff)

    def once(self) -> int:
        """One turn: listen, replay the spool, process until a claim comes back short, then
        wait for a notification or the poll interval; how many rows were processed."""
        self._listen()
        replayed = replay_spool(self.batch)
        if replayed:
            log.debug("stored %d spooled incidents", replayed)
        done = replayed
        while not self.stop.is_set():
            n, rate = self._claim()
            done += n
            if n < self.batch:
                if rate >= LINGER_RATE:  # a stream: let the next claim gather more rows
                    self.stop.wait(max(0.0, self.linger - (time.monotonic() - self._claimed_at)))
                break
            if self.fresh_batch:  # a backlog: what arrived last goes too, not after all of it
                done += process_pending(self.fresh_batch, newest_first=True)
        self._touch()
        if done:
            self._active_at = time.monotonic()
            log.debug("processed %d inbox rows", done)
        else:
            recently = time.monotonic() - self._active_at < 2 * WAKE_EVERY
            if self._wait(min(self.poll, WAKE_EVERY) if recently else self.poll):
                self._active_at = time.monotonic()
        return done

    def _claim(self) -> tuple[int, float]:
        """One claim: the rows it stored, and how fast they arrived (per second, over the
        time since the claim before began; 0 when lingering is off)."""
        began, before = time.monotonic(), self._claimed_at
        n = process_pending(self.batch)
        self._claimed_at = began
        return n, (n / max(began - before, 1e-3) if self.linger > 0 else 0.0)

    def _listen(self) -> None:
        connection.ensure_connection()
        conn = connection.connection
        if conn is not self._listening:
            with connection.cursor() as cursor:
                # Named in pg_stat_activity, so an operator can tell processors apart.
                cursor.execute(f"SET application_name = '{APPLICATION_NAME}'")
                cursor.execute(f"LISTEN {CHANNEL}")
            self._listening = conn

    def _wait(self, seconds: float) -> bool:
        """Until a notification arrives (True) or `seconds` pass (or a stop is asked for)."""
        conn = self._listening
        deadline = time.monotonic() + seconds
        while not self.stop.is_set() and (left := deadline - time.monotonic()) > 0:
            # Short waits, so that a stop is seen soon even with a long poll interval. The
            # wrapper makes a lost connection Django's OperationalError, as for queries.
            with connection.wrap_database_errors:
                woken = any(True for _ in conn.notifies(timeout=min(left, 0.5), stop_after=1))
                if woken:
                    # Others may have followed (one per accepting transaction): take them all
                    # (a second call: the generator holds the connection's lock until it ends).
                    for _ in conn.notifies(timeout=0):
                        pass
                    return True
        return False

    def _disconnect(self) -> None:
        self._listening = None
        with contextlib.suppress(OperationalError, InterfaceError):
            connection.close()

    def _touch(self) -> None:
        if self.alive_file is not None:
            try:
                self.alive_file.touch()
            except OSError as exc:  # a health check's file must never stop the processing
                log.warning("could not touch %s: %s", self.alive_file, exc)
