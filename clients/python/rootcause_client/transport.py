"""Send incidents from a background thread: the service is never blocked or broken by us.

`submit` only puts the incident on a bounded queue and returns; when the queue is full the
incident is dropped and counted, because a failing service that reports faster than
Rootcause can take must not grow without bound. The sender thread retries what may
succeed later (unreachable, 429, 5xx) with backoff, honouring `Retry-After`, and gives up
at once on what never will (other 4xx). Each incident carries its own `event_id`, so a
retry after a lost answer is stored once. At exit the process waits a few seconds for
what is still queued: the incident of the exception that is killing the process is the
one that matters most.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import queue
import threading
import time
import urllib.error
import urllib.request
from typing import Any

from rootcause_client.config import Config

log = logging.getLogger("rootcause_client")

MAX_BACKOFF = 30.0
_STOP = object()


class Transport:
    """One sender thread and its queue; started on the first `submit`."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.sent = 0
        self.dropped = 0  # the queue was full
        self.failed = 0  # refused for good, or out of attempts
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max(1, config.queue_size))
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closing = threading.Event()

    def submit(self, incident: dict[str, Any]) -> bool:
        """Queue an incident for sending; False when it was dropped (queue full, or no config)."""
        if not self.config.enabled:
            return False
        self._start()
        try:
            self._queue.put_nowait(incident)
        except queue.Full:
            self.dropped += 1
            log.warning("rootcause_client: queue full, incident dropped (%d so far)", self.dropped)
            return False
        return True

    def flush(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the queue to empty; True when it did."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def close(self, timeout: float | None = None) -> None:
        """Flush (bounded), then stop the thread; what is left unsent is counted as dropped."""
        self.flush(self.config.flush_on_exit if timeout is None else timeout)
        self._closing.set()
        if self._thread is not None:
            with contextlib.suppress(queue.Full):
                self._queue.put_nowait(_STOP)

    def _start(self) -> None:
        if self._thread is not None:
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="rootcause-client", daemon=True
                )
                self._thread.start()
                atexit.register(self.close)

    def _run(self) -> None:
        while True:
            incident = self._queue.get()
            try:
                if incident is _STOP:
                    return
                self._deliver(incident)
            except Exception:  # a bug of ours must not kill the sender
                log.exception("rootcause_client: could not send an incident")
                self.failed += 1
            finally:
                self._queue.task_done()

    def _deliver(self, incident: dict[str, Any]) -> None:
        body = json.dumps(incident, default=str).encode()
        for attempt in range(self.config.max_attempts):
            wait = min(MAX_BACKOFF, 0.5 * 2**attempt)
            try:
                status = self._post(body)
            except urllib.error.HTTPError as exc:
                if exc.code != 429 and exc.code < 500:
                    log.warning("rootcause_client: incident refused (%s): %s", exc.code, _text(exc))
                    self.failed += 1
                    return
                wait = _retry_after(exc, wait)
            except OSError as exc:  # unreachable, reset, timed out
                log.info("rootcause_client: Rootcause unreachable (%s); retrying", exc)
            else:
                if status < 300:
                    self.sent += 1
                    return
            if self._closing.wait(wait):
                break  # the process is exiting: no more waiting
        self.failed += 1

    def _post(self, body: bytes) -> int:
        request = urllib.request.Request(  # noqa: S310 - the URL is the operator's RCA_URL
            f"{self.config.url}/api/v1/incidents",
            data=body,
            method="POST",
            headers={
                "Authorization": f"Bearer {self.config.api_key}",
                "Content-Type": "application/json",
                "User-Agent": "rootcause-client/0.1",
            },
        )
        with urllib.request.urlopen(request, timeout=self.config.timeout) as answer:  # noqa: S310
            return int(answer.status)


def _retry_after(exc: urllib.error.HTTPError, default: float) -> float:
    try:
        return min(MAX_BACKOFF, max(0.0, float(exc.headers.get("Retry-After", default))))
    except (TypeError, ValueError):
        return default


def _text(exc: urllib.error.HTTPError) -> str:
    try:
        return exc.read(500).decode("utf-8", "replace")
    except OSError:
        return ""
