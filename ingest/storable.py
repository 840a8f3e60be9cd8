"""Make accepted data storable: PostgreSQL keeps no NUL, lone surrogate, NaN or Infinity.

NUL and lone surrogates are valid in JSON (`"\\u0000"`, `"\\ud800"`) and turn up in real
payloads (binary garbage in a log line, a truncated UTF-16 string), but a `text` or
`jsonb` value holding one makes the whole INSERT fail. Replacing them with U+FFFD keeps
every other byte the client sent and shows where something unreadable was, instead of
refusing the incident.

NaN and ±Infinity are what Python's `json.dumps` writes by default for a diverged loss
or a missing reading, and `jsonb` has no such numbers.
They are kept as the strings "NaN", "Infinity" and "-Infinity": for a training failure
the NaN *is* the evidence, so it must not silently become null.
"""

from __future__ import annotations

import json
import math
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
    """A copy of `value` (JSON-like data) whose strings (keys included) and numbers all store."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {
            storable_text(k) if isinstance(k, str) else k: storable(v) for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [storable(item) for item in value]
    return value


def _mended(value: Any) -> Any:
    """``value`` with each lone surrogate in its strings (keys included) made U+FFFD."""
    if isinstance(value, str):
        return storable_text(value) if not value.isascii() else value
    if isinstance(value, dict):
        return {_mended(k): _mended(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mended(item) for item in value]
    return value


def json_loads(raw: bytes | str) -> Any:
    """``json.loads`` whose strings hold no lone surrogate.

    JSON allows ``"\\ud800"`` (a UTF-16 string cut between the halves of a pair), but
    pydantic refuses such a ``str`` field ("unable to parse raw data as a unicode
    string"), so an incident whose message held one was refused, not kept as U+FFFD.
    Only a body with a ``\\ud`` escape can hold one (raw UTF-8 cannot encode a
    surrogate), so only those are walked.
    """
    data = json.loads(raw)
    probe = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if b"\\ud" in probe or b"\\uD" in probe:
        return _mended(data)
    return data
