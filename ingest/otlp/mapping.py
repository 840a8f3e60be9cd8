"""Which OTLP log records and span events are incidents, and the incident each one becomes.

OpenTelemetry's semantic conventions put an exception in three attributes:
`exception.type`, `exception.message` and `exception.stacktrace`, on a log record or on a
span event (named "exception" by the SDKs' `record_exception`). Any record or event that
carries one of them is an incident; everything else in the request (ordinary logs, spans
without exceptions, metrics-like attributes) is accepted and ignored, as a collector
would when it has no pipeline for it.

The incident keeps what an engineer needs to find the failure in their tracing tool: the
trace and span ids, the span's name and the severity, with the resource's attributes
(`service.name`, `deployment.environment`, host, k8s, ...) as tags. Its `event_id` is a
digest of what identifies the record (ids, time, exception), so an exporter's retry of
the same batch stores nothing twice. Walks are bounded: at most `MAX_RECORDS` records
and events are looked at per request, and attribute values at most `MAX_VALUE_DEPTH`
levels deep.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ingest.otlp.decode import Signal, hex_id

EXCEPTION_KEYS = ("exception.type", "exception.message", "exception.stacktrace")
MAX_RECORDS = 100_000  # log records + span events looked at in one request
MAX_VALUE_DEPTH = 8
MAX_TAGS = 100
MAX_TAG_VALUE = 1000


@dataclass
class Found:
    """The incidents in one export request, and how many records were looked at."""

    incidents: list[dict[str, Any]] = field(default_factory=list)
    records: int = 0
    truncated: bool = False  # more than MAX_RECORDS: the rest was not looked at


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def any_value(value: Any, depth: int = 0) -> Any:
    """An OTLP AnyValue as plain data (ints arrive as strings in JSON, as int64 does)."""
    value = _dict(value)
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return str(value["intValue"])
    if "doubleValue" in value:
        try:
            return float(value["doubleValue"])
        except (TypeError, ValueError):
            return str(value["doubleValue"])
    if depth >= MAX_VALUE_DEPTH:
        return None
    if "arrayValue" in value:
        return [any_value(v, depth + 1) for v in _list(_dict(value["arrayValue"]).get("values"))]
    if "kvlistValue" in value:
        return attributes(_dict(value["kvlistValue"]).get("values"), depth + 1)
    if "bytesValue" in value:
        return str(value["bytesValue"])
    return None


def attributes(items: Any, depth: int = 0) -> dict[str, Any]:
    """A KeyValue list as a dict (the last of a repeated key wins, as in the SDKs)."""
    out: dict[str, Any] = {}
    for item in _list(items):
        item = _dict(item)
        key = item.get("key")
        if isinstance(key, str):
            out[key] = any_value(item.get("value"), depth)
    return out


def _time(nanos: Any) -> str | None:
    try:
        seconds = int(nanos) / 1e9
    except (TypeError, ValueError):
        return None
    if seconds <= 0:
        return None
    try:
        return datetime.fromtimestamp(seconds, UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def _scalar(value: Any) -> str | int | float | bool | None:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text[:MAX_TAG_VALUE]


def _tags(resource: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Ids and the record's own attributes first, then the resource's, within the limits."""
    tags: dict[str, Any] = {}
    for key, value in [*extra.items(), *resource.items()]:
        if len(tags) >= MAX_TAGS:
            break
        if value not in (None, "") and key[:100] not in tags:
            tags[key[:100]] = _scalar(value)
    return tags


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _event_id(*parts: Any) -> str:
    digest = hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()
    return f"otlp-{digest[:40]}"


def _incident(
    resource: dict[str, Any], attrs: dict[str, Any], when: Any, ids: dict[str, str], **extra: Any
) -> dict[str, Any]:
    """One incident from an exception's attributes, its resource and where it happened."""
    own = {k: v for k, v in attrs.items() if not k.startswith("exception.")}
    error_type = _text(attrs.get("exception.type"))[:255]
    message = _text(attrs.get("exception.message")) or _text(extra.pop("body", None))
    stacktrace = _text(attrs.get("exception.stacktrace"))
    env = resource.get("deployment.environment.name") or resource.get("deployment.environment")
    incident: dict[str, Any] = {
        "service": _text(resource.get("service.name"))[:200] or "unknown",
        "environment": _text(env)[:100],
        "error_type": error_type,
        "message": message[:65_536] or error_type or "exception",
        "tags": _tags(resource, {**ids, **{k: v for k, v in extra.items() if v}, **own}),
        "event_id": _event_id(ids, when, error_type, message[:1000], stacktrace[:1000]),
    }
    if stacktrace:
        incident["stacktrace"] = stacktrace[:262_144]
    if occurred := _time(when):
        incident["occurred_at"] = occurred
    model = attrs.get("gen_ai.request.model") or resource.get("model.id")
    if model:
        incident["inference_context"] = {"model_id": _text(model)[:255]}
    return incident


def _log_incidents(request: dict[str, Any], found: Found) -> Iterator[dict[str, Any]]:
    for resource_logs in _list(request.get("resourceLogs")):
        resource = attributes(_dict(_dict(resource_logs).get("resource")).get("attributes"))
        for scope_logs in _list(_dict(resource_logs).get("scopeLogs")):
            scope = _dict(_dict(scope_logs).get("scope")).get("name")
            for record in _list(_dict(scope_logs).get("logRecords")):
                found.records += 1
                if found.records > MAX_RECORDS:
                    found.truncated = True
                    return
                record = _dict(record)
                attrs = attributes(record.get("attributes"))
                if not any(key in attrs for key in EXCEPTION_KEYS):
                    continue
                ids = {
                    "trace_id": hex_id(record.get("traceId"), 16),
                    "span_id": hex_id(record.get("spanId"), 8),
                }
                yield _incident(
                    resource,
                    attrs,
                    record.get("timeUnixNano") or record.get("observedTimeUnixNano"),
                    {k: v for k, v in ids.items() if v},
                    body=any_value(record.get("body")),
                    severity=record.get("severityText"),
                    scope=scope,
                )


def _span_incidents(request: dict[str, Any], found: Found) -> Iterator[dict[str, Any]]:
    for resource_spans in _list(request.get("resourceSpans")):
        resource = attributes(_dict(_dict(resource_spans).get("resource")).get("attributes"))
        for scope_spans in _list(_dict(resource_spans).get("scopeSpans")):
            scope = _dict(_dict(scope_spans).get("scope")).get("name")
            for span in _list(_dict(scope_spans).get("spans")):
                span = _dict(span)
                ids = {
                    "trace_id": hex_id(span.get("traceId"), 16),
                    "span_id": hex_id(span.get("spanId"), 8),
                }
                for event in _list(span.get("events")):
                    found.records += 1
                    if found.records > MAX_RECORDS:
                        found.truncated = True
                        return
                    event = _dict(event)
                    attrs = attributes(event.get("attributes"))
                    if not any(key in attrs for key in EXCEPTION_KEYS):
                        continue
                    yield _incident(
                        resource,
                        attrs,
                        event.get("timeUnixNano"),
                        {k: v for k, v in ids.items() if v},
                        span=span.get("name"),
                        scope=scope,
                    )


def find_incidents(signal: Signal, request: dict[str, Any]) -> Found:
    """The incidents an export request carries, in the order they appear."""
    found = Found()
    walk = _log_incidents if signal == "logs" else _span_incidents
    found.incidents = list(walk(request, found))
    return found
