"""The inbox insert: one statement per request, idempotent on (project, event_id).

It skips event ids already stored as incidents or already waiting in the inbox (a retry
is not queued twice), returns the rows it inserted and wakes the processor with a
`pg_notify` on `CHANNEL` (delivered at commit; identical notifications of one transaction
are folded into one). The rows travel as one JSON document, as in `ingest/bulk_insert.py`.
The spool replays records through the same statement, so a record written during an
outage and retried by its client meanwhile is still queued once.

A retry that arrives while the processor holds its first row finds no conflict once that
row is deleted and is queued again; processing it then finds the incident stored
(`store_incidents` is idempotent on event_id), answers nothing and deletes it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple, cast

from django.db import connection

from ingest.inbox.records import Record
from ingest.models import InboxItem, Incident

#: The channel the accept notifies and the processor LISTENs on.
CHANNEL = "rca_inbox"

_INSERT = f"""
WITH ins AS (
    INSERT INTO {InboxItem._meta.db_table}
           (project_id, source, event_id, payload, received_at, error)
    SELECT r.project_id, r.source, r.event_id, r.payload, r.received_at, ''
      FROM ROWS FROM (jsonb_to_recordset(%(rows)s::jsonb) AS (
               project_id bigint, source text, event_id text, payload jsonb,
               received_at timestamptz)) WITH ORDINALITY
           AS r (project_id, source, event_id, payload, received_at, n)
     WHERE NOT EXISTS (SELECT 1 FROM {Incident._meta.db_table} i
                        WHERE i.project_id = r.project_id AND i.event_id = r.event_id)
     ORDER BY r.n
    ON CONFLICT (project_id, event_id) DO NOTHING
    RETURNING id, project_id, event_id
)
SELECT id, project_id, event_id, pg_notify(%(channel)s, '')::text FROM ins
"""  # noqa: S608 - table names are ours; values are parameters


class Inserted(NamedTuple):
    id: int
    project_id: int
    event_id: str


def write(records: Sequence[Record]) -> list[Inserted]:
    """Insert `records` into the inbox (autocommit: durable when this returns); the rows
    inserted, each event id once. Raises the database's OperationalError when it is away."""
    if not records:
        return []
    document = json.dumps(list(records), ensure_ascii=False, separators=(",", ":"))
    with connection.cursor() as cursor:
        cursor.execute(_INSERT, {"rows": document, "channel": CHANNEL})
        return [Inserted(int(i), int(p), str(e)) for i, p, e, _ in cursor.fetchall()]


def replay_write(records: list[dict[str, Any]]) -> None:
    """`ingest.spool.replay`'s writer: the spooled records into the inbox, exactly once
    (event ids; the statement skips any already queued or stored)."""
    write(cast(list[Record], records))
