"""The Sentry endpoints read only the headers they need and encode their answer directly
(issue 19); they answer what the views that built `request.headers`, `request.GET` and a
`JsonResponse` answered (tests/integration/reference_envelope_urls.py): same status, body
and headers for generated envelopes and store bodies, malformed ones included, whichever
way the key is sent."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ingest.models import Project
from ingest.views import RequestHeaders
from tests.integration.test_ingest_fuzz import json_values

pytestmark = pytest.mark.django_db

REFERENCE_URLS = "tests.integration.reference_envelope_urls"
COMPARED_HEADERS = (
    "Content-Type",
    "Content-Length",
    "Retry-After",
    "X-Sentry-Rate-Limits",
    "WWW-Authenticate",
    "Allow",
)
CORPUS = Path(__file__).resolve().parents[1] / "data" / "sentry_events"
CORPUS_EVENTS = []
for _path in sorted(CORPUS.rglob("*.json")):
    _data = json.loads(_path.read_text(encoding="utf-8"))
    if isinstance(_data, dict):
        CORPUS_EVENTS.append(_data)
_HEX = re.compile(r"^[0-9a-f]{32}$")


@pytest.fixture
def project() -> Project:
    return Project.objects.create(name="Envelopes", slug="envelopes")


@pytest.fixture
def unlimited(settings):
    settings.RCA_RATE_LIMIT_PER_MINUTE = 0


event_ids = st.sampled_from([None, "", "not-an-id", "5d5b1e5a-7d09-4c42-9d6e-0b2f6b9a1e0c"])
events = (
    st.sampled_from(CORPUS_EVENTS)
    | st.fixed_dictionaries(
        {},
        optional={
            "event_id": event_ids,
            "message": json_values,
            "exception": json_values
            | st.just({"values": [{"type": "ValueError", "value": "bad", "stacktrace": {}}]}),
            "tags": json_values,
            "contexts": json_values,
            "breadcrumbs": json_values,
            "platform": st.sampled_from(["python", "java", 3, None]),
            "type": st.sampled_from(["transaction", "error", "event"]),
            "timestamp": st.sampled_from([1.7e9, "2024-01-01T00:00:00", "x", -1e300]),
        },
    )
    | json_values
)


@st.composite
def envelopes(draw: Any) -> bytes:
    """An envelope body: a header line, then items whose length is right, absent or wrong."""
    header = draw(
        st.fixed_dictionaries({}, optional={"event_id": event_ids, "dsn": st.just("{dsn}")})
    )
    lines = [json.dumps(header).encode()]
    for _ in range(draw(st.integers(0, 3))):
        payload = draw(events.map(lambda e: json.dumps(e).encode()) | st.binary(max_size=40))
        kind = draw(st.sampled_from(["event", "event", "transaction", "session", 7]))
        length = draw(
            st.sampled_from(["right", "right", "none", "short", "long", "negative", "text"])
        )
        item: dict[str, Any] = {"type": kind}
        if length != "none":
            item["length"] = {
                "right": len(payload),
                "short": max(len(payload) - 1, 0),
                "long": len(payload) + 5,
                "negative": -1,
                "text": "12",
            }[length]
        lines += [json.dumps(item).encode(), payload]
    body = b"\n".join(lines) + draw(st.sampled_from([b"\n", b"", b"\n\n"]))
    return draw(st.just(body) | st.binary(max_size=60) | st.just(b"") | st.just(b"{}\n[1]\n"))


encodings = st.sampled_from([None, "gzip", "gzip", "identity", "br", "bogus", "gzip-broken"])
keyed = st.sampled_from(["header", "header", "query", "dsn", "wrong", "none", "both"])


def _request(body: bytes, encoding: str | None, how: str, project: Project):
    key = project.sentry_key if how != "wrong" else "0" * 32
    body = body.replace(b"{dsn}", f"http://{key}@testserver/{project.pk}".encode())
    extra: dict[str, str] = {}
    if encoding == "gzip":
        body, extra["HTTP_CONTENT_ENCODING"] = gzip.compress(body), "gzip"
    elif encoding == "gzip-broken":
        body, extra["HTTP_CONTENT_ENCODING"] = gzip.compress(body)[:-6], "gzip"
    elif encoding:
        extra["HTTP_CONTENT_ENCODING"] = encoding
    if how in ("header", "wrong", "both"):
        extra["HTTP_X_SENTRY_AUTH"] = f"Sentry sentry_key={key}, sentry_version=7"
    query = f"?sentry_key={key}" if how in ("query", "both") else ""
    return body, query, extra


def _answer(client, kind: str, body: bytes, query: str, extra: dict[str, str], project):
    url = f"/api/{project.pk}/{kind}/{query}"
    return client.generic("POST", url, body, "application/x-sentry-envelope", **extra)


def _shown(response, sent: bytes) -> tuple[int, Any, dict[str, str | None]]:
    """Status, body and headers; an event id assigned here (not in what was sent) is
    new on each request, so it reads as `<assigned>`."""
    body = json.loads(response.content)
    if isinstance(body, dict) and "ids" in body:
        text = sent.decode("utf-8", "replace")
        seen = lambda i: i if not (isinstance(i, str) and _HEX.match(i)) or i in text else "<a>"  # noqa: E731
        body = {**body, "id": seen(body["id"]), "ids": [seen(i) for i in body["ids"]]}
    shown = {name: response.get(name) for name in COMPARED_HEADERS}
    if shown["Content-Length"] is not None and "<a>" in json.dumps(body):
        shown["Content-Length"] = "same length"  # an assigned id has the same length
    return response.status_code, body, shown


def _assert_same(client, kind, body, encoding, how, project) -> None:
    sent, query, extra = _request(body, encoding, how, project)
    served = _answer(client, kind, sent, query, extra, project)
    with override_settings(ROOT_URLCONF=REFERENCE_URLS):
        reference = _answer(client, kind, sent, query, extra, project)
    event(f"{kind} {served.status_code}")
    plain = sent if encoding != "gzip" else body
    assert _shown(served, plain) == _shown(reference, plain)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=envelopes(), encoding=encodings, how=keyed)
def test_envelope_view_answers_what_the_reference_answers(
    client, project, unlimited, body, encoding, how
):
    _assert_same(client, "envelope", body, encoding, how, project)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    body=events.map(lambda e: json.dumps(e).encode()) | st.binary(max_size=60),
    encoding=encodings,
    how=keyed,
)
def test_store_view_answers_what_the_reference_answers(
    client, project, unlimited, body, encoding, how
):
    _assert_same(client, "store", body, encoding, how, project)


def test_both_answer_429_with_the_sdk_back_off_headers(client, project, settings):
    settings.RCA_RATE_LIMIT_PER_MINUTE, settings.RCA_RATE_LIMIT_BURST = 1, 1
    body = json.dumps({"message": "m"}).encode()
    sent, query, extra = _request(body, None, "header", project)
    assert _answer(client, "store", sent, query, extra, project).status_code == 200
    served = _answer(client, "store", sent, query, extra, project)
    with override_settings(ROOT_URLCONF=REFERENCE_URLS):
        reference = _answer(client, "store", sent, query, extra, project)
    assert served.status_code == 429
    assert _shown(served, sent) == _shown(reference, sent)


@given(
    meta=st.dictionaries(
        st.sampled_from(
            ["HTTP_X_SENTRY_AUTH", "HTTP_AUTHORIZATION", "CONTENT_TYPE", "HTTP_CONTENT_TYPE",
             "HTTP_CONTENT_ENCODING", "CONTENT_LENGTH", "REMOTE_ADDR", "HTTP_X_SENTRY_AUTH_",
             "HTTP_HTTP_X_SENTRY_AUTH", "wsgi.input"]
        ),
        st.text(max_size=5),
    ),
    name=st.sampled_from(
        ["x-sentry-auth", "X-Sentry-Auth", "http_x_sentry_auth", "authorization",
         "http_authorization", "Content-Encoding", "content-type", "Content-Length",
         "remote-addr", "Http-X-Sentry-Auth", "x_sentry_auth", ""]
    ),
)  # fmt: skip
def test_request_headers_answer_what_django_request_headers_answer(meta, name):
    from django.http.request import HttpHeaders

    assert RequestHeaders(meta).get(name) == HttpHeaders(meta).get(name)
    assert dict(RequestHeaders(meta)) == dict(HttpHeaders(meta))
