"""What the accept writes per incident: one inbox record, plain JSON data.

The same dict is an inbox row (`write.py` inserts a list of them as one JSON document) and
a spool record (`ingest.spool` writes it to disk when the database is away), so the two
paths cannot disagree on what an accepted incident is.

The payload travels as its JSON text, serialised once here (issue 19): `write.py` splices
it into the statement's document as it is, where a dict would be encoded again. Records
spooled before carry a dict; `payload_text` turns either into the text.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypedDict

from django.utils import timezone
from pydantic_core import PydanticSerializationError, to_json

from ingest.storable import storable
from ingest.store import client_event_id


class Record(TypedDict):
    project_id: int
    source: str  # api | sentry
    event_id: str  # the client's (normalised), the Idempotency-Key's, or assigned here
    payload: str  # validated, unscrubbed, as JSON text storable in jsonb (spooled: maybe a dict)
    received_at: str  # ISO 8601 with offset


_TIGHT = (",", ":")


def _iso(value: Any) -> str:
    if isinstance(value, datetime):  # the validated `occurred_at`, which `store` reads back
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON data")


def payload_text(payload: dict[str, Any] | str) -> str:
    """The payload as JSON text jsonb stores: `json.dumps(storable(payload))` (no NUL,
    lone surrogate or NaN, which jsonb refuses; `ingest.storable`, as storing does anyway),
    datetimes as ISO text. One encoding in Rust (`_encoded`) when there is nothing to
    replace (nearly always: NaN and ±Infinity become storable's strings there, and the text
    shows NUL and surrogates); the copy otherwise."""
    if isinstance(payload, str):
        return payload
    text = _encoded(payload)
    if text is not None and "\\u0000" not in text:
        return text
    return json.dumps(storable(payload), ensure_ascii=False, separators=_TIGHT, default=_iso)


def storable_with_text(payload: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """`storable(payload)` and `payload_text` of it, copying only when something must be
    replaced: the payload itself when its text shows nothing to replace (no NUL, and no
    `NaN` or `Infinity` anywhere, which a non-finite number would have written). So a
    caller that holds the text need not copy the payload through `storable` again (the
    processor's mapped Sentry events: ~20 us an event, issue 19)."""
    text = _encoded(payload)
    if text is not None and "\\u0000" not in text and "NaN" not in text and "Infinity" not in text:
        return payload, text
    copy = storable(payload)
    return copy, payload_text(copy)


def _encoded(payload: dict[str, Any]) -> str | None:
    """Compact JSON text by pydantic-core's encoder, NaN and ±Infinity as the strings
    `storable` makes of them, datetimes in ISO 8601 (UTC as `Z`); None when it cannot
    encode (a lone surrogate: UTF-8 has no spelling for it). Issue 19: ~4x faster than
    `json.dumps` on the bench's payloads (a 1.2 KB mapped Sentry event 26 -> ~7 us)."""
    try:
        return to_json(payload, inf_nan_mode="strings").decode()
    except PydanticSerializationError:
        return None


def _encodes(text: str) -> bool:
    """False when `text` holds a lone surrogate (no UTF-8 for it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
            "payload": payload_text(payload),
            "received_at": received_at,
        }
        for payload, key in zip(payloads, keys, strict=True)
    ]
