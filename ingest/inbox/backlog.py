"""The inbox's bound: past RCA_INBOX_MAX_ROWS waiting rows, the ingest endpoints refuse.

The processor runs at a lower CPU priority (`runner.py`): under CPU saturation the
requests that accept outrank it, as Sentry's Relay accepts first and processes as capacity
allows. What keeps a long saturation (or a stopped processor) from growing the inbox
without limit is this bound: while more rows wait
than it allows, every ingest endpoint answers 429 with `Retry-After` and accepts nothing:
`rootcause_client` waits and sends again, Sentry SDKs send nothing for that long (dropping
what they capture meanwhile, as under Sentry's own rate limits). What was accepted before
is never lost; a refused incident was never accepted.

The check is cheap: each process keeps the last answer and asks the database again at
most every RCA_INBOX_BOUND_CHECK_MS milliseconds (one thread asks; the others use the
answer it had). The count stops at the bound (`LIMIT bound + 1`), so even a large backlog
costs at most that many index entries per check. Failed rows (kept for an operator) do
not count. A database that is away is not a full inbox: the write that follows spools.
With RCA_SENTRY_SPOOL_FIRST the records in this host's spool count too (`spool_first.py`).
"""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

from ingest.inbox import spool_first
from ingest.models import InboxItem

#: Seconds a refused client is asked to wait (the processor stores ~1,000 rows a second
#: on 2 cores, so a bound of 100,000 rows is under two minutes of work).
RETRY_AFTER = 5

_COUNT = f"""
SELECT count(*) FROM (
    SELECT 1 FROM {InboxItem._meta.db_table} WHERE failed_at IS NULL LIMIT %s
) AS waiting
"""  # noqa: S608 - the table name is ours

_lock = threading.Lock()
_checked_at = float("-inf")  # monotonic time of the last answer from the database
_over = False


def full() -> bool:
    """Whether more rows wait than RCA_INBOX_MAX_ROWS (0: no bound), as last checked."""
    global _checked_at, _over
    bound = int(settings.RCA_INBOX_MAX_ROWS)
    if bound <= 0:
        return False
    now = time.monotonic()
    if now - _checked_at < settings.RCA_INBOX_BOUND_CHECK_MS / 1000:
        return _over
    if not _lock.acquire(blocking=False):  # another thread is asking: its last answer stands
        return _over
    try:
        _checked_at = now
        queued = waiting(bound + 1)
        if queued <= bound and spool_first.enabled():  # Sentry events waiting on this host
            queued += spool_first.waiting()
        _over = queued > bound
    except (OperationalError, InterfaceError):
        _over = False  # the write spools; the next check asks again
    finally:
        _lock.release()
    return _over


def waiting(at_most: int) -> int:
    """Rows waiting for the processor, counted up to `at_most`."""
    with connection.cursor() as cursor:
        cursor.execute(_COUNT, [at_most])
        row = cursor.fetchone()
    return int(row[0]) if row else 0
