"""Turn the ``logs`` a client sent (strings, objects, or one blob of lines) into entries.

Services log in every format there is, so we recognise the common shapes (JSON lines,
``ts LEVEL message`` text, ``key=value`` pairs) and keep anything else as a plain message:
an unrecognised line is still evidence for the analysis.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any, TypedDict

from ingest.linear_regex import compile as linear
from ingest.parsing.log_levels import SEVERITY, TEXT_LEVELS, canonical_level

MAX_ENTRIES = 500
MAX_MESSAGE = 2000
MAX_TEXT = 1_000_000
MAX_EXTRA_KEYS = 50
MAX_VALUE = 500


class LogEntry(TypedDict):
    ts: str | None
    level: str | None
    message: str
    trace_id: str | None
    error_code: str | None
    extra: dict[str, Any]


_TS_KEYS = ("ts", "time", "timestamp", "@timestamp", "datetime", "date", "asctime", "created")
_LEVEL_KEYS = ("level", "severity", "levelname", "log_level", "logLevel", "lvl", "loglevel")
_MESSAGE_KEYS = ("message", "msg", "event", "text", "log", "body")
_TRACE_KEYS = ("trace_id", "traceId", "trace-id", "traceID", "otelTraceID", "request_id")
_CODE_KEYS = ("error_code", "errorCode", "error-code", "code", "err_code")


_ISO_TS = (
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?"
    r"(?:\s?Z|\s?[+-]\d{2}:?\d{2}|\s?UTC)?"
)
_CLOCK = r"\d{2}:\d{2}:\d{2}(?:[.,]\d+)?"
_LEADING_TS = linear(rf"^\s*\[?(?P<ts>{_ISO_TS}|{_CLOCK})\]?[\s|:-]*")
_LEADING_LEVEL = linear(
    rf"^\s*[\[(<]?(?P<level>{TEXT_LEVELS})[\])>]?(?:\s*[:|-]\s*|\s+|$)", ignore_case=True
)
# RE2 has no lookaround: the character after the level is consumed instead of looked at,
# which finds the same first match (only ``search`` is used, and only the group is read).
_ANY_LEVEL = linear(rf"(?:^|[\s\[(|])(?P<level>{TEXT_LEVELS})(?:[\s\]):|]|$)")
_LEVEL_PAIR = linear(r"\b(?:level|severity|lvl)=\"?(?P<level>[A-Za-z]+)", ignore_case=True)
# A key starts a run of [\w.-] (it was a lookbehind). RE2 has none, so the second branch
# consumes every run that is not a key: matches then only ever start where a run starts,
# and ``key`` is None for the runs skipped.
_PAIR = linear(r"(?P<key>[A-Za-z_][\w.-]{0,40})=(?P<value>\"[^\"]*\"|'[^']*'|[^\s,;]+)|[\w.-]+")
_KNOWN_PAIR = linear(
    r"^(?:level|severity|lvl|trace[_-]?id|traceId|error[_-]?code|errorCode)$", ignore_case=True
)
_TRACE_PAIR = linear(r"\btrace[_-]?id[=:]\s*\"?(?P<v>[\w-]{4,64})", ignore_case=True)
_CODE_PAIR = linear(r"\berror[_-]?code[=:]\s*\"?(?P<v>[\w.-]{1,64})", ignore_case=True)


def _normalise_level(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (int, float)):
        # Numeric levels: Python logging (10..50) and pino/bunyan (10..60).
        number = int(value)
        for name in ("CRITICAL", "ERROR", "WARNING", "INFO"):
            if number >= SEVERITY[name]:
                return name
        return "DEBUG"
    text = str(value).strip().upper()[:20]
    if not text:
        return None
    return canonical_level(text)


def _normalise_ts(value: Any) -> str | None:
    """Return ISO 8601 when the value can be read as a time, else the value as text."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            seconds = float(value)
            if seconds > 1e14:  # microseconds or nanoseconds
                seconds /= 1e6 if seconds < 1e17 else 1e9
            elif seconds > 1e11:  # milliseconds
                seconds /= 1e3
            return datetime.fromtimestamp(seconds, tz=UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            return str(value)[:64]
    text = str(value).strip()[:64]
    if not text:
        return None
    candidate = text.replace(",", ".").replace(" UTC", "Z")
    try:
        return datetime.fromisoformat(candidate).isoformat()
    except ValueError:
        return text


def _short(value: Any) -> Any:
    if isinstance(value, str):
        return value[:MAX_VALUE]
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    try:
        return json.dumps(value, default=str)[:MAX_VALUE]
    except (TypeError, ValueError, RecursionError):
        return str(value)[:MAX_VALUE]


def _pick(item: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    for key in keys:
        if key in item and item[key] not in (None, ""):
            return key, item[key]
    return None, None


def _text_or_none(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()[:128]
    return text or None


def entry_from_dict(item: dict[str, Any]) -> LogEntry:
    """Read a structured log record, keeping the keys we do not know in ``extra``."""
    used: set[str] = set()
    picked: dict[str, Any] = {}
    for name, keys in (
        ("ts", _TS_KEYS),
        ("level", _LEVEL_KEYS),
        ("message", _MESSAGE_KEYS),
        ("trace_id", _TRACE_KEYS),
        ("error_code", _CODE_KEYS),
    ):
        key, value = _pick(item, keys)
        if key is not None:
            used.add(key)
        picked[name] = value
    message = picked["message"]
    if not isinstance(message, str):
        message = "" if message is None else _short(message)
    extra: dict[str, Any] = {}
    for key, value in item.items():
        if key in used or len(extra) >= MAX_EXTRA_KEYS:
            continue
        extra[str(key)[:100]] = _short(value)
    return LogEntry(
        ts=_normalise_ts(picked["ts"]),
        level=_normalise_level(picked["level"]),
        message=str(message)[:MAX_MESSAGE],
        trace_id=_text_or_none(picked["trace_id"]),
        error_code=_text_or_none(picked["error_code"]),
        extra=extra,
    )


def entry_from_text(line: str) -> LogEntry:
    """Read a plain-text log line: leading timestamp and level, then ``key=value`` hints."""
    stripped = line.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            parsed = json.loads(stripped)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            return entry_from_dict(parsed)
    rest = line.rstrip()
    ts = None
    ts_match = _LEADING_TS.match(rest)
    if ts_match:
        ts = _normalise_ts(ts_match.group("ts"))
        rest = rest[ts_match.end() :]
    level = None
    level_match = _LEADING_LEVEL.match(rest)
    if level_match:
        level = _normalise_level(level_match.group("level"))
        rest = rest[level_match.end() :]
    else:
        pair = _LEVEL_PAIR.search(rest) or _ANY_LEVEL.search(rest[:80])
        if pair:
            level = _normalise_level(pair.group("level"))
    # Substring tests first: each skips an RE2 call on lines that cannot match it.
    lowered = rest.lower()
    trace = _TRACE_PAIR.search(rest) if "trace" in lowered else None
    code = _CODE_PAIR.search(rest) if "code" in lowered else None
    extra: dict[str, Any] = {}
    for pair_match in _PAIR.finditer(rest) if "=" in rest else ():
        if len(extra) >= MAX_EXTRA_KEYS:
            break
        key = pair_match["key"]
        if key is not None and not _KNOWN_PAIR.match(key):
            extra.setdefault(key, pair_match.group("value").strip("\"'")[:MAX_VALUE])
    return LogEntry(
        ts=ts,
        level=level,
        message=(rest.strip() or line.strip())[:MAX_MESSAGE],
        trace_id=trace.group("v") if trace else None,
        error_code=code.group("v") if code else None,
        extra=extra,
    )


def _lines(text: str) -> list[str]:
    """Split a blob into records, folding indented continuation lines into the one before."""
    records: list[str] = []
    for line in text[:MAX_TEXT].splitlines():
        if not line.strip():
            continue
        if records and line[:1].isspace() and not line.lstrip().startswith("{"):
            if len(records[-1]) < MAX_MESSAGE:
                records[-1] += "\n" + line.rstrip()
            continue
        records.append(line)
    return records


def parse_logs(value: Any) -> list[LogEntry]:
    """Parse logs given as a list of strings/objects or as one string of lines.

    Only the last ``MAX_ENTRIES`` entries are kept: the lines closest to the failure are
    the ones that explain it. Never raises.
    """
    try:
        if value is None:
            return []
        if isinstance(value, str):
            items: list[Any] = list(_lines(value))
        elif isinstance(value, dict):
            items = [value]
        elif isinstance(value, (list, tuple)):
            items = list(value)
        else:
            items = [str(value)]
        entries: list[LogEntry] = []
        for item in items[-MAX_ENTRIES:]:
            if isinstance(item, dict):
                entries.append(entry_from_dict(item))
            elif isinstance(item, str):
                if item.strip():
                    entries.append(entry_from_text(item))
            elif item is not None:
                entries.append(entry_from_text(str(_short(item))))
        return entries
    except Exception:  # noqa: BLE001 - logs are supporting evidence; never fail ingest on them
        return []
