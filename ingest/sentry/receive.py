"""Receive what a Sentry SDK sends (envelope or legacy store) and store it as incidents."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from django.conf import settings

from ingest import ratelimit
from ingest.models import Project
from ingest.sentry.accept import accept_events
from ingest.sentry.auth import public_key_from_request
from ingest.sentry.envelope import (
    EnvelopeError,
    EnvelopeTooLarge,
    decode_body,
    parse_envelope,
)
from ingest.store import store_incidents


class SentryRefused(Exception):
    """Why a Sentry request was refused, as (status, loc, message)."""

    def __init__(self, status: int, loc: list[str | int], msg: str, retry_after: int = 0) -> None:
        super().__init__(msg)
        self.status, self.loc, self.msg, self.retry_after = status, loc, msg, retry_after


@dataclass
class Received:
    event_ids: list[str] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)


def _events(kind: str, data: bytes) -> tuple[dict, list[dict]]:
    if kind == "store":
        try:
            event = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise SentryRefused(400, ["body"], f"body is not JSON: {exc}") from None
        if not isinstance(event, dict):
            raise SentryRefused(400, ["body"], "body must be a JSON object (a Sentry event)")
        return {}, [event]
    try:
        header, items = parse_envelope(data)
    except EnvelopeError as exc:
        raise SentryRefused(400, ["body"], str(exc)) from None
    events = []
    for item_header, payload in items:
        if item_header.get("type") != "event":
            continue  # sessions, client reports, transactions, attachments: not incidents
        try:
            event = json.loads(payload)
        except (ValueError, RecursionError):
            raise SentryRefused(400, ["body", "event"], "event item is not JSON") from None
        if isinstance(event, dict):
            events.append(event)
    return header, events


def receive(
    project_id: int,
    kind: str,
    body: bytes,
    headers: Mapping[str, str],
    query: Mapping[str, str],
) -> Received:
    """Authenticate by the DSN's public key, decode, map and store every event item."""
    try:
        data = decode_body(body, headers.get("Content-Encoding"), settings.RCA_MAX_BODY_BYTES * 8)
    except EnvelopeError as exc:
        status = 413 if isinstance(exc, EnvelopeTooLarge) else 400
        raise SentryRefused(status, ["body"], str(exc)) from None
    header, events = _events(kind, data)
    public_key = public_key_from_request(headers, query, header)
    if not public_key:
        raise SentryRefused(401, ["header", "X-Sentry-Auth"], "missing sentry_key (use the DSN)")
    project = Project.objects.filter(pk=project_id, sentry_key=public_key).first()
    if project is None:
        raise SentryRefused(401, ["header", "X-Sentry-Auth"], "unknown DSN key for this project")
    limit = ratelimit.take(f"sentry:{project.pk}")
    if not limit.allowed:
        raise SentryRefused(429, [], "rate limit exceeded", retry_after=limit.retry_after)

    accepted = accept_events(events, header.get("event_id"))
    if accepted.rejected and not accepted.payloads:
        reasons = "; ".join(f"event {r['item']}: {r['msg']}" for r in accepted.rejected)
        raise SentryRefused(400, ["body", "event"], f"nothing stored: {reasons}"[:1000])
    stored = store_incidents(project, accepted.payloads, source="sentry")
    return Received([one.incident.event_id for one in stored], accepted.rejected)
