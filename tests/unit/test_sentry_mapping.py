"""What a service reporting through the real sentry-sdk becomes as a Rootcause incident."""

import math
from datetime import datetime
from pathlib import Path

import pytest
import sentry_sdk
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sentry_sdk.transport import Transport

from ingest.derive import derive
from ingest.schema import IncidentIn
from ingest.sentry.envelope import events_from_envelope
from ingest.sentry.mapping import event_to_incident

ROOT = Path(__file__).resolve().parents[2]
THIS_FILE = str(Path(__file__).resolve())


class ListTransport(Transport):
    """Keeps the serialised envelopes instead of sending them: no network in tests."""

    def __init__(self, options=None):
        super().__init__(options)
        self.bodies: list[bytes] = []

    def capture_envelope(self, envelope):
        self.bodies.append(envelope.serialize())


@pytest.fixture
def sentry():
    """A real SDK client bound to a private isolation scope, so nothing leaks between tests."""
    client = sentry_sdk.Client(
        dsn="http://abc123@127.0.0.1:9/42",
        transport=ListTransport,
        default_integrations=False,
        auto_enabling_integrations=False,
        project_root=str(ROOT),
        release="ranker@1.4.2",
        environment="staging",
        server_name="gpu-node-7",
    )
    with sentry_sdk.isolation_scope() as scope:
        scope.clear()  # a fork of the outer scope: drop what earlier tests left there
        scope.set_client(client)
        yield client.transport
    client.close()


def incidents(transport: ListTransport) -> list[dict]:
    """The wire bytes the SDK produced, through our parser and mapping, valid for our schema."""
    found = [
        event_to_incident(event)
        for body in transport.bodies
        for event in events_from_envelope(body)
    ]
    for incident in found:
        IncidentIn.model_validate(incident)
    return found


def load_config(settings_: dict) -> int:
    return settings_["batch_size"]


def configure(settings_: dict) -> int:
    try:
        return load_config(settings_)
    except KeyError as exc:
        raise ValueError("config has no batch_size") from exc


def test_a_chained_exception_becomes_the_chain_oldest_first(sentry):
    sentry_sdk.set_tag("service", "ranker")
    try:
        configure({"api_token": "sk-live-123"})
    except ValueError:
        sentry_sdk.capture_exception()

    [incident] = incidents(sentry)
    assert incident["error_type"] == "ValueError"
    assert incident["message"] == "config has no batch_size"
    assert incident["service"] == "ranker"
    cause, raised = incident["stacktrace"]
    assert (cause["type"], cause["message"], cause["relation"]) == (
        "KeyError",
        "'batch_size'",
        None,
    )
    assert (raised["type"], raised["relation"]) == ("ValueError", "cause")
    # caller to callee, as in a Python traceback
    assert [f["function"] for f in cause["frames"]] == ["configure", "load_config"]
    assert [f["function"] for f in raised["frames"]][-1] == "configure"
    innermost = cause["frames"][-1]
    assert innermost["filename"] == THIS_FILE
    assert innermost["module"] == __name__
    assert innermost["in_app"] is True
    assert innermost["context_line"] == 'return settings_["batch_size"]'
    assert innermost["lineno"] > 0
    # locals stay available (the ingest pipeline scrubs them), always as text
    assert "api_token" in innermost["vars"]["settings_"]
    assert all(isinstance(v, str) for f in cause["frames"] for v in f["vars"].values())


def test_a_torch_shape_error_keeps_library_frames_out_of_app(sentry):
    torch = pytest.importorskip("torch")
    try:
        torch.nn.Linear(512, 10)(torch.randn(4, 256))
    except RuntimeError:
        sentry_sdk.capture_exception()

    [incident] = incidents(sentry)
    assert incident["error_type"] == "RuntimeError"
    assert "4x256 and 512x10" in incident["message"]
    frames = incident["stacktrace"][-1]["frames"]
    assert frames[0]["filename"] == THIS_FILE
    assert frames[0]["in_app"] is True
    assert frames[-1]["module"] == "torch.nn.modules.linear"
    assert frames[-1]["function"] == "forward"
    assert all(f["in_app"] is False for f in frames[1:])


def test_breadcrumbs_contexts_and_tags_arrive(sentry):
    sentry_sdk.add_breadcrumb(
        message="loaded weights", category="model", level="info", data={"shards": 4}
    )
    sentry_sdk.add_breadcrumb(message="batch padded", category="inference", level="warning")
    sentry_sdk.set_context(
        "inference",
        {
            "model_id": "bert-base",
            "model_version": 3,
            "input_hash": "sha256:ab12",
            "quantization": "int8",
            "batch_size": 32,
            "seq_len": "512",
            "framework": "torch",
            "framework_version": "2.3.1",
            "notes": "not part of the schema",
        },
    )
    sentry_sdk.set_context("gpu", {"name": "NVIDIA A100-SXM4-80GB", "memory_size": 81920})
    sentry_sdk.set_context("resource", {"cpu_peak_percent": 97.5, "memoryDeltaMB": 2048})
    sentry_sdk.set_tag("region", "eu-west-1")
    try:
        raise MemoryError("out of memory")
    except MemoryError:
        sentry_sdk.capture_exception()

    [incident] = incidents(sentry)
    [event] = [events_from_envelope(body)[0] for body in sentry.bodies]
    assert incident["event_id"] == event["event_id"]
    assert incident["environment"] == "staging"
    assert incident["service"] == "gpu-node-7"  # no service tag: the host names it
    assert datetime.fromisoformat(incident["occurred_at"]).utcoffset().total_seconds() == 0
    first, second = incident["logs"]
    assert first["level"] == "INFO"
    assert (first["message"], first["category"], first["data"]) == (
        "loaded weights",
        "model",
        {"shards": 4},
    )
    assert datetime.fromisoformat(first["ts"]) <= datetime.fromisoformat(incident["occurred_at"])
    assert (second["level"], second["message"]) == ("WARNING", "batch padded")
    assert incident["inference_context"] == {
        "model_id": "bert-base",
        "model_version": "3",
        "input_hash": "sha256:ab12",
        "quantization": "int8",
        "batch_size": 32,
        "seq_len": 512,
        "framework": "torch",
        "framework_version": "2.3.1",
        "device": "NVIDIA A100-SXM4-80GB",
    }
    assert incident["resource_impact"] == {"cpu_peak_percent": 97.5, "memory_delta_mb": 2048.0}
    tags = incident["tags"]
    assert tags["region"] == "eu-west-1"
    assert (tags["release"], tags["platform"], tags["level"]) == ("ranker@1.4.2", "python", "error")
    assert (tags["sdk.name"], tags["sdk.version"]) == ("sentry.python", sentry_sdk.VERSION)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in tags.items())


def test_a_captured_message_has_no_error_type(sentry):
    sentry_sdk.capture_message("queue is full", level="warning")

    [incident] = incidents(sentry)
    assert incident["message"] == "queue is full"
    assert "error_type" not in incident
    assert incident["stacktrace"] == []
    assert incident["tags"]["level"] == "warning"


def test_an_exception_group_ends_with_the_group(sentry):
    try:
        raise ExceptionGroup("two shards failed", [ValueError("shard 0"), KeyError("shard 1")])
    except ExceptionGroup:
        sentry_sdk.capture_exception()

    [incident] = incidents(sentry)
    assert incident["error_type"] == "ExceptionGroup"
    assert {e["type"] for e in incident["stacktrace"][:-1]} == {"ValueError", "KeyError"}
    # group members are not linked to one another: no cause or context between them
    assert [e["relation"] for e in incident["stacktrace"]] == [None, None, None]


# --- events other SDKs and versions send -----------------------------------------------


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


# --- platforms, log entries, ids and ML context (issue 21) -----------------------------


def _raised(platform: str, **exception) -> dict:
    incident = event_to_incident({"platform": platform, "exception": {"values": [exception]}})
    IncidentIn.model_validate(incident)
    return incident


DOTNET_ASSEMBLY = (
    "System.Private.CoreLib, Version=4.0.0.0, Culture=neutral, PublicKeyToken=7cec85d7bea7798e"
)


@pytest.mark.parametrize(
    ("platform", "exception", "error_type", "module"),
    [
        ("csharp", {"type": "System.InvalidOperationException", "module": DOTNET_ASSEMBLY},
         "System.InvalidOperationException", DOTNET_ASSEMBLY),
        ("java", {"type": "IllegalStateException", "module": "java.lang"},
         "java.lang.IllegalStateException", "java.lang"),
        ("java", {"type": "Outer$Inner", "module": "com.acme"}, "com.acme.Outer$Inner", "com.acme"),
        ("python", {"type": "OutOfMemoryError", "module": "torch.cuda"},
         "torch.cuda.OutOfMemoryError", "torch.cuda"),
        ("go", {"type": "*os.PathError", "module": "os"}, "*os.PathError", "os"),
        ("javascript", {"type": "TypeError"}, "TypeError", None),
        ("node", {"type": "Error", "module": "app:///dist/main.js"}, "Error", "app:///dist/main.js"),
        ("php", {"type": "App\\Exceptions\\Broken"}, "App\\Exceptions\\Broken", None),
        ("ruby", {"type": "ActiveRecord::RecordNotFound", "module": "ActiveRecord"},
         "ActiveRecord::RecordNotFound", "ActiveRecord"),
        ("cocoa", {"type": "NSInvalidArgumentException", "module": "CoreFoundation"},
         "NSInvalidArgumentException", "CoreFoundation"),
        ("cocoa", {"mechanism": {"meta": {"ns_error": {"domain": "NSURLErrorDomain", "code": -1}}}},
         "NSURLErrorDomain", None),
        ("native", {"mechanism": {"meta": {"signal": {"name": "SIGSEGV", "number": 11}}}},
         "SIGSEGV", None),
        ("native", {"mechanism": {"meta": {"mach_exception": {"name": "EXC_BAD_ACCESS"}}}},
         "EXC_BAD_ACCESS", None),
    ],
)  # fmt: skip
def test_exception_types_as_each_platform_writes_them_with_the_module_apart(
    platform, exception, error_type, module
):
    incident = _raised(platform, **exception)
    assert incident["error_type"] == error_type
    assert incident["stacktrace"][-1].get("module") == module


@pytest.mark.parametrize(
    ("logentry", "message"),
    [
        ({"message": "Error during cleanup of %s: %s", "params": ["todo-1", "boom"]},
         "Error during cleanup of todo-1: boom"),
        ({"message": "%d of %i GPUs lost, %.1f%% left", "params": [3, 8.0, 62.5]},
         "3 of 8 GPUs lost, 62.5% left"),
        ({"message": "cleanup of %(one)s: %(two)r", "params": {"one": "a", "two": "b"}},
         "cleanup of a: 'b'"),
        ({"message": "batch {0} of {1}", "params": [4, 10]}, "batch 4 of 10"),
        ({"message": "Here is a new {foo}", "params": {"foo": "error"}}, "Here is a new error"),
        ({"message": "{} then {}", "params": ["a", {"b": 1}]}, 'a then {"b": 1}'),
        # formatted wins, even when it still shows a placeholder (as the PHP SDK sends it)
        ({"message": "like {foo}", "params": {"foo": "x"}, "formatted": "like {foo}"},
         "like {foo}"),
        # params that do not fit keep the template, as Sentry keeps it
        ({"message": "lost %s and %s", "params": ["one"]}, "lost %s and %s"),
        ({"message": "count %d", "params": ["many"]}, "count %d"),
        ({"message": "no placeholders", "params": ["unused"]}, "no placeholders"),
        ("a plain string as logentry", "a plain string as logentry"),
    ],
)  # fmt: skip
def test_logentry_params_are_filled_as_sentry_fills_them(logentry, message):
    assert event_to_incident({"logentry": logentry})["message"] == message
    assert event_to_incident({"message": logentry})["message"] == message


def test_a_template_that_repeats_a_huge_param_is_cut_not_built():
    event = {"logentry": {"message": "%(a)s" * 10_000, "params": {"a": "x" * 10_000}}}
    assert len(event_to_incident(event)["message"]) == 65_536


def test_ml_tags_and_contexts_become_the_inference_context():
    incident = event_to_incident(
        {
            "message": "CUDA out of memory",
            "tags": {"model": "ranker-v3", "model.version": "3.1", "batch_size": "32"},
            "contexts": {"gpu": {"name": "NVIDIA A10G", "memory_size": 23028}},
        }
    )
    assert incident["inference_context"] == {
        "model_id": "ranker-v3",
        "model_version": "3.1",
        "device": "NVIDIA A10G",
        "batch_size": 32,
    }
    structured = event_to_incident(
        {
            "message": "m",
            "tags": {"model": "from-tag"},
            "contexts": {"model": {"name": "from-context", "version": "7"}},
        }
    )
    assert structured["inference_context"] == {"model_id": "from-context", "model_version": "7"}


@pytest.mark.parametrize(
    "spelling",
    ["8f0c2e4b9a7d4c1e8b3a6f5d2c1b0a99", "8F0C2E4B-9A7D-4C1E-8B3A-6F5D2C1B0A99",
     "{8f0c2e4b-9a7d-4c1e-8b3a-6f5d2c1b0a99}"],
)  # fmt: skip
def test_event_ids_are_32_lowercase_hex_digits(spelling):
    assert event_to_incident({"event_id": spelling})["event_id"] == (
        "8f0c2e4b9a7d4c1e8b3a6f5d2c1b0a99"
    )


def test_the_envelope_headers_id_stands_in_only_for_a_missing_one():
    assert event_to_incident({}, envelope_event_id="AB" * 16)["event_id"] == "ab" * 16
    assert event_to_incident({"event_id": "cd" * 16}, "ab" * 16)["event_id"] == "cd" * 16
    assert "event_id" not in event_to_incident({"event_id": "no spaces allowed"}, None)


@pytest.mark.parametrize(
    "event",
    [
        {"event_id": "ab" * 16, "platform": "go", "exception": []},
        {"exception": {"values": [{}]}},
        {"level": "error", "threads": [{"stacktrace": {"frames": [{"function": "run"}]}}]},
    ],
)
def test_an_event_with_nothing_to_title_it_is_unlabelled_not_dropped(event):
    incident = event_to_incident(event)
    assert incident["message"] == "<unlabeled event>"
    IncidentIn.model_validate(incident)


def test_the_sdks_fingerprint_is_kept_for_grouping():
    got = event_to_incident({"message": "m", "fingerprint": ["{{ default }}", 42, "", None]})
    assert got["fingerprint"] == ["{{ default }}", "42"]


def test_a_native_crash_takes_its_frames_from_the_crashed_thread():
    frames = [{"function": "main", "package": "/usr/bin/app"}, {"function": "crash"}]
    incident = event_to_incident(
        {
            "platform": "native",
            "exception": {"values": [{"type": "SIGSEGV", "thread_id": 7}]},
            "threads": {"values": [{"id": 1, "stacktrace": {"frames": [{"function": "idle"}]}},
                                   {"id": 7, "stacktrace": {"frames": frames}}]},
        }
    )  # fmt: skip
    assert [f["function"] for f in incident["stacktrace"][-1]["frames"]] == ["main", "crash"]
    assert incident["stacktrace"][-1]["frames"][0]["module"] == "/usr/bin/app"


def test_log_messages_group_by_their_template_as_in_sentry():
    def fingerprint(event):
        return derive(IncidentIn.model_validate(event_to_incident(event)).payload()).fingerprint

    def cleanup(job, error):
        return {"logentry": {"message": "Cleanup of %s failed: %s", "params": [job, error]}}

    assert fingerprint(cleanup("nightly-eu", "disk full")) == fingerprint(
        cleanup("hourly-us", "timeout")
    )
    assert fingerprint(cleanup("a", "b")) != fingerprint(
        {"logentry": {"message": "Upload of %s failed: %s", "params": ["a", "b"]}}
    )
    sdk_says = {**cleanup("a", "b"), "fingerprint": ["cleanup"]}
    assert event_to_incident(sdk_says)["fingerprint"] == ["cleanup"]
    raised = {**cleanup("a", "b"), "exception": {"values": [{"type": "OSError"}]}}
    assert "fingerprint" not in event_to_incident(raised)
