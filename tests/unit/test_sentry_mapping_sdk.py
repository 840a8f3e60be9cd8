"""What a service reporting through the real sentry-sdk becomes as a Rootcause incident."""

from datetime import datetime
from pathlib import Path

import pytest
import sentry_sdk
from sentry_sdk.transport import Transport

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


def _client(**options) -> sentry_sdk.Client:
    return sentry_sdk.Client(
        dsn="http://abc123@127.0.0.1:9/42",
        transport=ListTransport,
        default_integrations=False,
        auto_enabling_integrations=False,
        project_root=str(ROOT),
        release="ranker@1.4.2",
        environment="staging",
        server_name="gpu-node-7",
        **options,
    )


@pytest.fixture
def sentry(request):
    """A real SDK client bound to a private isolation scope, so nothing leaks between tests.

    Options a test needs pinned (whose defaults differ between SDK majors) come from
    `@pytest.mark.parametrize("sentry", [{...}], indirect=True)`.
    """
    client = _client(**getattr(request, "param", {}))
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


# sentry-sdk 3 attaches the caller's stack to messages by default (`attach_stacktrace`
# became True); 2.x did not. Both settings are pinned so the test means the same under either.
@pytest.mark.parametrize("sentry", [{"attach_stacktrace": False}], indirect=True)
def test_a_captured_message_has_no_error_type(sentry):
    sentry_sdk.capture_message("queue is full", level="warning")

    [incident] = incidents(sentry)
    assert incident["message"] == "queue is full"
    assert "error_type" not in incident
    assert not incident.get("stacktrace")
    assert incident["tags"]["level"] == "warning"


@pytest.mark.parametrize("sentry", [{"attach_stacktrace": True}], indirect=True)
def test_a_message_with_the_callers_stack_keeps_its_frames_and_is_still_no_exception(sentry):
    sentry_sdk.capture_message("queue is full", level="warning")

    [incident] = incidents(sentry)
    assert "error_type" not in incident
    [stack] = incident["stacktrace"]
    assert not stack["type"]
    functions = [frame["function"] for frame in stack["frames"]]
    assert "test_a_message_with_the_callers_stack_keeps_its_frames_and_is_still_no_exception" in (
        functions
    )


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
