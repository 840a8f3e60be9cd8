"""Bodies an attacker or a broken client writes, over real HTTP: kept when they can be, else
refused with a status, the path of what is wrong and a message (found by the hardening
campaign of 2026-12-07, docs/MEASUREMENTS.md)."""

from __future__ import annotations

import json

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
