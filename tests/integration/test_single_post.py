"""`POST /api/v1/incidents` is a plain Django view (issue 19) that answers what django-ninja's
operation answered: same status, body and headers for any body, header or key."""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.test_ingest_fuzz import json_values, payloads
from tests.support.factories import project_with_key

pytestmark = pytest.mark.django_db

#: The URL map without the plain view: the path's POST reaches ninja's operation.
NINJA_URLS = "tests.integration.ninja_incident_urls"
COMPARED_HEADERS = ("Content-Type", "WWW-Authenticate", "Retry-After", "Allow")


@contextmanager
def _through_ninja():
    with override_settings(ROOT_URLCONF=NINJA_URLS):
        yield


def _post(client, body: bytes, content_type: str, headers: dict[str, str]):
    return client.generic("POST", "/api/v1/incidents", body, content_type, **headers)


def _answers(client, body: bytes, content_type: str, headers: dict[str, str]):
    plain = _post(client, body, content_type, headers)
    with _through_ninja():
        ninja = _post(client, body, content_type, headers)
    return plain, ninja


def _assert_same(plain, ninja) -> None:
    for name in COMPARED_HEADERS:
        assert plain.get(name) == ninja.get(name), name
    if plain.status_code < 300:  # both accepted: ninja's is a retry of the same event id
        assert ninja.status_code in (200, 202)
        assert json.loads(plain.content).keys() == json.loads(ninja.content).keys()
        return
    assert (plain.status_code, json.loads(plain.content)) == (
        ninja.status_code,
        json.loads(ninja.content),
    )


@pytest.fixture
def key() -> str:
    return project_with_key("plain-post").key


@pytest.fixture
def unlimited(settings):
    settings.RCA_RATE_LIMIT_PER_MINUTE = 0


headers = st.fixed_dictionaries(
    {},
    optional={
        "HTTP_IDEMPOTENCY_KEY": st.sampled_from(["retry-1", "", "no spaces", "x" * 65, "a:b.c"]),
        "HTTP_AUTHORIZATION": st.sampled_from(["", "Bearer", "Basic abc", "Bearer rc_x_y"]),
    },
)
bodies = (
    payloads.map(lambda p: json.dumps(p).encode())
    | json_values.map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=200)
    | st.just(b"[" * 40 + b"]" * 40)
    | st.just(json.dumps({"service": "s", "message": "m", "tags": {"a": [[[[[[]]]]]]}}).encode())
    | st.just(json.dumps({"service": "s", "message": "m", "event_id": "same-id-1"}).encode())
    | st.just(b"")
    | st.sampled_from([b"null", b"[]", b"0", b'"incident"', b"true"])
)
content_types = st.sampled_from(["application/json", "text/plain", "", "APPLICATION/JSON"])


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    body=bodies,
    content_type=content_types,
    sent=headers,
    keyed=st.sampled_from(["", "Bearer {}", "bearer {}", "BEARER  {}", "Bearer {} x", "Token {}"]),
)
def test_plain_view_answers_what_ninja_answers(
    client, key, unlimited, body, content_type, sent, keyed
):
    sent = dict(sent)
    if keyed and "HTTP_AUTHORIZATION" not in sent:
        sent["HTTP_AUTHORIZATION"] = keyed.format(key)
    _assert_same(*_answers(client, body, content_type, sent))


def test_both_refuse_a_deep_body_at_its_path(client, key):
    body = json.dumps({"service": "s", "tags": {"a": json.loads("[" * 40 + "]" * 40)}}).encode()
    plain, ninja = _answers(
        client, body, "application/json", {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    )
    _assert_same(plain, ninja)
    assert plain.status_code == 400
    assert json.loads(plain.content)["detail"][0]["loc"][:4] == ["body", "incident", "tags", "a"]


def test_both_answer_a_field_error_under_body_incident(client, key):
    body = json.dumps({"service": "", "message": "m"}).encode()
    plain, ninja = _answers(
        client, body, "application/json", {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    )
    _assert_same(plain, ninja)
    assert json.loads(plain.content)["detail"][0]["loc"] == ["body", "incident", "service"]


def test_both_answer_429_over_the_rate_limit(client, key, settings):
    settings.RCA_RATE_LIMIT_PER_MINUTE, settings.RCA_RATE_LIMIT_BURST = 1, 1
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    first = _post(
        client, json.dumps({"service": "s", "message": "m"}).encode(), "application/json", auth
    )
    assert first.status_code == 202
    body = json.dumps({"service": "s", "message": "again"}).encode()
    plain, ninja = _answers(client, body, "application/json", auth)
    assert plain.status_code == 429
    _assert_same(plain, ninja)


def test_accepted_then_retried_answers_202_then_200(client, key, unlimited):
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}", "HTTP_IDEMPOTENCY_KEY": "once-only"}
    body = json.dumps({"service": "s", "message": "m"}).encode()
    first = _post(client, body, "application/json", auth)
    again = _post(client, body, "application/json", auth)
    assert (first.status_code, again.status_code) == (202, 200)
    assert first["Content-Type"] == "application/json; charset=utf-8"
    one, two = json.loads(first.content), json.loads(again.content)
    assert list(one) == ["incident_id", "issue_id", "event_id", "url", "duplicate"]
    assert (one["event_id"], one["duplicate"], two["duplicate"]) == ("once-only", False, True)


def test_other_methods_of_the_path_are_ninjas(client, key):
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    assert client.get("/api/v1/incidents", **auth).status_code == 200
    refused = client.put("/api/v1/incidents", b"{}", content_type="application/json", **auth)
    assert refused.status_code == 405
    assert refused["Allow"] == "GET, POST"


def test_the_docs_still_document_the_post(client):
    schema = json.loads(client.get("/api/v1/openapi.json").content)
    post = schema["paths"]["/api/v1/incidents"]["post"]
    assert {"202", "200", "400", "401", "413", "415", "429", "503"} <= set(post["responses"])
    assert "requestBody" in post


def test_security_middleware_still_applies(key):
    from django.test import Client

    body = json.dumps({"service": "s", "message": "m"}).encode()
    csrf_checked = Client(enforce_csrf_checks=True)  # exempt: a keyed machine client
    answer = _post(csrf_checked, body, "application/json", {"HTTP_AUTHORIZATION": f"Bearer {key}"})
    assert answer.status_code == 202
    assert answer["X-Content-Type-Options"] == "nosniff"
    stranger = _post(
        csrf_checked,
        body,
        "application/json",
        {"HTTP_HOST": "evil.example", "HTTP_AUTHORIZATION": f"Bearer {key}"},
    )
    assert stranger.status_code == 400
