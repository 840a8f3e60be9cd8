"""Spool first: incidents are accepted into the on-disk spool, not the inbox table.

Issue 19: per accepted and stored incident our processes spent 2-3x the CPU of a
`GET /healthz`; the inbox's durable INSERT and commit in the request (the web's database
backend, the wait for the commit's WAL flush and the wake-ups around it) and the
processor's claim and DELETE were a large part. Spooled first, the endpoints write their
records to this process's spool file (`ingest.spool`, one fdatasync shared by the
requests written before it: `directory._File.sync`) and answer; the processor stores them
from the spool (`store`) in one transaction per chunk, with no inbox row written, claimed
or deleted.

Which paths: Sentry events under RCA_SPOOL_FIRST or the older RCA_SENTRY_SPOOL_FIRST
(their answer is the same for a new event and a retry, 200 with its id); the JSON API's
one-incident post under RCA_SPOOL_FIRST. That one answers a new incident 202 and a retry
200, which the inbox's unique index told apart; spooled first, a claim file per event id
in the spool directory tells it across the host's processes (`claims.py`, which also says
what holds with several hosts), and a request that wins a claim asks the database once
(`stored`) whether the incident is stored already. Batches keep the inbox (one INSERT
for the lot is already cheaper than a raw insert loop).

What still holds:
- durability before the answer: `append` returns after the fdatasync; a crash before
  the processor stored the records leaves them in the file, replayed later; storing is
  idempotent on event ids (a record stored and then replayed again is skipped);
- nothing unscrubbed is visible: the files are the process's own (mode 0600), read by
  the processor only, which scrubs while storing;
- the inbox bound (`backlog.full`) counts the spooled records of this host too, and the
  spool's count is on /metrics (`rootcause_spool_records`) and the timeline;
- a processor must see every web process's RCA_SPOOL_DIR (docker-compose mounts the
  `spool` volume in both), as for the spool kept during an outage;
- RCA_INGEST_INLINE (tests) stores in the request as before: spool first is off there.
A record that cannot be stored (`store` fails for a reason other than the database)
goes into the inbox table instead, where the processor's poison-row handling takes it.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction

from ingest.models import InboxItem, Incident
from ingest.sentry.deferred import RAW_SOURCE, STORED_SOURCE

log = logging.getLogger(__name__)


def enabled() -> bool:
    """Whether anything is spooled first: RCA_SPOOL_FIRST (both paths) or the older
    RCA_SENTRY_SPOOL_FIRST (Sentry only), and not RCA_INGEST_INLINE (requests store their
    own there)."""
    return (json_enabled() or bool(getattr(settings, "RCA_SENTRY_SPOOL_FIRST", False))) and (
        not settings.RCA_INGEST_INLINE
    )


def json_enabled() -> bool:
    """RCA_SPOOL_FIRST: one-incident JSON posts are spooled first too (with claims)."""
    return bool(getattr(settings, "RCA_SPOOL_FIRST", False)) and not settings.RCA_INGEST_INLINE


def applies(source: str, *, single: bool = False) -> bool:
    """Whether records of `source` are spooled first: Sentry events when `enabled`, the
    JSON API's one-incident posts (`single`) when `json_enabled`."""
    if source in (STORED_SOURCE, RAW_SOURCE):  # Sentry events, mapped or not yet
        return enabled()
    return single and source == "api" and json_enabled()


def wake() -> None:
    """Tell the processor (at most every `write.WAKE_EVERY` per process); a database that is
    away only delays it to the processor's next poll."""
    from ingest.inbox.write import wake as notify

    with contextlib.suppress(OperationalError, InterfaceError):
        notify()


_STORED = f"""
SELECT id, issue_id FROM {Incident._meta.db_table}
 WHERE project_id = %s::bigint AND event_id = %s::text
UNION ALL
SELECT NULL, NULL FROM {InboxItem._meta.db_table}
 WHERE project_id = %s::bigint AND event_id = %s::text
LIMIT 1
"""  # noqa: S608 - table names are ours


def stored(project_id: int, event_id: str) -> tuple[int | None, int | None] | None:
    """(incident id, issue id) when the event id is stored, (None, None) when it waits in
    the inbox table, None when neither: one indexed, prepared SELECT (both unique indexes).

    Without Django's per-request health check (a `SELECT 1` first): a connection that
    turns out broken is closed and the statement sent once more on a new one."""
    from ingest import prepared

    params = [project_id, event_id, project_id, event_id]
    for attempt in (1, 2):
        try:
            rows = prepared.fetch(_STORED, params, health_check=False)
        except (OperationalError, InterfaceError):
            if attempt == 2 or connection.in_atomic_block:
                raise
            connection.close()
            continue
        return (rows[0][0], rows[0][1]) if rows else None
    raise AssertionError("unreachable")


def waiting() -> int:
    """Records in this host's spool (for the inbox's bound)."""
    from ingest import spool

    return int(spool.count())


def store(records: Sequence[Mapping[str, Any]]) -> None:
    """The processor's replay writer: store spooled records (in order) in one transaction,
    idempotent on event ids; records that cannot be stored go to the inbox instead."""
    from ingest.inbox.process import Row, project_rows, store_rows
    from ingest.inbox.write import replay_write

    rows = []
    for r in records:
        payload = r["payload"]
        text = payload if isinstance(payload, str) else None
        rows.append(
            Row(
                0,
                int(r["project_id"]),
                str(r["source"]),
                str(r["event_id"]),
                json.loads(text) if text is not None else payload,
                text,
            )
        )
    try:
        with transaction.atomic():
            projects = project_rows({row.project_id for row in rows})
            gone = [row for row in rows if row.project_id not in projects]
            if gone:  # a project deleted since: its incidents went with it
                log.warning("dropped %d spooled records of deleted projects", len(gone))
            store_rows([row for row in rows if row.project_id in projects], projects)
    except (OperationalError, InterfaceError):
        raise
    except Exception as exc:  # no traceback: it may quote unscrubbed text
        log.warning("storing %d spooled records failed (%s); via the inbox", len(rows), type(exc))
        replay_write([dict(r) for r in records])  # stored or queued there: the index answers
    release_claims(rows)


def release_claims(rows: Sequence[Any]) -> None:
    """After the commit that stored them: the JSON records' claims (`claims.py`) go, and
    the database's unique index answers their retries from now on."""
    keys = [(row.project_id, row.event_id) for row in rows if row.source == "api"]
    if keys:
        from ingest.inbox import claims

        claims.release(settings.RCA_SPOOL_DIR, keys)
