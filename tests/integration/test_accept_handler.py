"""The accept POSTs skip the middleware they do not use (ingest/accept_handler.py): through
`webapp.wsgi.application` they answer what the full stack answers (status, every header,
body), refusals included, and a 202 is answered only once its inbox row is committed."""

from __future__ import annotations

import gzip
import io
import json
import sys
import uuid
from typing import Any

import pytest
from django.db import DEFAULT_DB_ALIAS, connections

from ingest.accept_handler import is_accept
from ingest.request_body import ChunkedBodyMiddleware
from tests.support.factories import project_with_key
from webapp import wsgi

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.inbox]


@pytest.fixture(autouse=True)
def _inbox_table(settings):
    """The inbox table's path (RCA_SPOOL_FIRST=false); the default, spool first, is
    tests/integration/test_json_spool_first.py's and test_sentry_spool_first.py's."""
    settings.RCA_SPOOL_FIRST = False


#: The full middleware stack behind the same WSGI wrapper as production's.
FULL = ChunkedBodyMiddleware(wsgi.django_application)


@pytest.fixture
def unlimited(settings):
    settings.RCA_RATE_LIMIT_PER_MINUTE = 0


def _environ(method: str, path: str, body: bytes, **headers: str) -> dict[str, Any]:
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }
    if "CONTENT_LENGTH" not in headers and "HTTP_TRANSFER_ENCODING" not in headers:
        environ["CONTENT_LENGTH"] = str(len(body))
    environ.update(headers)
    return environ


def _call(app, environ: dict[str, Any]) -> tuple[str, list[tuple[str, str]], bytes]:
    started: list[Any] = []
    out = app(environ, lambda status, headers, exc=None: started.append((status, headers)))
    try:
        body = b"".join(out)
    finally:
        if hasattr(out, "close"):
            out.close()
    status, headers = started[0]
    return status, sorted(headers), body


def _both(method: str, path: str, body: bytes, **headers: str):
    """The lean answer and the full stack's to the same request."""
    lean = _call(wsgi.application, _environ(method, path, body, **headers))
    full = _call(FULL, _environ(method, path, body, **headers))
    return lean, full


def _incident(event_id: str) -> bytes:
    return json.dumps({"service": "s", "message": "boom", "event_id": event_id}).encode()


def _stored_elsewhere(event_id: str) -> bool:
    """The inbox row, seen from another connection: committed, not just written."""
    other = connections.create_connection(DEFAULT_DB_ALIAS)
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT 1 FROM ingest_inboxitem WHERE event_id = %s", [event_id])
            return cursor.fetchone() is not None
    finally:
        other.close()


def test_only_the_accept_posts_take_the_lean_handler():
    assert is_accept({"REQUEST_METHOD": "POST", "PATH_INFO": "/api/v1/incidents"})
    assert is_accept({"REQUEST_METHOD": "POST", "PATH_INFO": "/api/12/envelope/"})
    assert is_accept({"REQUEST_METHOD": "POST", "PATH_INFO": "/api/12/store/"})
    for method, path in [
        ("GET", "/api/v1/incidents"),
        ("POST", "/api/v1/incidents/batch"),
        ("POST", "/api/v1/incidents/"),
        ("POST", "/api/x/envelope/"),
        ("POST", "/api/12/envelope"),
        ("POST", "/otlp/v1/logs"),
        ("POST", "/login/"),
    ]:
        assert not is_accept({"REQUEST_METHOD": method, "PATH_INFO": path}), (method, path)


def test_single_post_answers_as_the_full_stack_and_is_durable_first(unlimited):
    key = project_with_key("lean").key
    auth = {"CONTENT_TYPE": "application/json", "HTTP_AUTHORIZATION": f"Bearer {key}"}
    ids = [uuid.uuid4().hex, uuid.uuid4().hex]
    lean = _call(wsgi.application, _environ("POST", "/api/v1/incidents", _incident(ids[0]), **auth))
    assert _stored_elsewhere(ids[0])  # committed before the answer came back
    full = _call(FULL, _environ("POST", "/api/v1/incidents", _incident(ids[1]), **auth))
    assert lean[0] == full[0] == "202 Accepted"
    assert lean[1] == full[1]  # every header, security headers included
    assert lean[2] == full[2].replace(ids[1].encode(), ids[0].encode())
    # a retry of the same event id: 200 with the same fields, from either
    again, again_full = _both("POST", "/api/v1/incidents", _incident(ids[0]), **auth)
    assert again[0] == again_full[0] == "200 OK"
    assert again == again_full


@pytest.mark.parametrize(
    "headers, body",
    [
        ({"CONTENT_TYPE": "application/json", "HTTP_AUTHORIZATION": "Bearer rc_bad_key"}, None),
        ({"CONTENT_TYPE": "application/json"}, None),
        ({"CONTENT_TYPE": "text/plain", "HTTP_AUTHORIZATION": "{key}"}, None),
        ({"CONTENT_TYPE": "application/json", "HTTP_AUTHORIZATION": "{key}"}, b"[" * 40),
        ({"CONTENT_TYPE": "application/json", "HTTP_AUTHORIZATION": "{key}"}, b'{"x": 1}'),
        # oversized by its length, and chunked past the limit
        (
            {
                "CONTENT_TYPE": "application/json",
                "HTTP_AUTHORIZATION": "{key}",
                "CONTENT_LENGTH": "99999999",
            },
            None,
        ),
        (
            {
                "CONTENT_TYPE": "application/json",
                "HTTP_AUTHORIZATION": "{key}",
                "HTTP_TRANSFER_ENCODING": "chunked",
            },
            b"x" * (3 * 1024 * 1024),
        ),
        # a host not allowed
        ({"CONTENT_TYPE": "application/json", "HTTP_HOST": "evil.example"}, None),
    ],
)
def test_single_post_refusals_are_the_full_stacks(unlimited, headers, body):
    key = project_with_key("refused").key
    headers = {k: v.replace("{key}", f"Bearer {key}") for k, v in headers.items()}
    sent = body if body is not None else _incident(uuid.uuid4().hex)
    lean, full = _both("POST", "/api/v1/incidents", sent, **headers)
    assert lean[0][:3] in ("400", "401", "413", "415")
    assert lean == full


def _envelope(project, event_id: str) -> bytes:
    header = json.dumps({"event_id": event_id}).encode()
    event = json.dumps(
        {
            "event_id": event_id,
            "level": "error",
            "exception": {"values": [{"type": "RuntimeError", "value": "boom"}]},
        }
    ).encode()
    item = json.dumps({"type": "event", "length": len(event)}).encode()
    return gzip.compress(b"\n".join([header, item, event]))


@pytest.mark.parametrize("kind", ["envelope", "store"])
def test_sentry_posts_answer_as_the_full_stack(unlimited, kind):
    project = project_with_key("sentry-lean").project
    path = f"/api/{project.pk}/{kind}/"
    good = f"Sentry sentry_key={project.sentry_key}, sentry_version=7"
    headers = {"HTTP_CONTENT_ENCODING": "gzip", "HTTP_X_SENTRY_AUTH": good}
    ids = [uuid.uuid4().hex, uuid.uuid4().hex]
    bodies = [_envelope(project, i) for i in ids]
    if kind == "store":
        bodies = [gzip.compress(json.dumps({"event_id": i, "message": "m"}).encode()) for i in ids]
    lean = _call(wsgi.application, _environ("POST", path, bodies[0], **headers))
    assert _stored_elsewhere(ids[0])
    full = _call(FULL, _environ("POST", path, bodies[1], **headers))
    assert lean[0] == full[0] == "200 OK"
    assert lean[1] == full[1]
    assert lean[2] == full[2].replace(ids[1].encode(), ids[0].encode())
    wrong = {**headers, "HTTP_X_SENTRY_AUTH": "Sentry sentry_key=" + "0" * 32}
    for refused in (
        _both("POST", path, bodies[0], **wrong),
        _both("POST", path, gzip.compress(b"not json\n{"), **headers),
        _both("POST", path, b"\x1f\x8b broken", **headers),
        _both("POST", path, bodies[0], **{**headers, "CONTENT_LENGTH": "999999999"}),
    ):
        lean_refusal, full_refusal = refused
        assert lean_refusal[0][:1] == "4"
        assert lean_refusal == full_refusal
