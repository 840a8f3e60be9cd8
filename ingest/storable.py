"""Make accepted text storable: PostgreSQL keeps neither NUL characters nor lone surrogates.

Both are valid in JSON (`"\\u0000"`, `"\\ud800"`) and both turn up in real payloads (binary
garbage in a log line, a truncated UTF-16 string), but a `text` or `jsonb` value holding
one makes the whole INSERT fail. Replacing them with U+FFFD keeps every other byte the
client sent and shows where something unreadable was, instead of refusing the incident.
"""

from __future__ import annotations

from typing import Any

REPLACEMENT = "\ufffd"


def storable_text(text: str) -> str:
    if text.isascii():
        return text.replace("\x00", REPLACEMENT) if "\x00" in text else text
    text = text.replace("\x00", REPLACEMENT)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: replace each one
        text = "".join(REPLACEMENT if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    return text


def storable(value: Any) -> Any:
    """A copy of `value` (JSON-like data) whose every string, keys included, can be stored."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {
            storable_text(k) if isinstance(k, str) else k: storable(v) for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [storable(item) for item in value]
    return value
