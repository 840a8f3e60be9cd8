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
and events and `MAX_CONTAINERS` resources, scopes and spans are looked at per request (past
either the request is reported truncated), `MAX_ATTRIBUTES` entries of an attribute list,
array or kvlist, attribute values at most `MAX_VALUE_DEPTH` levels deep, and a resource's
attributes only once one of its records is an exception.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ingest.otlp.decode import Signal, Trimmed, hex_id

EXCEPTION_KEYS = ("exception.type", "exception.message", "exception.stacktrace")
MAX_RECORDS = 100_000  # log records + span events looked at in one request
MAX_VALUE_DEPTH = 8
MAX_TAGS = 100
# entries read of one attribute list, array or kvlist: SDKs keep 128 (OTEL_ATTRIBUTE_COUNT_LIMIT)
MAX_ATTRIBUTES = 1000
# resources, scopes and spans looked at: more than 16 MiB of spans that carry their ids holds
MAX_CONTAINERS = 1_000_000
MAX_TAG_VALUE = 1000


@dataclass
class Found:
    """The incidents in one export request, and how many records were looked at."""

    incidents: list[dict[str, Any]] = field(default_factory=list)
    records: int = 0
    truncated: bool = False  # more than MAX_RECORDS (or MAX_CONTAINERS): the rest was not read
    containers: int = 0


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def any_value(value: Any, depth: int = 0) -> Any:
    """An OTLP AnyValue as plain data (ints arrive as strings in JSON, as int64 does).

    JSON numbers are Python's: ``1e999`` is infinity and ``1`` with 400 zeros an int no
    float holds, so conversions can overflow as well as fail."""
    value = _dict(value)
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError, OverflowError):
            return str(value["intValue"])
    if "doubleValue" in value:
        try:
            return float(value["doubleValue"])
        except (TypeError, ValueError, OverflowError):
            return str(value["doubleValue"])
    if depth >= MAX_VALUE_DEPTH:
        return None
    if "arrayValue" in value:
        values = _list(_dict(value["arrayValue"]).get("values"))[:MAX_ATTRIBUTES]
        return [any_value(v, depth + 1) for v in values]
    if "kvlistValue" in value:
        return attributes(_dict(value["kvlistValue"]).get("values"), depth + 1)
    if "bytesValue" in value:
        return str(value["bytesValue"])
    return None


def attributes(items: Any, depth: int = 0) -> dict[str, Any]:
    """A KeyValue list's first MAX_ATTRIBUTES entries as a dict (the last of a repeated key
    wins, as in the SDKs)."""
    out: dict[str, Any] = {}
    for item in _list(items)[:MAX_ATTRIBUTES]:
        item = _dict(item)
        key = item.get("key")
        if isinstance(key, str):
            out[key] = any_value(item.get("value"), depth)
    return out


def _time(nanos: Any) -> str | None:
    try:
        seconds = int(nanos) / 1e9
    except (TypeError, ValueError, OverflowError):
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
        # the first that says something: whitespace alone is no message (the schema refuses it)
        "message": next(t for t in (message[:65_536], error_type, "exception") if t.strip()),
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


def _ids(item: dict[str, Any]) -> dict[str, str]:
    ids = {"trace_id": hex_id(item.get("traceId"), 16), "span_id": hex_id(item.get("spanId"), 8)}
    return {k: v for k, v in ids.items() if v}


def _exception(found: Found, item: Any) -> dict[str, Any] | None:
    """The attributes of a record or event that reports an exception, else None; counts it
    against the request's budget (`found.truncated` once that is spent)."""
    found.records += 1
    if found.records > MAX_RECORDS:
        found.truncated = True
        return None
    attrs = attributes(_dict(item).get("attributes"))
    return attrs if any(key in attrs for key in EXCEPTION_KEYS) else None


def _container(found: Found) -> bool:
    """Counts a resource, scope or span; False (and truncated) past MAX_CONTAINERS."""
    found.containers += 1
    if found.containers > MAX_CONTAINERS:
        found.truncated = True
    return not found.truncated


def _scopes(
    request: dict[str, Any], resources: str, scopes: str, found: Found
) -> Iterator[tuple[Any, ...]]:
    """(resource attributes, read when first asked; scope name; scope) for every scope of
    every resource."""
    for resource_item in _list(request.get(resources)):
        if not _container(found):
            return
        raw = _dict(_dict(resource_item).get("resource")).get("attributes")
        resource = functools.cache(functools.partial(attributes, raw))
        for scope_item in _list(_dict(resource_item).get(scopes)):
            if not _container(found):
                return
            yield resource, _dict(_dict(scope_item).get("scope")).get("name"), _dict(scope_item)


def _log_incidents(request: dict[str, Any], found: Found) -> Iterator[dict[str, Any]]:
    for resource, scope, scope_logs in _scopes(request, "resourceLogs", "scopeLogs", found):
        for record in _list(scope_logs.get("logRecords")):
            if found.truncated:
                return
            if (attrs := _exception(found, record)) is None:
                continue
            record = _dict(record)
            yield _incident(
                resource(),
                attrs,
                record.get("timeUnixNano") or record.get("observedTimeUnixNano"),
                _ids(record),
                body=any_value(record.get("body")),
                severity=record.get("severityText"),
                scope=scope,
            )


def _span_incidents(request: dict[str, Any], found: Found) -> Iterator[dict[str, Any]]:
    for resource, scope, scope_spans in _scopes(request, "resourceSpans", "scopeSpans", found):
        for span in _list(scope_spans.get("spans")):
            if not _container(found):
                return
            span = _dict(span)
            for event in _list(span.get("events")):
                if found.truncated:
                    return
                if (attrs := _exception(found, event)) is None:
                    continue
                yield _incident(
                    resource(),
                    attrs,
                    _dict(event).get("timeUnixNano"),
                    _ids(span),
                    span=span.get("name"),
                    scope=scope,
                )


def find_incidents(signal: Signal, request: dict[str, Any]) -> Found:
    """The incidents an export request carries, in the order they appear."""
    found = Found()
    walk = _log_incidents if signal == "logs" else _span_incidents
    found.incidents = list(walk(request, found))
    if isinstance(request, Trimmed) and request.cut:
        found.truncated = True  # a protobuf request's walk stopped at its budget
    return found
