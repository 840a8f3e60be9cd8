"""OTLP export requests -> incidents: any JSON the attacker writes maps without error."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ingest.otlp import mapping
from ingest.otlp.decode import hex_id
from ingest.schema import IncidentIn

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                 max_size=4),
    max_leaves=30,
)  # fmt: skip
attribute = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["exception.type", "exception.message", "exception.stacktrace",
                                "service.name", "http.route", "x"]) | st.text(max_size=8),
        "value": st.fixed_dictionaries({}, optional={
            "stringValue": st.text(max_size=50), "intValue": st.text(max_size=25),
            "doubleValue": json_values, "kvlistValue": json_values, "arrayValue": json_values}),
    }
)  # fmt: skip
record = st.fixed_dictionaries(
    {},
    optional={
        "attributes": st.lists(attribute, max_size=5) | json_values,
        "timeUnixNano": st.text(max_size=25) | st.integers(),
        "traceId": st.text(max_size=40), "spanId": st.text(max_size=20),
        "body": json_values, "severityText": json_values,
    },
)  # fmt: skip
logs_request = st.fixed_dictionaries(
    {"resourceLogs": st.lists(st.fixed_dictionaries({
        "resource": st.fixed_dictionaries({"attributes": st.lists(attribute, max_size=3)}),
        "scopeLogs": st.lists(st.fixed_dictionaries({"logRecords": st.lists(record, max_size=4)}),
                              max_size=2)}), max_size=2) | json_values}
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(logs_request)
@example(  # found by Hypothesis in CI: a whitespace-only message and no exception type
    {"resourceLogs": [{"resource": {"attributes": []}, "scopeLogs": [{"logRecords": [
        {"attributes": [{"key": "exception.message", "value": {"stringValue": " \u2028"}}]},
        {"attributes": [{"key": "exception.type", "value": {"stringValue": "\t"}}],
         "body": {"stringValue": "\n"}},
    ]}]}]}
)  # fmt: skip
def test_any_logs_request_maps_to_valid_incidents_or_none(request):
    found = mapping.find_incidents("logs", request)
    for incident in found.incidents:
        IncidentIn.model_validate(incident)  # what accept will check: never refused by us
        assert incident["event_id"].startswith("otlp-")


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_any_json_at_all_never_raises(value):
    mapping.find_incidents("traces", {"resourceSpans": value})
    mapping.find_incidents("logs", {"resourceLogs": value})


def test_deeply_nested_attribute_values_are_cut():
    value: dict = {"stringValue": "leaf"}
    for _ in range(1000):
        value = {"arrayValue": {"values": [value]}}
    flat = mapping.any_value(value)
    depth = 0
    while isinstance(flat, list) and flat:
        flat, depth = flat[0], depth + 1
    assert depth <= mapping.MAX_VALUE_DEPTH


def test_a_request_is_read_only_up_to_its_record_budget(monkeypatch):
    monkeypatch.setattr(mapping, "MAX_RECORDS", 10)
    exc = [{"key": "exception.type", "value": {"stringValue": "ValueError"}}]
    request = {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"attributes": exc}] * 50}]}]}
    found = mapping.find_incidents("logs", request)
    assert found.truncated and len(found.incidents) == 10


def test_ids_are_hex_of_the_right_size_or_dropped():
    assert hex_id("5B8EFFF798038103D269B633813FC60C", 16) == "5b8efff798038103d269b633813fc60c"
    assert hex_id("zz" * 16, 16) == ""
    assert hex_id("ab", 8) == ""


def test_numbers_no_float_or_clock_holds_are_kept_without_error():
    """JSON's 1e999 (infinity) and a 400-digit int overflowed int() / float() (a 500)."""
    huge, inf = 10**400, float("inf")
    attrs = [
        {"key": "exception.type", "value": {"stringValue": "E"}},
        {"key": "as_int", "value": {"intValue": inf}},
        {"key": "as_double", "value": {"doubleValue": huge}},
    ]
    records = [{"attributes": attrs, "timeUnixNano": t} for t in (huge, str(huge), inf, -inf)]
    request = {"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}
    found = mapping.find_incidents("logs", request)
    assert len(found.incidents) == 4
    for incident in found.incidents:
        IncidentIn.model_validate(incident)
        assert "occurred_at" not in incident
        assert incident["tags"]["as_int"] == "inf"
