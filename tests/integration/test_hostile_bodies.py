"""Bodies an attacker or a broken client writes, over real HTTP: kept when they can be, else
refused with a status, the path of what is wrong and a message (found by the hardening
campaign of 2026-12-07, docs/MEASUREMENTS.md)."""

from __future__ import annotations

import gzip
import json
import zlib

import pytest
import requests

from ingest.models import Incident
from tests.support.factories import project_with_key

pytestmark = pytest.mark.django_db(transaction=True)

#: A UTF-16 string cut between the halves of a pair, as JSON writes it (valid JSON).
HALF_PAIR = '"loss went NaN \\ud83d at step 1200"'


@pytest.fixture
def tenant():
    return project_with_key("hostile")


def _post(live_server, tenant, path: str, body: bytes, coding: str = "") -> requests.Response:
    headers = {**tenant.auth, "Content-Type": "application/json"}
    if coding:
        headers["Content-Encoding"] = coding
    return requests.post(f"{live_server.url}{path}", data=body, headers=headers, timeout=10)


def test_a_lone_surrogate_in_a_typed_field_is_kept_as_a_replacement_character(live_server, tenant):
    single = f'{{"service": "trainer\\udc80", "message": {HALF_PAIR}, "tags": {{"k": "\\ud800"}}}}'
    answer = _post(live_server, tenant, "/api/v1/incidents", single.encode())
    assert answer.status_code == 202, answer.text
    incident = Incident.objects.get(pk=answer.json()["incident_id"])
    assert incident.message == "loss went NaN \ufffd at step 1200"
    assert (incident.service, incident.tags) == ("trainer\ufffd", {"k": "\ufffd"})

    batch = f'{{"incidents": [{{"service": "s", "message": {HALF_PAIR}}}]}}'
    answer = _post(live_server, tenant, "/api/v1/incidents/batch", batch.encode())
    assert answer.status_code == 202, answer.text
    assert answer.json()["accepted"] == 1

    record = {
        "attributes": [
            {"key": "exception.type", "value": {"stringValue": "ValueError"}},
            {"key": "exception.message", "value": {"stringValue": "otlp \ud800 half"}},
        ]
    }
    export = {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}
    answer = _post(live_server, tenant, "/otlp/v1/logs", json.dumps(export).encode())
    assert answer.status_code == 200, answer.text
    assert "partialSuccess" not in answer.json(), answer.text
    assert Incident.objects.filter(message="otlp \ufffd half").exists()


@pytest.mark.parametrize(
    ("body", "wanted"),
    [
        (b'{"service": "s", "message": "m"', "not valid JSON"),
        (b'{"service": "s", "message": "\xff\xfe"}', "not valid JSON"),
    ],
)
def test_a_body_that_is_not_json_is_refused_naming_the_body_and_why(
    live_server, tenant, body, wanted
):
    for path in ("/api/v1/incidents", "/api/v1/incidents/batch", "/api/v1/alertmanager"):
        answer = _post(live_server, tenant, path, body)
        assert answer.status_code == 400, (path, answer.text)
        [problem] = answer.json()["detail"]
        assert problem["loc"] == ["body"], (path, problem)
        assert wanted in problem["msg"], (path, problem)


def test_a_compressed_json_body_is_decoded_within_the_body_limit(live_server, tenant, settings):
    payload = json.dumps({"service": "s", "message": "sent gzipped"}).encode()
    for coding, packed in (("gzip", gzip.compress(payload)), ("deflate", zlib.compress(payload))):
        answer = _post(live_server, tenant, "/api/v1/incidents", packed, coding)
        assert answer.status_code == 202, (coding, answer.text)
    bomb = gzip.compress(b'{"service": "s", "message": "' + b"x" * (2 * 1024 * 1024) + b'"}')
    answer = _post(live_server, tenant, "/api/v1/incidents", bomb, "gzip")
    assert answer.status_code == 413, answer.text
    assert answer.json()["detail"][0]["loc"] == ["body"]
    answer = _post(live_server, tenant, "/api/v1/incidents", payload, "lzma")
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"][0]["loc"] == ["header", "Content-Encoding"]


def _envelope_of(events: int) -> bytes:
    item = b'{"type": "event"}\n{"message": "one of many"}'
    return b"\n".join([b"{}", *[item] * events])


def test_an_envelope_spends_a_token_per_event_and_carries_at_most_a_batch(
    live_server, tenant, settings
):
    """One request under one token stored as many events as 20 MiB holds."""
    settings.RCA_RATE_LIMIT_PER_MINUTE = 0.001
    settings.RCA_RATE_LIMIT_BURST = 4
    path = f"{live_server.url}/api/{tenant.project.pk}/envelope/"
    auth = {"X-Sentry-Auth": f"Sentry sentry_key={tenant.project.sentry_key}, sentry_version=7"}
    answer = requests.post(path, data=_envelope_of(5), headers=auth, timeout=10)
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"][0]["loc"] == ["body", "items", 4]
    first = requests.post(path, data=_envelope_of(2), headers=auth, timeout=10)
    assert first.status_code == 200, first.text
    again = requests.post(path, data=_envelope_of(2), headers=auth, timeout=10)
    assert again.status_code == 429, again.text
    assert Incident.objects.filter(project=tenant.project).count() == 2


def test_too_many_alerts_are_counted_before_any_is_validated(live_server, tenant, settings):
    """300,000 invalid alerts (900 KB) cost 7 s of validation, and an error for each, before
    the count was looked at; now the count answers first."""
    settings.RCA_MAX_BATCH = 5
    body = {"version": "4", "status": "firing", "alerts": [{}] * 6}
    answer = _post(live_server, tenant, "/api/v1/alertmanager", json.dumps(body).encode())
    assert answer.status_code == 400, answer.text
    [problem] = answer.json()["detail"]
    assert problem["loc"] == ["body", "payload", "alerts"]
    assert problem["msg"].startswith("6 alerts; send at most 5 per request")


@pytest.mark.parametrize(
    "path", ["/api/v1/incidents", "/api/v1/incidents/batch", "/otlp/v1/logs", "/api/1/envelope/"]
)
def test_a_host_this_instance_does_not_serve_is_named_in_the_api_error(live_server, tenant, path):
    """Django's bare HTML 400 left an SDK's operator guessing; nothing is stored."""
    headers = {**tenant.auth, "Content-Type": "application/json", "Host": "rootcause.evil.example"}
    answer = requests.post(f"{live_server.url}{path}", data=b"{}", headers=headers, timeout=10)
    assert answer.status_code == 400
    assert answer.headers["Content-Type"] == "application/json"
    (item,) = answer.json()["detail"]
    assert item["loc"] == ["header", "Host"]
    assert "ALLOWED_HOSTS" in item["msg"]
    assert not Incident.objects.exists()


def test_a_page_asked_for_with_an_unserved_host_keeps_djangos_own_answer(live_server):
    answer = requests.get(f"{live_server.url}/", headers={"Host": "evil.example"}, timeout=10)
    assert answer.status_code == 400
    assert answer.headers["Content-Type"].startswith("text/html")
