"""Run a statement of fixed text as a server-side prepared statement (issue 19).

Django binds parameters client-side and turns psycopg's preparing off (prepare_threshold
None, for connection poolers), so PostgreSQL parses and plans every statement anew. For
the statements the inbox processor runs on every claim that was about a fifth of the
database's CPU per incident (log_statement_stats at claims of 10: the issue upsert 54 ->
31 us per incident, the claim 38 -> 13, the stored-ids lookup 16 -> 8 when prepared).

`fetch` sends its statement through a psycopg cursor that binds server-side with
`prepare=True`: psycopg prepares it once per connection (named after the text and the
parameters' types; a new connection prepares anew, and psycopg deallocates what it
prepared when a ROLLBACK or DISCARD ALL passes through it). The connection's
prepare_threshold is set from None to a count never reached, which only allows these
explicit requests: Django's cursors bind client-side and prepare nothing whatever the
threshold. Errors are Django's, as from its cursors, and a broken transaction is refused
as they refuse it; nothing is logged or counted as a query (like `ingest/inbox/write.py`'s
insert on the committer's connection).

Only for statements whose parameters carry their types (ints, arrays, or a cast): a
parameter PostgreSQL must guess (`SELECT %s`) fails to prepare.
"""

from __future__ import annotations

from typing import Any

import psycopg
from django.db import connection

#: Executions before psycopg prepares a statement by itself: never (only `prepare=True`).
_ONLY_WHEN_ASKED = 2**62


def fetch(sql: str, params: Any, *, health_check: bool = True) -> list[tuple[Any, ...]]:
    """Execute `sql` with `params`, prepared; the rows it returns (none: []). Without
    `health_check` no `SELECT 1` goes first on a request's first statement: for a caller
    that sends a read again on a new connection when this one fails."""
    if health_check:
        connection.close_if_health_check_failed()  # what Django's cursor() does first
    connection.ensure_connection()
    connection.validate_no_broken_transaction()
    raw = connection.connection
    if raw.prepare_threshold is None:
        raw.prepare_threshold = _ONLY_WHEN_ASKED
    with connection.wrap_database_errors, psycopg.Cursor(raw) as cursor:
        cursor.execute(sql, params, prepare=True)
        return cursor.fetchall() if cursor.description is not None else []
