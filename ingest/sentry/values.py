"""Lenient readers of the JSON values a Sentry SDK sends: a wrong type reads as "unknown".

Every SDK bends the protocol somewhere (a message as a string, a line number as text, a
tag value as an object), and the endpoint is public. These helpers turn any JSON value
into the plain type a field needs, or into its empty value, and never raise.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from ingest.parsing.frames import MAX_FIELD

JsonObject = dict[str, Any]
"""A JSON object as an SDK sent it: its values are unchecked until one of the readers
below narrows them, which is why they stay ``Any`` rather than a JSON union."""


def as_dict(value: Any) -> JsonObject:
    return value if isinstance(value, dict) else {}


def text(value: Any, limit: int = MAX_FIELD) -> str:
    """A scalar as text; containers become "" so a stray object never lands in a str field."""
    if type(value) is str:  # most values (JSON's strings): what `str(value)[:limit]` gives
        return value[:limit]
    if value is None or isinstance(value, (dict, list, tuple, set)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"  # as JSON writes it, which is what was sent
    try:
        return str(value)[:limit]
    except ValueError:  # an int past Python's digit limit
        return ""


def as_repr(value: Any, limit: int = MAX_FIELD) -> str:
    """Any JSON value as text: Sentry serialises containers in ``vars`` as JSON structures."""
    if isinstance(value, str):
        return value[:limit]
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:limit]
    except (TypeError, ValueError, RecursionError):
        return text(value, limit)


def first(mapping: JsonObject, keys: tuple[str, ...]) -> Any:
    """The value of the first of `keys` that is there and not null."""
    for key in keys:
        value = mapping.get(key)
        if value is not None:
            return value
    return None


def count(value: Any) -> int | None:
    """A non-negative count (line number, batch size); anything else is unknown."""
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and len(value) < 20:
        try:
            number = int(value.strip())
        except ValueError:
            return None
    return number if number is not None and number >= 0 else None


def number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        result = float(value)
    except (ValueError, OverflowError):
        return None
    return result if math.isfinite(result) else None


def iso_time(value: Any) -> str | None:
    """Sentry timestamps are epoch seconds (float) or RFC 3339 strings; we store UTC ISO."""
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            moment = datetime.fromtimestamp(value, tz=UTC)
        elif isinstance(value, str) and value.strip():
            moment = datetime.fromisoformat(value.strip())
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
        else:
            return None
        return moment.astimezone(UTC).isoformat()
    except (ValueError, OverflowError, OSError):
        return None
