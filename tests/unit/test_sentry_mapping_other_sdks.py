"""Events other SDKs and versions send: fallbacks for service, timestamps, tags and
messages, and any JSON mapping without raising."""

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.schema import IncidentIn
from ingest.sentry.mapping import event_to_incident


def test_service_falls_back_to_server_release_then_unknown():
    assert event_to_incident({"tags": [["service", "a"]], "server_name": "b"})["service"] == "a"
    assert event_to_incident({"server_name": "b", "release": "c"})["service"] == "b"
    assert event_to_incident({"release": "c"})["service"] == "c"
    assert event_to_incident({})["service"] == "unknown"


def test_epoch_and_iso_timestamps_become_utc_iso():
    assert event_to_incident({"timestamp": 0})["occurred_at"] == "1970-01-01T00:00:00+00:00"
    got = event_to_incident({"timestamp": "2026-03-01T12:00:00.5+02:00"})["occurred_at"]
    assert got == "2026-03-01T10:00:00.500000+00:00"
    assert event_to_incident({"timestamp": "2026-03-01T12:00:00"})["occurred_at"].endswith("+00:00")
    for bad in ("yesterday", math.nan, 1e300, True, [1]):
        assert "occurred_at" not in event_to_incident({"timestamp": bad})


def test_tags_as_pairs_and_breadcrumbs_as_a_plain_list():
    incident = event_to_incident(
        {
            "tags": [["region", "eu"], ["bad"], ["n", 3], ["none", None]],
            "breadcrumbs": [
                {"timestamp": 1_700_000_000.25, "type": "http", "category": "httplib",
                 "data": {"method": "GET", "url": "http://m/v1", "status_code": 503}},
                "not a breadcrumb",
            ],
        }
    )  # fmt: skip
    assert incident["tags"] == {"region": "eu", "n": "3"}
    [log] = incident["logs"]
    assert log["level"] == "INFO"
    assert log["ts"] == "2023-11-14T22:13:20.250000+00:00"
    assert log["message"] == "method=GET url=http://m/v1 status_code=503"


def test_message_falls_back_to_logentry_then_message():
    assert (
        event_to_incident({"logentry": {"formatted": "a 1", "message": "a %s"}})["message"] == "a 1"
    )
    assert event_to_incident({"message": {"formatted": "b"}})["message"] == "b"
    event = {"exception": {"values": [{"type": "StopIteration", "value": ""}]}, "message": "c"}
    assert event_to_incident(event)["message"] == "c"


def test_non_builtin_exception_types_are_qualified_like_a_traceback():
    def chain(*values):
        return event_to_incident({"exception": {"values": list(values)}})

    assert chain({"type": "OutOfMemoryError", "module": "torch"})["error_type"] == (
        "torch.OutOfMemoryError"
    )
    assert chain({"type": "KeyError", "module": "builtins"})["error_type"] == "KeyError"
    assert chain({"type": "IllegalStateException", "module": "java.lang"})["error_type"] == (
        "java.lang.IllegalStateException"
    )
    context = chain(
        {"type": "KeyError", "mechanism": {"source": "__context__"}}, {"type": "ValueError"}
    )
    assert [e["relation"] for e in context["stacktrace"]] == [None, "context"]


def test_frames_without_in_app_are_judged_by_path_and_long_stacks_keep_both_ends():
    frames = [{"abs_path": f"/srv/app/step_{i}.py", "function": f"f{i}"} for i in range(400)]
    frames[-1] = {"filename": "/usr/lib/python3/dist-packages/numpy/core.py", "lineno": "7"}
    [exception] = event_to_incident(
        {"exception": {"values": [{"type": "E", "stacktrace": {"frames": frames}}]}}
    )["stacktrace"]
    kept = exception["frames"]
    assert len(kept) == 250
    assert (kept[0]["function"], kept[-2]["function"]) == ("f0", "f398")
    assert kept[0]["in_app"] is True
    assert (kept[-1]["in_app"], kept[-1]["lineno"]) == (False, 7)
    assert "vars" not in kept[0]


def test_a_message_event_keeps_its_attached_thread_stack():
    frame = {"filename": "app.py", "function": "tick", "lineno": 3, "in_app": True}
    incident = event_to_incident(
        {"message": "slow tick", "threads": {"values": [{"stacktrace": {"frames": [frame]}}]}}
    )
    [entry] = incident["stacktrace"]
    assert entry["message"] == "slow tick"
    assert entry["frames"][0]["function"] == "tick"


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=12,
)
_KNOWN = ["event_id", "timestamp", "tags", "server_name", "release", "environment",
          "exception", "logentry", "message", "breadcrumbs", "contexts", "sdk", "platform",
          "level", "threads", "stacktrace"]  # fmt: skip
_frame = st.dictionaries(
    st.sampled_from(["abs_path", "filename", "function", "lineno", "module", "in_app", "vars"]),
    _json,
)
_exception = st.dictionaries(
    st.sampled_from(["type", "value", "module", "mechanism", "stacktrace"]),
    _json | st.fixed_dictionaries({"frames": st.lists(_frame | _json, max_size=3)}),
)
_contexts = st.dictionaries(
    st.sampled_from(["inference", "gpu", "resource", "trace"]),
    _json | st.dictionaries(st.sampled_from(["model_id", "batch_size", "name", "seqLen"]), _json),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(st.sampled_from(_KNOWN) | st.text(max_size=8), _json)
    | st.fixed_dictionaries(
        {},
        optional={
            "exception": st.fixed_dictionaries({"values": st.lists(_exception, max_size=3)}),
            "breadcrumbs": st.lists(st.dictionaries(st.text(max_size=10), _json), max_size=3),
            "contexts": _contexts,
            "tags": _json,
            "timestamp": _json,
        },
    )
)
def test_any_json_event_maps_without_raising(event):
    incident = event_to_incident(event)
    assert isinstance(incident["service"], str) and incident["service"]
    assert isinstance(incident["message"], str)
    assert isinstance(incident["stacktrace"], list)
    assert isinstance(incident["logs"], list)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in incident["tags"].items())
    IncidentIn.model_validate(incident)  # nothing we produce is refused by the schema


@settings(deadline=None)
@given(_json.filter(lambda value: not isinstance(value, dict)))
def test_non_dict_events_map_to_an_unknown_incident(value):
    assert event_to_incident(value)["service"] == "unknown"
