"""A Sentry event is accepted as the fields the mapping reads and mapped by the processor
(`ingest/sentry/deferred.py`): what the inbox keeps must map to exactly what the whole
event mapped to, and carry the id the stored incident will have."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.sentry.deferred import MAPPED_FIELDS, incident_payload, raw_payload
from ingest.sentry.mapping import event_to_incident
from tests.unit.test_sentry_mapping_other_sdks import _KNOWN, _exception, _json

# Frames with every key an SDK sends that the mapping reads, written out here (not taken from
# the module under test), and ones it does not read (the source around the line).
_sdk_frame = st.dictionaries(
    st.sampled_from(
        ["abs_path", "filename", "function", "raw_function", "symbol", "lineno", "module"]
        + ["package", "context_line", "in_app", "vars", "pre_context", "post_context", "platform"]
    ),
    st.text(max_size=12) | st.integers(0, 10**8) | st.booleans() | _json,
)
_stack = st.fixed_dictionaries({"frames": st.lists(_sdk_frame | _json, max_size=4)}) | _json
_sdk_exception = st.fixed_dictionaries(
    {"type": st.text(max_size=8), "value": st.text(max_size=12), "stacktrace": _stack}
)


_events = st.dictionaries(
    st.sampled_from(_KNOWN + ["modules", "extra", "request", "debug_meta", "user"])
    | st.text(max_size=8),
    _json,
) | st.fixed_dictionaries(
    {},
    optional={
        "event_id": st.uuids().map(str) | st.text(max_size=40),
        "exception": st.fixed_dictionaries(
            {"values": st.lists(_exception | _sdk_exception, max_size=3)}
        ),
        "modules": st.dictionaries(st.text(max_size=10), st.text(max_size=10)),
        "sdk": st.dictionaries(
            st.sampled_from(["name", "version", "integrations", "packages"]), _json
        )
        | _json,
        "logentry": _json,
        "stacktrace": _stack,
        "threads": st.fixed_dictionaries(
            {"values": st.lists(st.fixed_dictionaries({"stacktrace": _stack}), max_size=2)}
        )
        | st.lists(st.dictionaries(st.sampled_from(["id", "crashed", "stacktrace"]), _stack)),
    },
)
_envelope_ids = st.none() | st.uuids().map(lambda u: u.hex) | st.text(max_size=40)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_events, _envelope_ids)
def test_the_kept_fields_map_to_what_the_whole_event_mapped_to(event, envelope_id):
    whole = copy.deepcopy(event)
    kept = raw_payload(event, envelope_id)
    assert event == whole  # the request's parsed event is not changed
    assert set(kept) <= MAPPED_FIELDS
    assert event_to_incident(kept) == event_to_incident(event, envelope_id)
    incident_payload(kept)  # and it validates, as the request used to check


def test_an_sdk_s_modules_and_extra_are_not_queued_and_the_id_is_normalised():
    event = {
        "event_id": "6B7D9E0A-1C2F-4A3B-8D4E-5F6A7B8C9D0E",
        "message": "CUDA out of memory",
        "modules": {"torch": "2.4.0"},
        "extra": {"sys.argv": ["serve.py"]},
        "request": {"headers": {"Authorization": "Bearer x"}},
        "sdk": {"name": "sentry.python", "version": "2.76.0", "integrations": ["logging"]},
    }
    kept = raw_payload(event)
    assert kept == {
        "event_id": "6b7d9e0a1c2f4a3b8d4e5f6a7b8c9d0e",
        "message": "CUDA out of memory",
        "sdk": {"name": "sentry.python", "version": "2.76.0"},
    }


def test_frames_lose_their_surrounding_source_lines_and_keep_what_is_mapped():
    frame = {
        "filename": "serve.py",
        "lineno": 88,
        "context_line": "    y = model(x)",
        "pre_context": ["def predict(x):"] * 5,
        "post_context": ["    return y"] * 5,
        "vars": {"x": "tensor(...)"},
        "in_app": True,
    }
    event = {"exception": {"values": [{"type": "E", "stacktrace": {"frames": [frame]}}]}}
    [kept_frame] = raw_payload(event)["exception"]["values"][0]["stacktrace"]["frames"]
    assert "pre_context" not in kept_frame and "post_context" not in kept_frame
    assert kept_frame["vars"] == {"x": "tensor(...)"} and kept_frame["lineno"] == 88


def test_the_envelope_id_stands_in_and_an_unusable_id_is_dropped():
    assert raw_payload({"message": "m"}, "AB" * 16)["event_id"] == "ab" * 16
    assert "event_id" not in raw_payload({"message": "m", "event_id": "no spaces allowed"})
