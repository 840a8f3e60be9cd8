"""Real events from other Sentry-compatible servers' corpora, replayed over HTTP.

Every event of ``tests/data/sentry_events`` (Bugsink's event-samples, GlitchTip's
incoming events: Python, JS, Node, Go, Java/Android, .NET, PHP, Elixir, Cocoa, native)
goes to a live server once as a ``store/`` body and once inside an envelope. Each must be
answered 200 with the id of a stored incident that says something (an error type or a
message), never a 5xx and never a 200 that stored nothing. For one event per platform
the stored incident is compared field by field with what the event says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

from ingest.models import Incident, Project
from tests.support.factories import ProjectWithKey, project_with_key

pytestmark = pytest.mark.django_db(transaction=True)

CORPUS = Path(__file__).resolve().parents[1] / "data" / "sentry_events"
FILES = sorted(CORPUS.rglob("*.json"))


def _name(path: Path) -> str:
    return str(path.relative_to(CORPUS))


def _envelope_parts(path: Path) -> tuple[dict[str, Any], list[tuple[dict, Any]]]:
    """(envelope header, [(item header, payload)]) for a file holding one event or an envelope.

    Most files are one event; GlitchTip keeps an Android SDK envelope as a JSON list of
    its lines (header, then item header and payload in turn).
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        header, rest = data[0], data[1:]
        return header, [(rest[i], rest[i + 1]) for i in range(0, len(rest) - 1, 2)]
    return {"event_id": data.get("event_id")}, [({"type": "event"}, data)]


def _event(path: Path) -> dict[str, Any]:
    _, items = _envelope_parts(path)
    return next(payload for header, payload in items if header.get("type") == "event")


def _auth(project: Project) -> dict[str, str]:
    return {
        "X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={project.sentry_key}, "
        "sentry_client=corpus-replay/1.0"
    }


def send_store(url: str, project: Project, event: dict[str, Any]) -> requests.Response:
    return requests.post(
        f"{url}/api/{project.pk}/store/",
        data=json.dumps(event).encode(),
        headers={**_auth(project), "Content-Type": "application/json"},
        timeout=30,
    )


def envelope_bytes(header: dict[str, Any], items: list[tuple[dict, Any]]) -> bytes:
    lines = [json.dumps({k: v for k, v in header.items() if v is not None}).encode()]
    for item_header, payload in items:
        body = json.dumps(payload).encode()
        lines += [json.dumps({**item_header, "length": len(body)}).encode(), body]
    return b"\n".join(lines) + b"\n"


def send_envelope(url: str, project: Project, body: bytes) -> requests.Response:
    return requests.post(
        f"{url}/api/{project.pk}/envelope/",
        data=body,
        headers={**_auth(project), "Content-Type": "application/x-sentry-envelope"},
        timeout=30,
    )


def _problem(project: Project, response: requests.Response) -> str | None:
    """Why this answer is not "stored, and saying something"; None when it is."""
    if response.status_code != 200:
        return f"{response.status_code}: {response.text[:300]}"
    event_id = response.json().get("id")
    if not event_id:
        return f"200 without an id: {response.text[:300]}"
    incident = Incident.objects.filter(project=project, event_id=event_id).first()
    if incident is None:
        return f"answered id {event_id} but no incident has it"
    if not (incident.error_type.strip() or incident.message.strip()):
        return "stored without an error type or a message"
    return None


def test_corpus_has_every_platform_we_claim():
    platforms = {_event(path).get("platform") for path in FILES}
    wanted = {"python", "javascript", "node", "go", "java", "csharp", "php", "cocoa", "native"}
    assert wanted <= platforms
    assert len(FILES) >= 200


def test_every_corpus_event_sent_to_store_is_stored(live_server):
    project = project_with_key("corpus-store").project
    problems = {}
    for path in FILES:
        problem = _problem(project, send_store(live_server.url, project, _event(path)))
        if problem:
            problems[_name(path)] = problem
    assert problems == {}


def test_every_corpus_event_sent_in_an_envelope_is_stored(live_server):
    project = project_with_key("corpus-envelope").project
    problems = {}
    for path in FILES:
        header, items = _envelope_parts(path)
        response = send_envelope(live_server.url, project, envelope_bytes(header, items))
        if problem := _problem(project, response):
            problems[_name(path)] = problem
    assert problems == {}


# One event per platform: what the stored incident must say, read back through the API
# by the id the server answered (as an SDK user would look it up).
EXPECTED = {
    "glitchtip-backend/python_zero_division.json": {
        "error_type": "ZeroDivisionError",
        "message": "division by zero",
        "frames": 6,
        "innermost": "get",
        "event_id": "dd9e1afb828a44d5b4df0183adaee5d8",
        "service": "2f96b0310f37",
    },
    "glitchtip-backend/small_js_error.json": {
        "error_type": "Error",
        "message": "this is an error",
        "frames": 3,
        "innermost": "?",
        "event_id": "00952c9936084f759aecdb0f195dd82f",
        "service": "unknown",
    },
    "bugsink-event-samples/sentry/node-exception-weird.json": {
        "error_type": "Error",
        "message": "bla",
        "frames": 10,
        "innermost": "NodeBackend.Object.<anonymous>.NodeBackend.eventFromException",
        "event_id": "9aaaf238694f4f90a01579872c118680",
        "service": "unknown",
    },
    "glitchtip-backend/go_file_not_found.json": {
        "error_type": "*os.PathError",
        "message": "open ./test.txt: no such file or directory",
        "frames": 1,
        "innermost": "main",
        "event_id": "af536c31b68a473f97e579507ce155e3",
        "service": "7337a9a27ac6",
    },
    "bugsink-event-samples/sentry/java-minimal.json": {
        "error_type": "java.lang.ArithmeticException",
        "message": "/ by zero",
        "frames": 55,
        "innermost": "home",
        "event_id": "1c373c00a6da473c869dda24823f2eb4",
        "service": "unknown",
    },
    "glitchtip-backend/android_sdk_envelope.json": {
        "error_type": "java.lang.Exception",
        "message": "This is a test.",
        "frames": 16,
        "innermost": "onCreate",
        "event_id": "45e4eb512da94cb2956b788e6932c2cd",
        "service": "com.example.androiderrorfactory@1.0+1",
    },
    # .NET: the type as .NET writes it, the assembly (with its PublicKeyToken) kept apart.
    "glitchtip-backend/dotnet_divide_zero.json": {
        "error_type": "System.DivideByZeroException",
        "message": "Attempted to divide by zero.",
        "frames": 5,
        "innermost": "DivideByZero",
        "event_id": "78d7a93554124469a5a1d33518a60373",
        "service": "52ff8bc29423",
    },
    "bugsink-event-samples/bugsink/laravel.json": {
        "error_type": "Exception",
        "message": "This is a test exception sent from the Sentry Laravel SDK.",
        "frames": 26,
        "innermost": "Sentry\\Laravel\\Console\\TestCommand::generateTestException",
        "event_id": None,  # the sample has none: the server makes one
        "service": "pop-os",
    },
    "bugsink-event-samples/sentry/swift-dealloc.json": {
        "error_type": "SIGABRT",
        "message": "Signal 6, Code 0 >\nAttempted to dereference garbage pointer 0x1e739f0.",
        "frames": 39,
        "innermost": "__pthread_kill",
        "event_id": "bc7770dcc5ac4bc4a3677fac84db23ac",
        "service": "unknown",
    },
    "bugsink-event-samples/sentry/native-windows-anon-namespace.json": {
        "error_type": "EXCEPTION_ACCESS_VIOLATION_WRITE",
        "message": "Fatal Error: EXCEPTION_ACCESS_VIOLATION_WRITE",
        "frames": 5,
        "innermost": "?A0xc3a0617d::crash",
        "event_id": "f79bf3f80cb444e0a2eda68ad7c95d93",
        "service": "unknown",
    },
    "glitchtip-backend/elixir_error.json": {
        "error_type": "UndefinedFunctionError",
        "message": "function FakeModule.fake_function/0 is undefined "
        "(module FakeModule is not available)",
        "frames": 0,
        "innermost": None,
        "event_id": "af7344af737b4811b76fc343679d6e0d",
        "service": "08e6ad5340a9",
    },
    # Python logging: the %s of logentry.message filled from its params.
    "glitchtip-backend/python_logging.json": {
        "error_type": "",
        "message": "This is a warning: warning",
        "frames": 0,
        "innermost": None,
        "event_id": "d2e68809a8524be4b1a1d314a1f159ec",
        "service": "78b41d5b387e",
    },
    # Go: an empty exception list and no message. Sentry keeps it unlabelled; so do we.
    "glitchtip-backend/very_small_event.json": {
        "error_type": "",
        "message": "<unlabeled event>",
        "frames": 0,
        "innermost": None,
        "event_id": "cf536c31b68a473f97e579507ce155e3",
        "service": "7",
    },
}


def _stored_summary(url: str, tenant: ProjectWithKey, event_id: str) -> dict[str, Any]:
    found = requests.get(
        f"{url}/api/v1/incidents", params={"event_id": event_id}, headers=tenant.auth, timeout=10
    )
    assert found.status_code == 200, found.text
    [incident] = found.json()["results"]
    frames = incident["exceptions"][-1]["frames"] if incident["exceptions"] else []
    return {
        "error_type": incident["error_type"],
        "message": incident["message"],
        "frames": len(frames),
        "innermost": frames[-1]["function"] if frames else None,
        "event_id": incident["event_id"],
        "service": incident["service"],
    }


@pytest.mark.parametrize("transport", ["store", "envelope"])
def test_one_event_per_platform_is_stored_as_it_says(live_server, transport):
    tenant = project_with_key(f"platforms-{transport}")
    got, want = {}, {}
    for name, expected in EXPECTED.items():
        header, items = _envelope_parts(CORPUS / name)
        if transport == "store":
            response = send_store(live_server.url, tenant.project, _event(CORPUS / name))
        else:
            body = envelope_bytes(header, items)
            response = send_envelope(live_server.url, tenant.project, body)
        assert response.status_code == 200, (name, response.text)
        event_id = response.json()["id"]
        got[name] = _stored_summary(live_server.url, tenant, event_id)
        want[name] = {**expected, "event_id": expected["event_id"] or event_id}
    assert got == want
