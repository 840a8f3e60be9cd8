"""Accept validated incidents: write them to the inbox and say what each one became.

The request's part of accept-then-process (see the package docstring). Each incident is
`created` (queued now: the answer is 202) or a retry of an event id already queued or
stored (200). Its incident and issue ids are known only once it is stored: at once under
`RCA_INGEST_INLINE` (the request processes its own rows before answering, as tests do),
later otherwise, when the answer carries null ids and clients find the incident by its
event id (`GET /api/v1/incidents?event_id=`).

When the database is away, the records go to the on-disk spool (`ingest.spool`) and are
answered as queued; the processor replays them once it is back.

Sentry events and one-incident JSON posts go to the spool first under RCA_SPOOL_FIRST
(`spool_first.py` says what holds; RCA_SENTRY_SPOOL_FIRST: Sentry events only): no inbox
INSERT or commit in the request; the processor stores them straight from the spool. A
JSON post first takes its event id's claim (`claims.py`): held by an accepted copy, the
answer is 200; won, one indexed SELECT says whether the incident is stored (200, with its
ids) or new (spooled, 202). A full spool, or no spool
at all, is `InboxUnavailable`: a 503 with Retry-After. An inbox holding more waiting rows
than RCA_INBOX_MAX_ROWS (`backlog.py`) is `InboxFull`: a 429 with Retry-After, nothing
accepted, checked before anything is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError

from ingest.inbox import backlog, claims, spool_first
from ingest.inbox.process import process_pending
from ingest.inbox.records import Record, make_records
from ingest.inbox.write import not_writing, write
from ingest.models import Incident, Project

#: Seconds a client is asked to wait when nothing could take its incidents.
UNAVAILABLE_RETRY_AFTER = 30


class InboxUnavailable(Exception):
    """Neither the database nor the spool took the incidents; nothing was accepted.
    `status` is the HTTP status the endpoints answer with (always with Retry-After)."""

    status = 503

    def __init__(self, msg: str, retry_after: int) -> None:
        super().__init__(msg)
        self.msg, self.retry_after = msg, retry_after


class InboxFull(InboxUnavailable):
    """More rows wait for the processor than RCA_INBOX_MAX_ROWS; nothing was accepted."""

    status = 429


@dataclass
class Outcome:
    """What one accepted incident became; the ids are None until it is stored."""

    event_id: str
    created: bool  # queued by this request (202); False: a retry of one queued or stored (200)
    incident_id: int | None = None
    issue_id: int | None = None


def _spool(records: list[Record]) -> None:
    try:
        from ingest import spool
    except ImportError:
        raise InboxUnavailable(
            "the database is unavailable; retry later", UNAVAILABLE_RETRY_AFTER
        ) from None
    try:
        spool.append(list(records))
    except spool.SpoolFull as full:
        raise InboxUnavailable(
            "the database is unavailable and the spool is full; retry later",
            int(getattr(full, "retry_after", UNAVAILABLE_RETRY_AFTER)),
        ) from None


def _spooled(records: list[Record]) -> list[Outcome]:
    """Outcomes of spooled records: the spool cannot tell a retry from a new one (the
    processor's store will, by event id); the same id twice in a request is a retry."""
    seen: set[str] = set()
    outcomes = []
    for r in records:
        outcomes.append(Outcome(r["event_id"], created=r["event_id"] not in seen))
        seen.add(r["event_id"])
    return outcomes


def _claimed_and_spooled(project: Project, record: Record) -> Outcome:
    """One JSON incident spooled first: new (202) unless this host holds a claim on its
    event id (`claims.py`: accepted, not yet stored) or the database has it (200)."""
    event_id = record["event_id"]
    claim = claims.take(settings.RCA_SPOOL_DIR, project.pk, event_id)
    if claim is None:  # accepted by another request, waiting in the spool
        return Outcome(event_id, created=False)
    try:
        if claim.new:
            try:
                known = spool_first.stored(project.pk, event_id)
            except (OperationalError, InterfaceError):
                known = None  # the database is away: spool it (stored once, by event id)
            if known is not None:
                claim.abandon()  # the index answers this event id from now on
                return Outcome(event_id, False, *known)
        _spool([record])
    except BaseException:
        claim.abandon()
        raise
    claim.accepted()
    spool_first.wake()
    return Outcome(event_id, created=claim.new)  # not new: took over a claim left unconfirmed


def accept(
    project: Project,
    payloads: Sequence[dict[str, Any]],
    *,
    source: str = "api",
    idempotency_keys: Sequence[str | None] | None = None,
    single: bool = False,
) -> list[Outcome]:
    """Queue validated payloads (snake_case dicts) for processing; one outcome each, in order.
    `single`: the JSON API's one-incident post (spooled first under RCA_SPOOL_FIRST)."""
    if not settings.RCA_INGEST_INLINE and backlog.full():
        raise InboxFull(
            "too many incidents are waiting to be processed; retry later", backlog.RETRY_AFTER
        )
    records = make_records(project.pk, source, payloads, idempotency_keys)
    if single and len(records) == 1 and spool_first.applies(source, single=True):
        not_writing()
        return [_claimed_and_spooled(project, records[0])]
    if spool_first.applies(source):
        not_writing()  # a gathering inbox commit need not wait for this request
        _spool(records)
        spool_first.wake()
        return _spooled(records)
    try:
        inserted = write(records)
    except (OperationalError, InterfaceError):
        _spool(records)
        return _spooled(records)
    new = {row.event_id for row in inserted}
    if settings.RCA_INGEST_INLINE and inserted:
        process_pending(len(inserted), only=[row.id for row in inserted])
    wanted = {r["event_id"] for r in records}
    if not settings.RCA_INGEST_INLINE:
        wanted -= new  # queued just now: not stored yet
    stored = (
        {
            event_id: (pk, issue_id)
            for event_id, pk, issue_id in Incident.objects.filter(
                project=project, event_id__in=wanted
            ).values_list("event_id", "pk", "issue_id")
        }
        if wanted
        else {}
    )
    outcomes = []
    for r in records:
        event_id = r["event_id"]
        created = event_id in new
        new.discard(event_id)  # the same id again in one request is a retry of the first
        incident_id, issue_id = stored.get(event_id, (None, None))
        outcomes.append(Outcome(event_id, created, incident_id, issue_id))
    return outcomes
