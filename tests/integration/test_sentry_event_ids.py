"""Event ids as Sentry means them, found again through `GET /api/v1/incidents`, over HTTP.

An SDK returns the event id to its caller and retries with the same id; whatever the
spelling, that id must lead to one incident. What cannot be stored is refused with a
reason, never answered 200 with nothing stored.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import requests

from ingest.models import Incident
from tests.integration.test_sentry_corpus import envelope_bytes, send_envelope, send_store
from tests.support.factories import project_with_key

pytestmark = pytest.mark.django_db(transaction=True)

DASHLESS = "8f0c2e4b9a7d4c1e8b3a6f5d2c1b0a99"
DASHED = "8F0C2E4B-9A7D-4C1E-8B3A-6F5D2C1B0A99"


def error_event(**extra):
    return {
        "platform": "python",
        "exception": {"values": [{"type": "ValueError", "value": "bad batch"}]},
        **extra,
    }


@pytest.fixture
def tenant():
    return project_with_key("sdk-users")


def find(live_server, tenant, **params):
    response = requests.get(
        f"{live_server.url}/api/v1/incidents", params=params, headers=tenant.auth, timeout=10
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_dashed_and_dashless_spellings_of_one_id_are_one_incident(live_server, tenant):
    first = send_store(live_server.url, tenant.project, error_event(event_id=DASHLESS))
    retry = send_store(live_server.url, tenant.project, error_event(event_id=DASHED))

    assert first.json()["id"] == retry.json()["id"] == DASHLESS
    assert Incident.objects.filter(project=tenant.project).count() == 1
    for spelling in (DASHLESS, DASHED, DASHED.lower()):
        assert find(live_server, tenant, event_id=spelling)["count"] == 1


def test_an_event_without_id_takes_the_envelope_headers_so_a_retry_is_one_incident(
    live_server, tenant
):
    body = envelope_bytes({"event_id": DASHED}, [({"type": "event"}, error_event())])
    for _ in range(2):
        response = send_envelope(live_server.url, tenant.project, body)
        assert (response.status_code, response.json()["id"]) == (200, DASHLESS)
    [incident] = find(live_server, tenant, event_id=DASHLESS)["results"]
    assert (incident["error_type"], incident["message"]) == ("ValueError", "bad batch")


def test_an_event_with_no_id_anywhere_is_found_by_the_id_the_server_answered(live_server, tenant):
    response = send_store(live_server.url, tenant.project, error_event())
    event_id = response.json()["id"]
    assert len(event_id) == 32
    assert find(live_server, tenant, event_id=event_id)["results"][0]["event_id"] == event_id


def test_an_event_with_neither_exception_nor_message_is_kept_unlabelled(live_server, tenant):
    event = {"event_id": DASHLESS, "platform": "go", "level": "error", "exception": []}
    response = send_store(live_server.url, tenant.project, event)

    assert (response.status_code, response.json()["id"]) == (200, DASHLESS)
    [incident] = find(live_server, tenant, event_id=DASHLESS)["results"]
    assert incident["message"] == "<unlabeled event>"
    assert incident["tags"]["platform"] == "go"


@pytest.mark.parametrize("event", [{}, {"hello": "world"}])
def test_an_object_that_is_no_sentry_event_is_refused_with_the_reason(live_server, tenant, event):
    for response in (
        send_store(live_server.url, tenant.project, event),
        send_envelope(
            live_server.url, tenant.project, envelope_bytes({}, [({"type": "event"}, event)])
        ),
    ):
        assert response.status_code == 400, response.text
        [error] = response.json()["detail"]
        assert "none of the fields of a Sentry event" in error["msg"]
    assert not Incident.objects.exists()


def test_incidents_filter_by_service_issue_and_time(live_server, tenant):
    for n, service in enumerate(["ranker", "ranker", "embedder"]):
        event = error_event(event_id=f"{n:032x}", tags={"service": service})
        if service == "embedder":
            event["exception"]["values"][0]["type"] = "KeyError"
        assert send_store(live_server.url, tenant.project, event).status_code == 200
    ranker = find(live_server, tenant, service="ranker")
    assert ranker["count"] == 2
    assert {i["service"] for i in ranker["results"]} == {"ranker"}
    issue_id = ranker["results"][0]["issue_id"]
    assert find(live_server, tenant, issue_id=issue_id)["count"] == 2
    assert find(live_server, tenant, service="ranker", limit=1)["count"] == 2
    assert len(find(live_server, tenant, service="ranker", limit=1)["results"]) == 1
    later = (datetime.now(UTC) + timedelta(minutes=5)).isoformat()
    assert find(live_server, tenant, since=later) == {"count": 0, "results": []}
    other = project_with_key("someone-else")
    assert find(live_server, other, event_id=f"{0:032x}") == {"count": 0, "results": []}


def test_the_incident_list_is_documented_with_its_fields(live_server):
    schema = requests.get(f"{live_server.url}/api/v1/openapi.json", timeout=10).json()
    get = schema["paths"]["/api/v1/incidents"]["get"]
    assert {p["name"] for p in get["parameters"]} >= {"event_id", "service", "issue_id", "since"}
    ref = get["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    page = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(page["required"]) == {"count", "results"}
    item_ref = page["properties"]["results"]["items"]["$ref"]
    item = schema["components"]["schemas"][item_ref.rsplit("/", 1)[1]]
    assert {"event_id", "error_type", "message", "exceptions", "service"} <= set(item["properties"])


def test_an_envelope_event_that_is_not_an_object_is_refused_not_skipped(live_server, tenant):
    alone = envelope_bytes({}, [({"type": "event"}, ["not", "an", "event"])])
    response = send_envelope(live_server.url, tenant.project, alone)
    assert response.status_code == 400, response.text
    assert "not a JSON object" in response.json()["detail"][0]["msg"]

    mixed = envelope_bytes(
        {}, [({"type": "event"}, error_event(event_id=DASHLESS)), ({"type": "event"}, 42)]
    )
    response = send_envelope(live_server.url, tenant.project, mixed)
    assert response.status_code == 200, response.text
    assert response.json()["ids"] == [DASHLESS]
    assert response.json()["rejected"] == [{"item": 1, "msg": "the event is not a JSON object"}]


def test_model_and_gpu_sent_as_tags_and_contexts_name_the_issues_model(live_server, tenant):
    event = error_event(
        event_id=DASHLESS,
        tags={"service": "ranker", "model": "ranker-v3", "model.version": "3.1"},
        contexts={"gpu": {"name": "NVIDIA A10G"}},
    )
    assert send_store(live_server.url, tenant.project, event).status_code == 200

    [incident] = find(live_server, tenant, event_id=DASHLESS)["results"]
    said = {key: value for key, value in incident["inference_context"].items() if value}
    assert said == {
        "model_id": "ranker-v3",
        "model_version": "3.1",
        "device": "NVIDIA A10G",
    }
    issues = requests.get(
        f"{live_server.url}/api/v1/issues",
        params={"model_id": "ranker-v3"},
        headers=tenant.auth,
        timeout=10,
    ).json()
    assert [issue["id"] for issue in issues["results"]] == [incident["issue_id"]]


@pytest.mark.parametrize(
    "params",
    [{"offset": 2**63}, {"offset": 10**20}, {"limit": 10**30}, {"issue_id": 10**20},
     {"event_id": "\x00"}, {"service": "ranker\x00"}],
)  # fmt: skip
def test_odd_incident_queries_answer_an_empty_page_not_a_500(live_server, tenant, params):
    assert find(live_server, tenant, **params) == {"count": 0, "results": []}


def test_a_service_stored_with_a_nul_is_found_by_the_same_name(live_server, tenant):
    event = error_event(event_id=DASHLESS, tags={"service": "ranker\x00eu"})
    assert send_store(live_server.url, tenant.project, event).status_code == 200
    assert find(live_server, tenant, service="ranker\x00eu")["count"] == 1
