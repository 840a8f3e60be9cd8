"""What the accept writes per incident: one inbox record, plain JSON data.

The same dict is an inbox row (`write.py` inserts a list of them as one JSON document) and
a spool record (`ingest.spool` writes it to disk when the database is away), so the two
paths cannot disagree on what an accepted incident is.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypedDict

from django.utils import timezone

from ingest.storable import storable
from ingest.store import client_event_id


class Record(TypedDict):
    project_id: int
    source: str  # api | sentry
    event_id: str  # the client's (normalised), the Idempotency-Key's, or assigned here
    payload: dict[str, Any]  # validated, unscrubbed; storable in jsonb
    received_at: str  # ISO 8601 with offset


def _jsonable(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload as JSON data: storable strings and numbers (no NUL, lone surrogate or
    NaN, which jsonb refuses; `ingest.storable`, as storing does anyway) and the validated
    `occurred_at` as ISO text, which `store` reads back the same."""
    out: dict[str, Any] = storable(payload)
    for name, value in out.items():
        if isinstance(value, datetime):
            out[name] = value.isoformat()
    return out


def make_records(
    project_id: int,
    source: str,
    payloads: Sequence[dict[str, Any]],
    idempotency_keys: Sequence[str | None] | None = None,
) -> list[Record]:
    """One record per payload, in order. An incident without an id of the client's gets a
    new one now, so the answer can name it and the stored incident carries it."""
    keys = idempotency_keys or [None] * len(payloads)
    received_at = timezone.now().isoformat()
    return [
        {
            "project_id": project_id,
            "source": source,
            "event_id": client_event_id(payload, key) or uuid.uuid4().hex,
            "payload": _jsonable(payload),
            "received_at": received_at,
        }
        for payload, key in zip(payloads, keys, strict=True)
    ]
