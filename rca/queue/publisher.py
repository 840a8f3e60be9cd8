"""A coalescing background publisher: requests hand over incident ids, one thread sends them.

Why: publishing one Celery message cost a single-incident POST about 2 ms of its ~5.5 ms
in-process (kombu, and with the embedded broker a committed INSERT of its own). Handing
the ids to a thread returns at once; while the thread is sending, later ids pile up and
go out together as one message (group commit), so under load the cost is paid per burst
rather than per request. When idle, an id is sent as soon as the thread is scheduled.

Nothing accepted can be lost by this: the committed incident row is the record and the
message only its wake-up call. Ids still in memory when a process is killed stay
`pending`, and the sweeper re-sends them after RCA_ANALYSIS_PENDING_AFTER; a normal exit
flushes them (atexit). A send that fails is logged by `send` and left to the sweeper too.
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


class CoalescingPublisher:
    """Calls `send(ids)` on a daemon thread with everything submitted since its last call."""

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
        """Wait until everything submitted so far has been handed to `send` and it returned."""
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

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queued:
                    self._cond.wait()
                ids, self._queued = self._queued[: self._most], self._queued[self._most :]
                self._sending = len(ids)
            try:
                self._send(ids)
            except Exception:  # `send` reports its own failures; never let the thread die
                log.exception("publishing analyses %s failed; the sweeper sends them", ids)
            finally:
                with self._cond:
                    self._sending = 0
                    self._cond.notify_all()
