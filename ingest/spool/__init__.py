"""The on-disk spool: where accepted incidents wait, fsync'd, while the database is away.

Ingest writes what it accepted to the inbox table; when that INSERT fails because the
database is unreachable, the records come here instead (`append`), and the inbox
processor hands them back to the database when it answers again (`replay`). A 202 is
only ever answered after `append` returned, so what it acknowledged is on disk. With
RCA_SENTRY_SPOOL_FIRST, Sentry events come here first, database or not
(`ingest/inbox/spool_first.py`); concurrent appends of a process share one fdatasync.

Files of their own per process in RCA_SPOOL_DIR (`directory.py`: locking, rotation,
replay), one checksummed JSON line per record (`framing.py`: a record torn by a crash is
skipped). Files of a process that died are replayed like any other.

Order: records are replayed in the order each process appended them, files in the order
they were started. Exactly once is the caller's part: `write` must be idempotent (event
ids), because a crash after `write` and before the unlink replays the file again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ingest.spool.directory import CHUNK, RETRY_AFTER, Spool, SpoolFull, default
from ingest.spool.framing import Record

__all__ = ["RETRY_AFTER", "Record", "Spool", "SpoolFull", "append", "count", "replay", "size_bytes"]


def append(records: Sequence[Mapping[str, Any]]) -> None:
    """Spool `records` durably; raises SpoolFull (with `retry_after`) when over the limit."""
    from ingest import metrics  # here: metrics reads the spool's size at scrape time

    default().append(records)
    metrics.SPOOLED.inc(len(records))


def replay(write: Callable[[list[Record]], None], *, chunk: int = CHUNK) -> int:
    """Hand the spooled records to the idempotent `write`, in order; return how many."""
    from ingest import metrics

    def counted(records: list[Record]) -> None:
        write(records)
        metrics.REPLAYED.inc(len(records))  # per chunk: a later failing chunk keeps these

    return default().replay(counted, chunk=chunk)


def size_bytes() -> int:
    """Bytes waiting for replay on this host (every process's files)."""
    return default().size_bytes()


def count() -> int:
    """Records waiting for replay on this host."""
    return default().count()
