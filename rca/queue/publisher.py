"""A coalescing background publisher: requests hand over incident ids, one thread sends them.

Why: publishing one Celery message cost a single-incident POST about 2 ms of its ~5.5 ms
in-process (kombu, and with the embedded broker a committed INSERT of its own). Handing
the ids to a thread returns at once; while the thread is sending, later ids pile up and
go out together as one message (group commit), so under load the cost is paid per burst
rather than per request. When idle, an id is sent as soon as the thread is scheduled.

Nothing accepted can be lost by this: the committed incident row is the record and the
message only its wake-up call. Ids still in memory when a process is killed stay
`pending`, and the sweeper re-sends them after RCA_ANALYSIS_PENDING_AFTER; a normal exit
flushes them (atexit). Ids that `send` returns as not sent (the broker, or the database
it lives in, was away) are tried again by the thread, after RETRY_FIRST seconds doubling
to RETRY_MOST, and at once when a later send succeeds: an incident posted just after an
outage is queued when the broker answers again, not at the next sweep (minutes).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence

log = logging.getLogger(__name__)

FLUSH_AT_EXIT_SECONDS = 5.0
RETRY_FIRST = 0.5  # seconds before ids that could not be sent are tried again; doubles
RETRY_MOST = 8.0  # ... up to this
RETRY_KEEP = 10_000  # ids kept for retrying at most; the sweeper sends any beyond


class CoalescingPublisher:
    """Calls `send(ids)` on a daemon thread with everything submitted since its last call.

    `send` may return the ids it could not send (a sequence); they are retried."""

    def __init__(self, send: Callable[[list[int]], object], most_per_send: int = 500) -> None:
        self._send = send
        self._most = most_per_send
        self._reset()
        atexit.register(self.flush, FLUSH_AT_EXIT_SECONDS)
        # A forked child (gunicorn and Celery workers) gets a copy of the queue but not the
        # thread, and maybe a lock held mid-submit: it starts afresh, and the parent keeps
        # its own ids to send.
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._queued: list[int] = []
        self._sending = 0  # ids handed to `send` that it has not returned from yet
        self._thread: threading.Thread | None = None
        self._unsent: list[int] = []  # returned by `send` as not sent: retried
        self._retry_at = 0.0  # monotonic time of the next retry
        self._backoff = RETRY_FIRST

    def submit(self, ids: Sequence[int]) -> None:
        """Queue ids for sending; returns at once."""
        if not ids:
            return
        with self._cond:
            self._queued.extend(ids)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="rca-publisher", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def flush(self, timeout: float) -> bool:
        """Wait until everything submitted so far has been handed to `send` and it returned
        (ids waiting for a retry are not waited for: the sweeper has them at exit)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._queued or self._sending:
                left = deadline - time.monotonic()
                if left <= 0 or self._thread is None or not self._thread.is_alive():
                    if self._queued:
                        log.warning(
                            "%d analyses not queued at exit; the sweeper sends them",
                            len(self._queued),
                        )
                    return False
                self._cond.wait(left)
        return True

    def unsent(self) -> list[int]:
        """Ids waiting for a retry."""
        with self._cond:
            return list(self._unsent)

    def _take(self) -> list[int]:
        """Under the lock: wait for work, then the next ids (due retries first, in order)."""
        while True:
            due = bool(self._unsent) and time.monotonic() >= self._retry_at
            if self._queued or due:
                break
            self._cond.wait(max(0.0, self._retry_at - time.monotonic()) if self._unsent else None)
        # A fresh id is a probe too: when it goes out, the retries go right after it.
        retry = self._unsent if due else []
        pool = retry + self._queued
        ids, rest = pool[: self._most], pool[self._most :]
        if due:
            self._unsent, self._queued = [], rest
        else:
            self._queued = rest
        self._sending = len(ids)
        return ids

    def _run(self) -> None:
        while True:
            with self._cond:
                ids = self._take()
            unsent: list[int] = []
            try:
                result = self._send(ids)
                if isinstance(result, list | tuple):
                    unsent = [int(i) for i in result]
            except Exception:  # a bug, not an outage (`send` reports those): never retried
                log.exception("publishing analyses %s failed; the sweeper sends them", ids)
            finally:
                with self._cond:
                    self._sending = 0
                    self._note(unsent)
                    self._cond.notify_all()

    def _note(self, unsent: list[int]) -> None:
        """Under the lock: keep `unsent` for a retry with backoff; a full success means the
        broker answers, so waiting retries go at once."""
        if not unsent:
            self._backoff, self._retry_at = RETRY_FIRST, 0.0
            return
        self._unsent = unsent + self._unsent
        if len(self._unsent) > RETRY_KEEP:
            dropped = len(self._unsent) - RETRY_KEEP
            log.warning("%d analyses not retried in memory; the sweeper sends them", dropped)
            self._unsent = self._unsent[:RETRY_KEEP]
        self._retry_at = time.monotonic() + self._backoff
        self._backoff = min(RETRY_MOST, self._backoff * 2)
