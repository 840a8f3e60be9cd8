"""Receive what a Sentry SDK sends (envelope or legacy store) and accept it as incidents.

Accepted means written to the inbox (`ingest/inbox/`): the answer names each event id at
once, and the processor stores the incidents after, as Sentry's Relay does.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from ingest import keys, ratelimit
from ingest.batch import max_items
from ingest.inbox.accept import InboxUnavailable, accept
from ingest.sentry.accept import RejectedEvent, accept_events
from ingest.sentry.auth import public_key_from_request
from ingest.sentry.deferred import RAW_SOURCE
from ingest.sentry.envelope import (
    DroppedItem,
    Envelope,
    EnvelopeError,
    EnvelopeTooLarge,
    Item,
    decode_body,
    decode_head,
    load_json,
    read_envelope,
    read_header,
)


class SentryRefused(Exception):
    """Why a Sentry request was refused, as (status, loc, message)."""

    def __init__(self, status: int, loc: list[str | int], msg: str, retry_after: int = 0) -> None:
        super().__init__(msg)
        self.status, self.loc, self.msg, self.retry_after = status, loc, msg, retry_after


@dataclass
class Received:
    event_ids: list[str] = field(default_factory=list)
    rejected: list[RejectedEvent] = field(default_factory=list)
    dropped: list[DroppedItem] = field(default_factory=list)  # items over their size limit


log = logging.getLogger(__name__)


def _header(kind: str, body: bytes, encoding: str | None) -> dict[str, Any]:
    """The envelope header, the one part read before the key is checked: only its line is
    decompressed (``decode_head``), so a stranger's bomb costs 64 KiB, not the budget."""
    if kind == "store":
        return {}
    try:
        return read_header(decode_head(body, encoding))
    except EnvelopeError as exc:
        raise SentryRefused(400, exc.loc, str(exc)) from None


def _decoded(kind: str, body: bytes, encoding: str | None) -> bytes:
    """The whole body decoded within its limit (an envelope, or one event for store)."""
    max_bytes = (
        settings.RCA_SENTRY_MAX_ENVELOPE_BYTES
        if kind == "envelope"
        else settings.RCA_SENTRY_MAX_ITEM_BYTES
    )
    try:
        return decode_body(body, encoding, max_bytes)
    except EnvelopeError as exc:
        status = 413 if isinstance(exc, EnvelopeTooLarge) else 400
        raise SentryRefused(status, exc.loc, str(exc)) from None


def _envelope(kind: str, data: bytes) -> Envelope:
    """Split the body into items without parsing them (a store body is one event item)."""
    if kind == "store":
        return Envelope({}, [Item({"type": "event"}, data, 0)])
    try:
        return read_envelope(data, settings.RCA_SENTRY_MAX_ITEM_BYTES)
    except EnvelopeError as exc:
        raise SentryRefused(400, exc.loc, str(exc)) from None


def _events(kind: str, envelope: Envelope) -> list[Any]:
    """Parse the event items (depth-checked); called once the key is known to be good."""
    events = []
    for item in envelope.items:
        if item.header.get("type") != "event":
            continue  # sessions, client reports, transactions, attachments: not incidents
        loc: list[str | int] = ["body"] if kind == "store" else ["body", "items", item.position]
        what = "body" if kind == "store" else f"item {item.position} (event)"
        try:
            event = load_json(item.payload, what, loc)
        except EnvelopeError as exc:
            raise SentryRefused(400, exc.loc, str(exc)) from None
        if kind == "store" and not isinstance(event, dict):
            raise SentryRefused(400, ["body"], "body must be a JSON object (a Sentry event)")
        events.append(event)  # an envelope's non-object event is refused by accept_events
    return events


def _spend_for_events(project_id: int, envelope: Envelope) -> None:
    """One rate-limit token per event item, as a batch spends one per incident (the first
    was spent before decoding), and at most a batch's worth of events in one envelope.
    SDKs send one event an envelope; without this, one request under one token stored as
    many events as 20 MiB holds (20,000 took 9 s to store)."""
    events = [item.position for item in envelope.items if item.header.get("type") == "event"]
    if len(events) > (most := max_items()):
        raise SentryRefused(
            400,
            ["body", "items", events[most]],
            f"{len(events)} event items; an envelope may carry at most {most} "
            "(Sentry SDKs send one per envelope)",
        )
    if len(events) > 1:
        limit = ratelimit.take(f"sentry:{project_id}", len(events) - 1)
        if not limit.allowed:
            raise SentryRefused(429, [], "rate limit exceeded", retry_after=limit.retry_after)


def _refuse_if_only_dropped(envelope: Envelope, stored_any: bool) -> None:
    """An event item over its limit that leaves nothing stored is a 413, never a silent 200."""
    events = [d for d in envelope.dropped if d["type"] == "event"]
    if events and not stored_any:
        raise SentryRefused(413, ["body", "items", events[0]["item"]], events[0]["msg"])


def receive(
    project_id: int,
    kind: str,
    body: bytes,
    headers: Mapping[str, str],
    query: Mapping[str, str],
) -> Received:
    """Authenticate by the DSN's public key, decode, map and accept every event item."""
    # The X-Sentry-Auth header and the query win over the envelope header's DSN (see
    # ingest/sentry/auth.py), so the body is read before the key only when they carry none.
    public_key = public_key_from_request(headers, query, {}) or public_key_from_request(
        headers, query, _header(kind, body, headers.get("Content-Encoding"))
    )
    if not public_key:
        raise SentryRefused(401, ["header", "X-Sentry-Auth"], "missing sentry_key (use the DSN)")
    project = keys.project_for_sentry_key(project_id, public_key)  # cached for outages
    if project is None:
        raise SentryRefused(401, ["header", "X-Sentry-Auth"], "unknown DSN key for this project")
    limit = ratelimit.take(f"sentry:{project.pk}")
    if not limit.allowed:
        raise SentryRefused(429, [], "rate limit exceeded", retry_after=limit.retry_after)
    envelope = _envelope(kind, _decoded(kind, body, headers.get("Content-Encoding")))
    _spend_for_events(project.pk, envelope)
    events = _events(kind, envelope)
    if envelope.dropped:
        log.warning(
            "sentry project %s: dropped items over their limit: %s", project.pk, envelope.dropped
        )

    accepted = accept_events(events, envelope.header.get("event_id"))
    if accepted.rejected and not accepted.payloads:
        reasons = "; ".join(f"event {r['item']}: {r['msg']}" for r in accepted.rejected)
        raise SentryRefused(400, ["body", "event"], f"nothing stored: {reasons}"[:1000])
    _refuse_if_only_dropped(envelope, bool(accepted.payloads))
    try:
        outcomes = accept(project, accepted.payloads, source=RAW_SOURCE)
    except InboxUnavailable as exc:
        raise SentryRefused(exc.status, [], exc.msg, retry_after=exc.retry_after) from None
    return Received([one.event_id for one in outcomes], accepted.rejected, envelope.dropped)
