"""A parsed protobuf export request in OTLP's JSON form, converted only as far as the
mapping reads it.

`MessageToDict` of a whole request costs ~0.4 us a byte (6-7 s for a 16 MiB export of
millions of empty records or attributes), while the mapping looks at no more than
`mapping.MAX_RECORDS` records and events and at the attributes of those that report an
exception. So the walk here:

- stops after `MAX_RECORDS + 1` log records / span events (the mapping then reports the
  request as truncated, as it would have), and gives every record or event that carries
  none of `mapping.EXCEPTION_KEYS` as an empty placeholder `{}` (it still counts);
- converts in full only the exception records / events, their span's name and ids, their
  scope's name and their resource's attributes (once per resource, and only when one of
  its records is an exception);
- reads at most `MAX_ATTRIBUTES` entries of any attribute list, array or kvlist value, and
  no value deeper than `mapping.MAX_VALUE_DEPTH` (the mapping reads none deeper);
- looks at at most `MAX_CONTAINERS` resources, scopes and spans, and reads at most
  `MAX_VISITS` attributes and values in all; past either the rest of the request is left
  and the request is reported truncated (`Trimmed.cut`).

Why these caps: the SDKs keep at most 128 attributes per record, span and event by default
(OTEL_ATTRIBUTE_COUNT_LIMIT) and the mapping keeps at most `MAX_TAGS` (100) tags, so 1,000
never cuts an SDK's export; attributes past it are not read (a repeated key past it does not
win, an exception key past it is not seen). 1,000,000 containers is more than a 16 MiB body
of spans that carry their ids can hold (>= 30 bytes a span: ~560,000); 1,000,000 attributes
and values is several times what RCA_MAX_BATCH (200) exceptions of 128 attributes use (only
records that hold an exception have theirs read). Whether a record carries an exception key
is first asked of its serialized bytes (C speed): only a record whose bytes hold one of the
keys has its attribute keys read. The output is what `MessageToDict(...,
use_integers_for_enums=True)` with hex ids gave for the fields the mapping reads
(tests/unit/test_otlp_protobuf.py checks it on generated requests).
"""

from __future__ import annotations

import base64
import math
from typing import Any

from google.protobuf.message import Message

from ingest.otlp import mapping
from ingest.otlp.decode import Signal, Trimmed, parse_protobuf

MAX_ATTRIBUTES = mapping.MAX_ATTRIBUTES  # entries read of one attribute list, array, kvlist
MAX_CONTAINERS = mapping.MAX_CONTAINERS  # resources, scopes and spans looked at in one request
MAX_VISITS = 1_000_000  # attributes and values (at any depth) read in one request


class _Budget:
    def __init__(self) -> None:
        self.records = 0  # log records + span events, as the mapping counts them
        self.containers = 0  # resources, scopes and spans
        self.visits = 0  # attributes and values
        self.cut = False
        self.keys = tuple(key.encode() for key in mapping.EXCEPTION_KEYS)

    def take(self, items: Any) -> int:
        """How many of a list of resources, scopes or spans to look at (all of it until
        MAX_CONTAINERS have been; `cut` once one is left unread)."""
        count = min(len(items), max(0, MAX_CONTAINERS - self.containers))
        self.containers += count
        self.cut = self.cut or count < len(items)
        return count

    def visit(self, n: int = 1) -> bool:
        """Spend n visits; False (and `cut`) once the request's visits are spent."""
        self.visits += n
        if self.visits > MAX_VISITS:
            self.cut = True
        return self.visits <= MAX_VISITS

    def over(self) -> bool:
        """True once the mapping has been given all the records it will look at."""
        return self.visits > MAX_VISITS or self.records > mapping.MAX_RECORDS


def _double(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _value(value: Any, depth: int, budget: _Budget) -> dict[str, Any]:
    """An AnyValue as MessageToDict writes it, cut where the mapping stops reading."""
    if not budget.visit():  # an empty value too: 1,000 of them fit in 2 KB
        return {}
    kind = value.WhichOneof("value")
    if kind is None:
        return {}
    if kind == "string_value":
        return {"stringValue": value.string_value}
    if kind == "bool_value":
        return {"boolValue": value.bool_value}
    if kind == "int_value":
        return {"intValue": str(value.int_value)}
    if kind == "double_value":
        return {"doubleValue": _double(value.double_value)}
    if kind == "bytes_value":
        return {"bytesValue": base64.b64encode(value.bytes_value).decode()}
    if depth >= mapping.MAX_VALUE_DEPTH:
        return {}  # the mapping reads no array or kvlist this deep
    if kind == "array_value":
        items = value.array_value.values
        values = [_value(items[i], depth + 1, budget) for i in range(_capped(items))]
        return {"arrayValue": {"values": values} if values else {}}
    pairs = attributes(value.kvlist_value.values, depth + 1, budget)
    return {"kvlistValue": {"values": pairs} if pairs else {}}


def _capped(items: Any) -> int:
    return min(len(items), MAX_ATTRIBUTES)


def attributes(items: Any, depth: int, budget: _Budget) -> list[dict[str, Any]]:
    """A KeyValue list as MessageToDict writes it, its first MAX_ATTRIBUTES entries."""
    out: list[dict[str, Any]] = []
    for i in range(_capped(items)):
        if not budget.visit():
            break
        item, pair = items[i], {}
        if item.key:
            pair["key"] = item.key
        if item.HasField("value"):
            pair["value"] = _value(item.value, depth, budget)
        out.append(pair)
    return out


def _is_exception(item: Any, budget: _Budget) -> bool:
    """Whether a record or event carries an exception key among its first attributes."""
    if not item.attributes:
        return False
    data = item.SerializeToString()
    if not any(key in data for key in budget.keys):
        return False
    items = item.attributes
    for i in range(_capped(items)):
        if not budget.visit():
            return False
        if items[i].key in mapping.EXCEPTION_KEYS:
            return True
    return False


def _ids(item: Any, out: dict[str, Any]) -> dict[str, Any]:
    if item.trace_id:
        out["traceId"] = item.trace_id.hex()
    if item.span_id:
        out["spanId"] = item.span_id.hex()
    return out


def _times(item: Any, out: dict[str, Any], *fields: tuple[str, str]) -> dict[str, Any]:
    for name, key in fields:
        if nanos := getattr(item, name):
            out[key] = str(nanos)
    return out


class _Walk:
    """One resource's scopes at a time: its attributes are converted at its first exception."""

    def __init__(self, budget: _Budget) -> None:
        self.budget = budget
        self.resource: dict[str, Any] | None = None

    def exception(self, item: Any, resource: Any) -> dict[str, Any] | None:
        """The record or event converted, `{}` when it is none, None when nothing more is read."""
        budget = self.budget
        if budget.over():
            return None
        budget.records += 1
        if budget.records > mapping.MAX_RECORDS or not _is_exception(item, budget):
            return {}
        if self.resource is None:
            self.resource = {"attributes": attributes(resource.attributes, 0, budget)}
        out = {"attributes": attributes(item.attributes, 0, budget)}
        return None if budget.over() else out

    def resource_part(self) -> dict[str, Any]:
        resource, self.resource = self.resource, None
        return {"resource": resource} if resource is not None else {}


def _scope(scope: Any) -> dict[str, Any]:
    return {"scope": {"name": scope.scope.name}} if scope.scope.name else {}


def _logs(message: Any, walk: _Walk) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    budget, resources = walk.budget, message.resource_logs
    for r in range(budget.take(resources)):
        resource_logs, scopes = resources[r], []
        scope_list = resource_logs.scope_logs
        for s in range(budget.take(scope_list)):
            scope_logs = scope_list[s]
            if not scope_logs.log_records:
                continue
            records = []
            for record in scope_logs.log_records:
                if (item := walk.exception(record, resource_logs.resource)) is None:
                    break
                if item:
                    _ids(record, item)
                    _times(record, item, ("time_unix_nano", "timeUnixNano"),
                           ("observed_time_unix_nano", "observedTimeUnixNano"))  # fmt: skip
                    if record.HasField("body"):
                        item["body"] = _value(record.body, 0, budget)
                    if record.severity_text:
                        item["severityText"] = record.severity_text
                records.append(item)
            if records:
                scopes.append({**_scope(scope_logs), "logRecords": records})
            if budget.over():
                break
        resource = walk.resource_part()
        if scopes:
            out.append({**resource, "scopeLogs": scopes})
        if budget.over():
            break
    return out


def _spans(message: Any, walk: _Walk) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    budget, resources = walk.budget, message.resource_spans
    for r in range(budget.take(resources)):
        resource_spans, scopes = resources[r], []
        scope_list = resource_spans.scope_spans
        for s in range(budget.take(scope_list)):
            scope_spans, spans = scope_list[s], []
            span_list = scope_spans.spans
            for i in range(budget.take(span_list)):
                span = span_list[i]
                if not span.events:
                    continue  # the mapping reads nothing of a span without events
                events = []
                for event in span.events:
                    if (item := walk.exception(event, resource_spans.resource)) is None:
                        break
                    events.append(_times(event, item, ("time_unix_nano", "timeUnixNano")))
                if events:
                    part = {"name": span.name} if span.name else {}
                    spans.append({**_ids(span, part), "events": events})
                if budget.over():
                    break
            if spans:
                scopes.append({**_scope(scope_spans), "spans": spans})
            if budget.over():
                break
        resource = walk.resource_part()
        if scopes:
            out.append({**resource, "scopeSpans": scopes})
        if budget.over():
            break
    return out


def to_json(signal: Signal, message: Message) -> Trimmed:
    """The request in OTLP JSON form as far as the mapping reads it (see the module doc)."""
    walk = _Walk(_Budget())
    out = Trimmed()
    if signal == "logs":
        out["resourceLogs"] = _logs(message, walk)
    else:
        out["resourceSpans"] = _spans(message, walk)
    out.cut = walk.budget.cut
    return out


def decode(signal: Signal, body: bytes) -> Trimmed:
    """A protobuf body's export request in OTLP JSON form; OtlpError when it is not one."""
    return to_json(signal, parse_protobuf(signal, body))
