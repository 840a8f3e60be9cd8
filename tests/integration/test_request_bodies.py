"""Bodies of any framing over a real gunicorn (the server `make run` and compose start):
chunked requests are read to their end within the limit, a chunked body over the limit
is a 413 before its end arrives, and envelope items are limited one by one."""

from __future__ import annotations

import gzip
import http.client
import json
import uuid
from collections.abc import Iterator

import pytest
from django.db import connection

from ingest.models import Incident
from tests.support.factories import project_with_key, shape_error
from tests.support.gunicorn import Gunicorn

pytestmark = pytest.mark.django_db(transaction=True)
MiB = 1024 * 1024


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Gunicorn]:
    with django_db_blocker.unblock():
        db = dict(connection.settings_dict)
    gunicorn = Gunicorn(db, tmp_path_factory.mktemp("gunicorn") / "web.log")
    try:
        gunicorn.wait_ready()
        yield gunicorn
    finally:
        gunicorn.stop()


def sentry_auth(key: str) -> dict[str, str]:
    return {"X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={key}, sentry_client=t/1"}


def envelope(event_id: str, message: str, *extra_items: tuple[dict, bytes]) -> bytes:
    event = json.dumps(
        {
            "event_id": event_id,
            "platform": "node",
            "exception": {"values": [{"type": "TypeError", "value": message}]},
        }
    ).encode()
    lines = [json.dumps({"event_id": event_id}).encode(), b'{"type":"event"}', event]
    for header, payload in extra_items:
        lines += [json.dumps({**header, "length": len(payload)}).encode(), payload]
    return b"\n".join(lines) + b"\n"


def pieces(body: bytes, size: int = 1000) -> Iterator[bytes]:
    """A generator body: http.client sends it chunked, with no Content-Length."""
    for start in range(0, len(body), size):
        yield body[start : start + size]


def post_chunked(
    server: Gunicorn, path: str, body: bytes, headers: dict[str, str]
) -> tuple[int, dict, http.client.HTTPResponse]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request("POST", path, body=pieces(body), headers=headers, encode_chunked=True)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"null"), resp
    finally:
        conn.close()


@pytest.mark.parametrize("encoding", [None, "gzip"])
def test_chunked_envelope_without_content_length_is_stored(server, encoding):
    tenant = project_with_key(f"node-{encoding}")
    event_id = uuid.uuid4().hex
    body = envelope(event_id, "Cannot read properties of undefined (reading 'shape')")
    headers = {**sentry_auth(tenant.project.sentry_key), "Content-Type": "text/plain"}
    if encoding:
        body, headers["Content-Encoding"] = gzip.compress(body), encoding
    status, answer, _ = post_chunked(server, f"/api/{tenant.project.pk}/envelope/", body, headers)
    assert status == 200, answer
    assert answer["id"] == event_id
    incident = Incident.objects.get(project=tenant.project, event_id=event_id)
    assert incident.error_type == "TypeError"
    assert "reading 'shape'" in incident.message


def test_chunked_store_body_is_stored(server):
    tenant = project_with_key("node-store")
    event_id = uuid.uuid4().hex
    event = {"event_id": event_id, "message": "worker lost its CUDA context", "level": "error"}
    status, answer, _ = post_chunked(
        server,
        f"/api/{tenant.project.pk}/store/",
        json.dumps(event).encode(),
        {**sentry_auth(tenant.project.sentry_key), "Content-Type": "application/json"},
    )
    assert status == 200, answer
    assert Incident.objects.filter(project=tenant.project, event_id=event_id).exists()


def test_chunked_json_api_incident_is_accepted(server):
    tenant = project_with_key("chunked-json")
    status, answer, _ = post_chunked(
        server,
        "/api/v1/incidents",
        json.dumps(shape_error(batch=8)).encode(),
        {**tenant.auth, "Content-Type": "application/json"},
    )
    assert status == 202, answer
    assert Incident.objects.get(pk=answer["incident_id"]).service == "ranker"


def test_chunked_body_over_the_limit_is_a_413_before_its_end_arrives(server):
    """The server stops reading at limit + 1 and answers; the last chunk is never sent."""
    tenant = project_with_key("chunked-big")
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.putrequest("POST", "/api/v1/incidents")
        for name, value in {**tenant.auth, "Content-Type": "application/json"}.items():
            conn.putheader(name, value)
        conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        chunk = b"x" * 65536
        for _ in range(MiB // len(chunk) + 1):  # 1 MiB + 64 KiB, and no terminating chunk
            conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        resp = conn.getresponse()
        assert resp.status == 413
        detail = json.loads(resp.read())["detail"][0]
        assert detail["loc"] == ["body"]
        assert f"limit of {MiB} bytes" in detail["msg"]
    finally:
        conn.close()
    assert not Incident.objects.filter(project=tenant.project).exists()


def test_an_oversized_attachment_is_dropped_and_counted_and_the_event_is_kept(server):
    tenant = project_with_key("big-attachment")
    event_id = uuid.uuid4().hex
    attachment = ({"type": "attachment", "filename": "heap.bin"}, b"\0" * (2 * MiB))
    body = envelope(event_id, "CUDA error: an illegal memory access", attachment)
    status, answer, _ = post_chunked(
        server,
        f"/api/{tenant.project.pk}/envelope/",
        body,
        sentry_auth(tenant.project.sentry_key),
    )
    assert status == 200, answer
    assert answer["id"] == event_id
    assert answer["dropped"] == [
        {"item": 1, "type": "attachment", "msg": f"item is {2 * MiB} bytes; the limit is {MiB}"}
    ]
    assert Incident.objects.filter(project=tenant.project, event_id=event_id).exists()
    assert "dropped items over their limit" in server.log()


def test_an_event_item_over_its_limit_alone_is_a_413_not_a_silent_200(server):
    tenant = project_with_key("big-event")
    event_id = uuid.uuid4().hex
    body = envelope(event_id, "x" * (MiB + 10))
    status, answer, _ = post_chunked(
        server, f"/api/{tenant.project.pk}/envelope/", body, sentry_auth(tenant.project.sentry_key)
    )
    assert status == 413
    assert answer["detail"][0]["loc"] == ["body", "items", 0]


def test_a_decompression_bomb_without_a_key_is_refused(server):
    tenant = project_with_key("bomb")
    bomb = gzip.compress(b"") * 5000  # the probe: seconds of CPU before
    status, answer, _ = post_chunked(
        server,
        f"/api/{tenant.project.pk}/envelope/",
        bomb,
        {"Content-Encoding": "gzip, gzip"},
    )
    assert status == 400
    assert "gzip members" in answer["detail"][0]["msg"]


def test_deep_json_in_an_event_is_a_400_naming_the_path(server):
    tenant = project_with_key("deep-event")
    deep = {"event_id": uuid.uuid4().hex, "message": "m", "contexts": {}}
    node: dict = deep["contexts"]
    for level in range(40):
        node[f"l{level}"] = {}
        node = node[f"l{level}"]
    raw = json.dumps(deep).encode()
    body = b'{}\n{"type":"event"}\n' + raw + b"\n"
    status, answer, _ = post_chunked(
        server, f"/api/{tenant.project.pk}/envelope/", body, sentry_auth(tenant.project.sentry_key)
    )
    assert status == 400, answer
    loc = answer["detail"][0]["loc"]
    assert loc[:6] == ["body", "items", 0, "contexts", "l0", "l1"]
    assert len(loc) == 3 + 32


def test_deep_json_in_the_json_api_is_a_400_naming_the_path(server):
    tenant = project_with_key("deep-api")
    incident = shape_error(batch=2)
    incident["inference_context"] = {
        "a": {"b": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}
    }
    status, answer, _ = post_chunked(
        server,
        "/api/v1/incidents",
        json.dumps(incident).encode(),
        {**tenant.auth, "Content-Type": "application/json"},
    )
    assert status == 400, answer
    loc = answer["detail"][0]["loc"]
    assert loc[:6] == ["body", "incident", "inference_context", "a", "b", 0]
    batch = {"incidents": [shape_error(batch=1), incident]}
    status, answer, _ = post_chunked(
        server,
        "/api/v1/incidents/batch",
        json.dumps(batch).encode(),
        {**tenant.auth, "Content-Type": "application/json"},
    )
    assert status == 400, answer
    assert answer["detail"][0]["loc"][:6] == [
        "body",
        "batch",
        "incidents",
        1,
        "inference_context",
        "a",
    ]


def test_a_rate_limited_sentry_request_says_when_and_what_to_retry(client, settings):
    """Current SDKs back off per category from X-Sentry-Rate-Limits (empty = all)."""
    settings.RCA_RATE_LIMIT_PER_MINUTE = 0.001
    settings.RCA_RATE_LIMIT_BURST = 1
    tenant = project_with_key("limited")
    path = f"/api/{tenant.project.pk}/envelope/"
    auth = {"HTTP_X_SENTRY_AUTH": sentry_auth(tenant.project.sentry_key)["X-Sentry-Auth"]}
    body = envelope(uuid.uuid4().hex, "first")
    assert client.post(path, body, content_type="text/plain", **auth).status_code == 200
    resp = client.post(path, body, content_type="text/plain", **auth)
    assert resp.status_code == 429
    retry_after = int(resp["Retry-After"])
    assert retry_after > 0
    assert resp["X-Sentry-Rate-Limits"] == f"{retry_after}::project"


def test_a_ratio_bomb_is_a_413_with_a_key_and_only_its_header_line_is_read_without(server):
    tenant = project_with_key("ratio-bomb")
    bomb = gzip.compress(b"\0" * (64 * MiB))
    path = f"/api/{tenant.project.pk}/envelope/"
    status, answer, _ = post_chunked(server, path, bomb, {"Content-Encoding": "gzip"})
    assert status == 400  # no key: 64 KiB decoded looking for the header line, no more
    assert "header line is longer than 65536 bytes" in answer["detail"][0]["msg"]
    status, answer, _ = post_chunked(
        server, path, bomb, {**sentry_auth(tenant.project.sentry_key), "Content-Encoding": "gzip"}
    )
    assert status == 413
    assert "larger than 20971520 bytes once decompressed" in answer["detail"][0]["msg"]
