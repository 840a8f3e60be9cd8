"""Spool first: Sentry events are accepted into the on-disk spool, not the inbox table.

Issue 19: per accepted and stored incident our processes spent 2-3x the CPU of a
`GET /healthz`; the inbox's durable INSERT and commit in the request (the web's database
backend, the wait for the commit's WAL flush and the wake-ups around it) and the
processor's claim and DELETE were a large part. With RCA_SENTRY_SPOOL_FIRST on, the
Sentry endpoints write their records to this process's spool file (`ingest.spool`, one
fdatasync shared by the requests written before it: `directory._File.sync`) and answer;
the processor stores them from the spool (`store`) in one transaction per chunk, with no
inbox row written, claimed or deleted.

Why only Sentry events: the Sentry answer is the same for a new event and a retry (200
with its id), so the request need not know whether the event id was seen. The JSON API
answers a retry 200 and a new incident 202, which needs the inbox's unique index: a
spool file cannot tell a retry that reached another web process or host.

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
from django.db import InterfaceError, OperationalError, transaction

log = logging.getLogger(__name__)


def enabled() -> bool:
    """RCA_SENTRY_SPOOL_FIRST, and not RCA_INGEST_INLINE (where requests store their own)."""
    return bool(getattr(settings, "RCA_SENTRY_SPOOL_FIRST", False)) and not bool(
        settings.RCA_INGEST_INLINE
    )


def applies(source: str) -> bool:
    """Whether records of `source` are spooled first (Sentry events, when `enabled`)."""
    return source == "sentry" and enabled()


def wake() -> None:
    """Tell the processor (at most every `write.WAKE_EVERY` per process); a database that is
    away only delays it to the processor's next poll."""
    from ingest.inbox.write import wake as notify

    with contextlib.suppress(OperationalError, InterfaceError):
        notify()


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
        replay_write([dict(r) for r in records])
