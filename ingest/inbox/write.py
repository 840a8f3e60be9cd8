"""The inbox insert: one statement per request, idempotent on (project, event_id).

It skips event ids already stored as incidents or already waiting in the inbox (a retry
is not queued twice) and returns the rows it inserted. The rows travel as one JSON
document, as in `ingest/bulk_insert.py`.

Then `wake()` tells the processor with a `pg_notify` on `CHANNEL`, in a statement of its
own and at most every WAKE_EVERY seconds per process. Not inside the INSERT: PostgreSQL
holds one cluster-wide lock from a notifying transaction's commit until its WAL is
flushed, so every accepting request would wait for the previous one's fsync (8 writers:
200 inserts/s with the NOTIFY, 480-600 without, on this machine). A notify-only
statement writes no WAL and holds that lock for microseconds. A wake skipped because
another went out less than WAKE_EVERY before is covered by the processor, which looks
every WAKE_EVERY seconds for a while after any activity (`runner.py`).
The spool's records are stored straight from it (`spool_first.store`, idempotent on event
ids); one that cannot be stored comes here (`replay_write`), to the poison-row handling.

A retry that arrives while the processor holds its first row finds no conflict once that
row is deleted and is queued again; processing it then finds the incident stored
(`store_incidents` is idempotent on event_id), answers nothing and deletes it.

In gunicorn workers the group committer (`committer.py`, RCA_INBOX_GROUP_COMMIT, the
default) gathers a process's concurrent requests into one INSERT and one commit. With
RCA_INBOX_GROUP_COMMIT=false each request thread writes on its own connection instead
(`enable_direct_commit`): the prepared INSERT through psycopg's cursor, autocommitted, one
round trip, no per-request health check (a connection idle for IDLE_PING_SECONDS is pinged
first, so a database restarted meanwhile does not cost the next request a spool). Which is
cheaper depends on how many requests are in flight (issue 19, docs/MEASUREMENTS.md): with
4 threads a worker the committer's two hand-offs per request cost more than the shared
statement saved (2026-12-06 12:00); with 16 (`make run`'s now), 32 backends committing at
once spent 1.2 ms of PostgreSQL CPU per single request contending for the WAL, the
committer 0.05 ms, with ~11 requests per WAL flush against ~3 (2026-12-06 15:00).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple, cast

import psycopg
from django.db import ProgrammingError, connection
from django.db.backends.base.base import BaseDatabaseWrapper

from ingest.inbox.committer import Committer
from ingest.inbox.records import Record, payload_text
from ingest.models import InboxItem, Incident

#: The channel the accept notifies and the processor LISTENs on.
CHANNEL = "rca_inbox"

#: The statement's name on every connection that prepared it (`_insert`).
PREPARED = "rca_inbox_insert"
_PREPARE = f"""
PREPARE {PREPARED} (text) AS
WITH ins AS (
    INSERT INTO {InboxItem._meta.db_table}
           (project_id, source, event_id, payload, received_at, error)
    SELECT r.project_id, r.source, r.event_id, r.payload, r.received_at, ''
      FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (
               project_id bigint, source text, event_id text, payload jsonb,
               received_at timestamptz)) WITH ORDINALITY
           AS r (project_id, source, event_id, payload, received_at, n)
     WHERE NOT EXISTS (SELECT 1 FROM {Incident._meta.db_table} i
                        WHERE i.project_id = r.project_id AND i.event_id = r.event_id)
     ORDER BY r.n
    ON CONFLICT (project_id, event_id) DO NOTHING
    RETURNING id, project_id, event_id
)
SELECT id, project_id, event_id FROM ins
"""  # noqa: S608 - table names are ours; values are parameters
_EXECUTE = f"EXECUTE {PREPARED} (%s)"
#: The database connections (psycopg's) on which `_PREPARE` ran; a new one prepares anew.
_prepared_on: weakref.WeakSet[object] = weakref.WeakSet()

#: Seconds between two wake-ups sent by one process (the processor's grace polls match).
WAKE_EVERY = 0.05
_last_wake = 0.0
_wake_lock = threading.Lock()


InsertedRow = tuple[int, int, str]  # (id, project_id, event_id) of an inserted row


class Inserted(NamedTuple):
    id: int
    project_id: int
    event_id: str


#: This process's group committer, once `enable_group_commit()` ran (gunicorn workers).
_committer: Committer | None = None
#: Whether request threads write on their own connections (`enable_direct_commit()`).
_direct = False
#: Seconds a thread's connection may sit idle before a direct write pings it first.
IDLE_PING_SECONDS = 5.0
_thread = threading.local()  # when this thread's connection last wrote (`used_at`)


def enable_group_commit(threads: int = 0) -> None:
    """Write through this process's group committer (`committer.py`): concurrent requests
    share an INSERT, its round trip and its WAL flush. `threads`: requests the process
    serves at once (gunicorn's threads per worker), the most a commit can gather."""
    global _committer
    _committer = Committer(_insert_direct, wake, threads)


def enable_direct_commit() -> None:
    """Write each request's records on its own thread's connection, through psycopg's cursor
    and without Django's per-request health check (module docstring)."""
    global _direct
    _direct = True


def expecting() -> contextlib.AbstractContextManager[None]:
    """Around an ingest request: with group commit on, a leader may wait for it to queue its
    records before committing (`Committer.expecting`); elsewhere nothing."""
    if _committer is None:
        return contextlib.nullcontext()
    return _committer.expecting()


def not_writing() -> None:
    """Inside `expecting()`: this request writes nothing to the inbox (spooled first)."""
    if _committer is not None:
        _committer.not_coming()


def write(records: Sequence[Record]) -> list[Inserted]:
    """Insert `records` into the inbox (committed, durable, when this returns); the rows
    inserted, each event id once. Raises the database's OperationalError when it is away.
    Inside a caller's transaction the rows are the transaction's (seen at its commit)."""
    if not records:
        return []
    if _committer is not None and not connection.in_atomic_block:
        return [Inserted(*row) for row in _committer.write(records)]
    if _direct and not connection.in_atomic_block:
        return [Inserted(*row) for row in _write_direct(records)]
    inserted = [Inserted(*row) for row in _insert(records)]
    if inserted and not connection.in_atomic_block:  # in a transaction: seen at its commit
        wake()
    return inserted


def document(records: Sequence[Record]) -> str:
    """The statement's one parameter: the records as a JSON array, each payload's text
    spliced in as `make_records` encoded it (never encoded twice)."""
    rows = []
    for r in records:
        head = json.dumps(
            {
                "project_id": r["project_id"],
                "source": r["source"],
                "event_id": r["event_id"],
                "received_at": r["received_at"],
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )
        rows.append(f'{head[:-1]},"payload":{payload_text(r["payload"])}}}')
    return f"[{','.join(rows)}]"


def _insert(records: Sequence[Record], conn: BaseDatabaseWrapper = connection) -> list[InsertedRow]:
    """The one statement on this thread's connection (or `conn`), through Django's cursor."""
    with conn.cursor() as cursor:
        return _execute(conn, cursor, document(records))


def _insert_direct(records: Sequence[Record], conn: BaseDatabaseWrapper) -> list[InsertedRow]:
    """The group committer's insert, on its own connection, through psycopg's cursor: Django's
    cursor wrapper cost ~40 us of CPU per statement (210 -> 165 us with the commit's wait),
    and nothing logs or counts queries on that connection. Errors are still Django's."""
    conn.ensure_connection()
    with conn.wrap_database_errors, conn.connection.cursor() as cursor:
        return _execute(conn, cursor, document(records))


def _write_direct(records: Sequence[Record]) -> list[InsertedRow]:
    """The prepared INSERT on this thread's connection, autocommitted; then the wake-up."""
    now = time.monotonic()
    if now - getattr(_thread, "used_at", 0.0) >= IDLE_PING_SECONDS and (
        connection.connection is not None and not connection.is_usable()
    ):
        with contextlib.suppress(Exception):
            connection.close()  # the database went away meanwhile: connect afresh
    rows = _insert_direct(records, connection)
    _thread.used_at = time.monotonic()
    if rows:
        wake()
    return rows


def _execute(conn: BaseDatabaseWrapper, cursor: Any, rows: str) -> list[InsertedRow]:
    """Run the prepared statement for the document `rows`, preparing it once per connection:
    PostgreSQL plans it once, not per request (Django's cursors bind client-side, and
    psycopg prepares nothing for them).

    The statement can vanish behind our back: a pooler's DISCARD ALL, or psycopg's own
    DEALLOCATE ALL after a ROLLBACK on a connection where it holds prepared statements of
    its own (`ingest/prepared.py`). Outside a transaction a failed EXECUTE is prepared and
    run again. Inside one a failed statement would abort the caller's transaction, so on a
    connection where psycopg prepares (its prepare_threshold is set) the name is looked up
    first; elsewhere nothing deallocates it within a transaction, and the normal path stays
    one round trip."""
    raw = conn.connection
    if raw not in _prepared_on or (
        conn.in_atomic_block and raw.prepare_threshold is not None and not _exists(cursor)
    ):
        cursor.execute(_PREPARE)
        _prepared_on.add(raw)
    try:
        cursor.execute(_EXECUTE, [rows])
    except (ProgrammingError, psycopg.errors.InvalidSqlStatementName) as exc:
        # deallocated behind our back (DISCARD ALL)
        if conn.in_atomic_block or not _is_unknown_statement(exc):
            raise
        cursor.execute(_PREPARE)
        cursor.execute(_EXECUTE, [rows])
    return [(int(i), int(p), str(e)) for i, p, e in cursor.fetchall()]


def _exists(cursor: Any) -> bool:
    """Whether this session holds the prepared statement (one round trip)."""
    cursor.execute("SELECT 1 FROM pg_prepared_statements WHERE name = %s", [PREPARED])
    return cursor.fetchone() is not None


def _is_unknown_statement(exc: BaseException) -> bool:
    unknown = psycopg.errors.InvalidSqlStatementName
    return isinstance(exc, unknown) or isinstance(exc.__cause__, unknown)


def wake(conn: BaseDatabaseWrapper = connection) -> None:
    """NOTIFY the processor, unless this process did less than WAKE_EVERY seconds ago."""
    global _last_wake
    now = time.monotonic()
    with _wake_lock:
        if now - _last_wake < WAKE_EVERY:
            return
        _last_wake = now
    with conn.cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, '')", [CHANNEL])


def replay_write(records: list[dict[str, Any]]) -> None:
    """Spooled records into the inbox, exactly once (event ids; the statement skips any
    already queued or stored): `spool_first.store`'s way out for records it cannot store."""
    write(cast(list[Record], records))
