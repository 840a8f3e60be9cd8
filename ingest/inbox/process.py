"""Process the inbox: claim rows, store them as incidents, delete them, in one transaction.

`process_pending` is the whole of the processor's work; `runner.py` only calls it in a
loop. Claims are `FOR UPDATE SKIP LOCKED` in id order, so any number of processors share
the inbox without waiting on each other, and the oldest rows go first; while a backlog
exists the runner also claims the newest few (`newest_first`), so a failure posted after a
storm is stored in the next turn instead of after the whole storm (the first occurrence
of a new issue is what the on-call needs first, issue 22). The rows are stored
through `ingest.store.store_incidents` (scrub, parse, group, insert; the
`incidents_stored` seam fires inside it, as on the synchronous path) and deleted before
the transaction commits: a crash at any point either commits both or neither, and storing
is idempotent on event_id, so nothing is lost and nothing is stored twice.

A row that cannot be stored on its own (a bug meeting an odd payload) must not block the
rows behind it: when a claim fails, its rows are stored one at a time, and a row that
still fails is marked failed (`failed_at`, `error`), kept and counted on /metrics. An
outage of the database is not such a failure: it propagates, and the claim is retried.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import InterfaceError, OperationalError, connection, transaction

from ingest.inbox.records import storable_with_text
from ingest.models import InboxItem, Project
from ingest.prepared import fetch
from ingest.sentry import deferred
from ingest.store import store_incidents

log = logging.getLogger(__name__)

_TABLE = InboxItem._meta.db_table
_CLAIM = f"""
SELECT id, project_id, source, event_id, payload FROM {_TABLE}
 WHERE failed_at IS NULL {{only}}
 ORDER BY id {{order}} LIMIT %(limit)s
   FOR UPDATE SKIP LOCKED
"""  # noqa: S608 - the table name is ours; values are parameters
_DELETE = f"DELETE FROM {_TABLE} WHERE id = ANY(%s)"  # noqa: S608
_FAIL = f"UPDATE {_TABLE} SET failed_at = now(), error = %s WHERE id = %s"  # noqa: S608
_PROJECT_FIELDS = [f.attname for f in Project._meta.concrete_fields]
_PROJECTS = (
    f"SELECT {', '.join(str(f.column) for f in Project._meta.concrete_fields)}"  # noqa: S608
    f" FROM {Project._meta.db_table} WHERE id = ANY(%s)"
)


@dataclass
class Row:
    id: int
    project_id: int
    source: str
    event_id: str
    payload: dict[str, Any]
    text: str | None  # the payload's JSON document as the database returned it


def _claim(limit: int, only: Sequence[int] | None, newest_first: bool = False) -> list[Row]:
    sql = _CLAIM.format(
        only="AND id = ANY(%(only)s)" if only is not None else "",
        order="DESC" if newest_first else "",
    )
    rows = fetch(sql, {"limit": limit, "only": list(only or [])})
    # Django's psycopg backend hands jsonb over as text (JSONField parses it itself).
    return [
        Row(i, p, s, e, json.loads(payload), payload)
        if isinstance(payload, str)
        else Row(i, p, s, e, payload, None)
        for i, p, s, e, payload in rows
    ]


def project_rows(ids: set[int]) -> dict[int, Project]:
    """The claimed rows' projects by id, as `in_bulk` loads them, from a plain statement:
    the ORM's building of it cost more CPU than storing a small claim's incidents."""
    with connection.cursor() as cursor:
        cursor.execute(_PROJECTS, [list(ids)])
        rows = cursor.fetchall()
    return {row[0]: Project.from_db(connection.alias, _PROJECT_FIELDS, row) for row in rows}


def _mapped(group: list[Row]) -> tuple[list[dict[str, Any]], list[str | None]]:
    """Raw Sentry events as incident payloads, mapped in one loop (`ingest.sentry.deferred`),
    each storable and with its JSON text, so scrubbing can skip what shows nothing to scrub
    and storing need not copy it through `storable` again."""
    pairs = [storable_with_text(deferred.incident_payload(row.payload)) for row in group]
    return [payload for payload, _ in pairs], [text for _, text in pairs]


def store_rows(rows: list[Row], projects: dict[int, Project]) -> None:
    """Store the rows, per project and source, in the order they were accepted."""
    groups: dict[tuple[int, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.project_id, row.source), []).append(row)
    for (project_id, source), group in groups.items():
        if source == deferred.RAW_SOURCE:
            payloads, texts = _mapped(group)
            source = deferred.STORED_SOURCE
        else:
            payloads, texts = [row.payload for row in group], [row.text for row in group]
        store_incidents(
            projects[project_id],
            payloads,
            source=source,
            idempotency_keys=[row.event_id for row in group],
            texts=texts,
        )


def _store_one_by_one(rows: list[Row], projects: dict[int, Project]) -> None:
    """After a claim failed as a whole: each row in its own savepoint; failures are marked."""
    for row in rows:
        try:
            with transaction.atomic():
                store_rows([row], projects)
        except (OperationalError, InterfaceError):
            raise
        except Exception as exc:
            # Type and first line only: a message may quote the payload, which is unscrubbed.
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            log.error(
                "inbox row %s (event %s) could not be stored: %s", row.id, row.event_id, error
            )
            with connection.cursor() as cursor:
                cursor.execute(_FAIL, [error[:500], row.id])


def process_pending(
    limit: int = 500,
    only: Sequence[int] | None = None,
    *,
    newest_first: bool = False,
) -> int:
    """Store up to `limit` waiting rows (only those of `only`, ids, when given: the inline
    mode's own rows; the newest ones when `newest_first`) and delete them; how many rows
    were claimed (0: none waiting)."""
    with transaction.atomic():
        rows = _claim(limit, only, newest_first)
        if not rows:
            return 0
        projects = project_rows({row.project_id for row in rows})
        try:
            with transaction.atomic():
                store_rows(rows, projects)
        except (OperationalError, InterfaceError):
            raise
        except Exception as exc:  # no traceback in the log: it may quote unscrubbed text
            log.warning("storing %d inbox rows failed (%s); one by one", len(rows), type(exc))
            _store_one_by_one(rows, projects)
        # Marked-failed rows stay: the delete only takes rows that are still unmarked.
        fetch(_DELETE + " AND failed_at IS NULL", [[row.id for row in rows]])
    return len(rows)
