"""Our prepared statements are planned for the tables as they are now, not as they were.

Issue 19: the inbox INSERT (`ingest/inbox/write.py`) and the processor's statements
(`ingest/prepared.py`) are prepared once per connection, so PostgreSQL parses them once.
By default it then settles on a generic plan after five executions, made with the table
sizes of that moment, and keeps it until something invalidates it (autovacuum's ANALYZE,
which runs a minute or more later). On a new install, or once retention (or a bench) has
emptied `ingest_incident`, the INSERT's "is this event id already stored" check is best
done as a hash anti-join over a sequential scan of the tiny table, and that plan stayed
while the table grew: every accept then read the whole incidents table. Measured on a new
cluster, one `BENCH_STORM=0 bench/ingest.py` run: 1,132 sequential scans of
`ingest_incident` reading 3.2M rows, the single path's rounds falling from 0.69x to 0.38x
the floor within the run; planned per execution, 301 scans reading 0.24M rows (the ORM's
own statements on a small table) and flat rounds.

`force_custom_plan` plans each execution with the table sizes of the moment (PostgreSQL
reads a table's current size at planning time); the parse is still saved. It is set on
every new connection: Django's own statements bind client-side and are planned anew each
time anyway, so only our prepared ones change. A pooler that runs `DISCARD ALL` between
clients resets it, as it deallocates the statements themselves.
"""

from __future__ import annotations

from typing import Any

#: Run on each new connection: plan prepared statements per execution.
SET_CUSTOM_PLANS = "SET plan_cache_mode = force_custom_plan"


def plan_each_execution(sender: Any, connection: Any, **kwargs: Any) -> None:
    """`connection_created` receiver: a new PostgreSQL connection plans per execution.
    Django connects in autocommit mode, so the setting lasts for the session."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(SET_CUSTOM_PLANS)
