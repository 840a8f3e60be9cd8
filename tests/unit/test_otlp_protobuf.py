"""Protobuf export requests: the bounded walk (ingest/otlp/protobuf.py) gives the mapping
what `MessageToDict` of the whole request gave, and reads no more than its caps."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ingest.otlp import mapping, protobuf
from tests.support.otlp_wire import varint, whole_conversion

KEYS = [*mapping.EXCEPTION_KEYS, "service.name", "deployment.environment", "model.id", "x", ""]
ids = (
    st.sampled_from([b"", b"\x01\x02\x03"])
    | st.binary(min_size=8, max_size=8)
    | st.binary(min_size=16, max_size=16)
)
nanos = st.sampled_from([0, 1, 2**64 - 1]) | st.integers(0, 2**64 - 1)
scalars = st.one_of(
    st.none(),
    st.tuples(st.just("string_value"), st.text(max_size=12)),
    st.tuples(st.just("bool_value"), st.booleans()),
    st.tuples(st.just("int_value"), st.integers(-(2**63), 2**63 - 1)),
    st.tuples(st.just("double_value"), st.floats()),
    st.tuples(st.just("bytes_value"), st.binary(max_size=6)),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.tuples(st.just("array_value"), st.lists(inner, max_size=3))
        | st.tuples(
            st.just("kvlist_value"), st.lists(st.tuples(st.sampled_from(KEYS), inner), max_size=3)
        )
    ),  # fmt: skip
    max_leaves=12,
)
attrs = st.lists(st.tuples(st.sampled_from(KEYS) | st.text(max_size=5), values), max_size=5)
record = st.fixed_dictionaries({"attributes": attrs, "time_unix_nano": nanos,
                                "observed_time_unix_nano": nanos, "trace_id": ids, "span_id": ids,
                                "body": values, "severity_text": st.text(max_size=5)})  # fmt: skip
event = st.fixed_dictionaries({"attributes": attrs, "time_unix_nano": nanos,
                               "name": st.sampled_from(["", "exception"])})  # fmt: skip
span = st.fixed_dictionaries({"name": st.text(max_size=5), "trace_id": ids, "span_id": ids,
                              "events": st.lists(event, max_size=3)})  # fmt: skip


def _exports(items: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    scope = st.tuples(st.sampled_from(["", "app"]), st.lists(items, max_size=4))
    return st.lists(st.tuples(attrs, st.lists(scope, max_size=3)), max_size=3)


def _set_value(target: Any, value: Any) -> None:
    if value is None:
        return
    kind, data = value
    if kind == "array_value":
        target.array_value.SetInParent()
        for item in data:
            _set_value(target.array_value.values.add(), item)
    elif kind == "kvlist_value":
        target.kvlist_value.SetInParent()
        _set_attrs(target.kvlist_value.values, data)
    else:
        setattr(target, kind, data)


def _set_attrs(target: Any, pairs: Any) -> None:
    for key, value in pairs:
        pair = target.add(key=key)
        if value is not None:
            pair.value.SetInParent()
            _set_value(pair.value, value)


def _fill(target: Any, fields: dict[str, Any]) -> None:
    for name, data in fields.items():
        if name == "attributes":
            _set_attrs(target.attributes, data)
        elif name == "body":
            if data is not None:
                target.body.SetInParent()
                _set_value(target.body, data)
        elif name == "events":
            for item in data:
                _fill(target.events.add(), item)
        else:
            setattr(target, name, data)


def _message(signal: str, export: Any) -> Any:
    message = ExportLogsServiceRequest() if signal == "logs" else ExportTraceServiceRequest()
    resources = message.resource_logs if signal == "logs" else message.resource_spans
    for resource_attrs, scopes in export:
        resource = resources.add()
        _set_attrs(resource.resource.attributes, resource_attrs)
        for name, items in scopes:
            scope = resource.scope_logs.add() if signal == "logs" else resource.scope_spans.add()
            scope.scope.name = name
            for item in items:
                _fill(scope.log_records.add() if signal == "logs" else scope.spans.add(), item)
    return message


def _same(signal: str, message: Any) -> None:
    before = mapping.find_incidents(signal, whole_conversion(message))  # type: ignore[arg-type]
    after = mapping.find_incidents(signal, protobuf.decode(signal, message.SerializeToString()))
    assert json.dumps(after.incidents) == json.dumps(before.incidents)  # NaN != NaN: as text
    assert (after.records, after.truncated) == (before.records, before.truncated)


@settings(max_examples=250, deadline=None)
@given(_exports(record), st.sampled_from([2, 5, mapping.MAX_RECORDS]))
def test_logs_map_as_the_whole_conversion_did(export, budget):
    with mock.patch.object(mapping, "MAX_RECORDS", budget):
        _same("logs", _message("logs", export))


@settings(max_examples=250, deadline=None)
@given(_exports(span), st.sampled_from([2, 5, mapping.MAX_RECORDS]))
def test_traces_map_as_the_whole_conversion_did(export, budget):
    with mock.patch.object(mapping, "MAX_RECORDS", budget):
        _same("traces", _message("traces", export))


def _exception_attrs(target: Any) -> None:
    target.add(key="exception.type").value.string_value = "ValueError"


def _counting(name: str) -> tuple[Any, list[int]]:
    calls = [0]
    real = getattr(protobuf, name)

    def counted(*args: Any) -> Any:
        calls[0] += 1
        return real(*args)

    return mock.patch.object(protobuf, name, counted), calls


def test_a_million_empty_records_are_read_to_the_record_budget_only():
    body = b"\x12\x00" * 1_000_000  # LogRecord {} (field 2 of ScopeLogs)
    scope = b"\x12" + varint(len(body)) + body
    request = b"\x0a" + varint(len(scope)) + scope
    patch, calls = _counting("_is_exception")
    with patch:
        converted = protobuf.decode("logs", request)
    assert calls[0] == mapping.MAX_RECORDS
    records = converted["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert len(records) == mapping.MAX_RECORDS + 1 and not any(records)
    found = mapping.find_incidents("logs", converted)
    assert found.truncated and found.records == mapping.MAX_RECORDS + 1


def test_a_resource_of_100k_attributes_is_read_to_the_cap():
    message = ExportLogsServiceRequest()
    resource = message.resource_logs.add()
    for i in range(100_000):
        resource.resource.attributes.add(key=f"k{i}").value.string_value = "v"
    record = resource.scope_logs.add().log_records.add()
    _exception_attrs(record.attributes)
    for i in range(100_000):
        record.attributes.add(key=f"r{i}").value.array_value.values.add().int_value = i
    patch, calls = _counting("_value")
    with patch:
        converted = protobuf.decode("logs", message.SerializeToString())
    part = converted["resourceLogs"][0]
    assert len(part["resource"]["attributes"]) == protobuf.MAX_ATTRIBUTES
    assert len(part["scopeLogs"][0]["logRecords"][0]["attributes"]) == protobuf.MAX_ATTRIBUTES
    assert calls[0] <= 3 * protobuf.MAX_ATTRIBUTES  # resource + record, each cut at the cap
    (incident,) = mapping.find_incidents("logs", converted).incidents
    assert incident["error_type"] == "ValueError" and len(incident["tags"]) == mapping.MAX_TAGS


def test_a_wide_value_is_read_to_the_cap():
    message = ExportLogsServiceRequest()
    record = message.resource_logs.add().scope_logs.add().log_records.add()
    _exception_attrs(record.attributes)
    wide = record.attributes.add(key="wide").value.array_value.values
    for i in range(50_000):
        wide.add().int_value = i
    converted = protobuf.decode("logs", message.SerializeToString())
    attributes = converted["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["attributes"]
    assert len(attributes[1]["value"]["arrayValue"]["values"]) == protobuf.MAX_ATTRIBUTES
    tag = mapping.find_incidents("logs", converted).incidents[0]["tags"]["wide"]
    assert tag == json.dumps(list(range(50_000)))[: mapping.MAX_TAG_VALUE]


def test_many_empty_containers_stop_at_the_container_budget(monkeypatch):
    monkeypatch.setattr(protobuf, "MAX_CONTAINERS", 10_000)
    spans = b"\x12\x00" * 50_000  # Span {} (field 2 of ScopeSpans), no events: read nothing
    scopes = (b"\x12" + varint(len(spans)) + spans) * 3
    request = b"\x0a" + varint(len(scopes)) + scopes
    converted = protobuf.decode("traces", request)
    assert converted.cut and converted["resourceSpans"] == []  # type: ignore[attr-defined]
    found = mapping.find_incidents("traces", converted)
    assert found.truncated and not found.incidents


def test_json_requests_are_read_to_the_same_caps(monkeypatch):
    """OTLP/JSON goes through the mapping's own caps: containers, attribute lists, arrays."""
    exc = {"key": "exception.type", "value": {"stringValue": "E"}}
    wide = [{"key": f"k{i}", "value": {"arrayValue": {"values": [{"intValue": "1"}] * 5000}}}
            for i in range(5000)]  # fmt: skip
    scope = {"logRecords": [{"attributes": [exc, *wide]}]}
    request = {"resourceLogs": [{"resource": {"attributes": wide}, "scopeLogs": [scope]}]}
    calls = 0
    real_any_value = mapping.any_value

    def counted(value: Any, depth: int = 0) -> Any:
        # a plain counter: mock's `wraps=` costs ~10 us a call, 25 s over these 2M calls
        nonlocal calls
        calls += 1
        return real_any_value(value, depth)

    monkeypatch.setattr(mapping, "any_value", counted)
    (incident,) = mapping.find_incidents("logs", request).incidents
    monkeypatch.setattr(mapping, "any_value", real_any_value)
    # two lists of 1,000 attributes, each an array cut to 1,000: not 2 x 5,000 x 5,001
    assert 0 < calls <= 2 * mapping.MAX_ATTRIBUTES * (mapping.MAX_ATTRIBUTES + 1) + 1
    assert incident["error_type"] == "E" and len(incident["tags"]) == mapping.MAX_TAGS
    monkeypatch.setattr(mapping, "MAX_CONTAINERS", 1000)
    scopes = {
        "resourceLogs": [{"scopeLogs": [{}] * 5000 + [{"logRecords": [{"attributes": [exc]}]}]}]
    }
    found = mapping.find_incidents("logs", scopes)
    assert found.truncated and not found.incidents and found.containers == 1001
